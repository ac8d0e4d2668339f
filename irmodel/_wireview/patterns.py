"""Every regular expression of the byte readers, built here from named fragments.

As tomli's ``_re.py`` and h11's ``_abnf.py`` do: the pieces of wire syntax the readers
match (a one-byte tag, a field of a one-byte length, a varint) are named once, each
pattern is written from them, and `compiled` is the one pattern cache.  A compiled
pattern is also kept between processes by the code cache
(`irmodel._files.codecache.compiled_pattern`): compiling one of these (a branch per
field length) costs 20-40 ms, most of a small check, and importing `re` for it more.

The shape that makes these fast: a field is its tag, a length byte and exactly that many
bytes, one alternation branch per length.  The length byte selects the one branch that
can match there (each starts with its own byte and then has no choice), so nothing
backtracks and no atomic group is needed; repetitions are possessive (``*+``, ``?+``:
Python 3.11's engine).  A field of 128 bytes or more does not match: its node or tensor
takes the message path.
"""

from __future__ import annotations

from . import fields as F

# -- fragments -------------------------------------------------------------------------------


def byte(value: int) -> bytes:
    """The pattern of one byte."""
    return b"\\x%02x" % value


def one_of(values) -> bytes:
    """A class of bytes."""
    return b"[" + b"".join(map(byte, values)) + b"]"


def field_body(order=range(128)) -> bytes:
    """A one-byte length (0-127) and that many bytes: one branch per length, in ``order``."""
    return b"(?:" + b"|".join(byte(n) + (b".{%d}" % n if n else b"") for n in order) + b")"


#: A field of a one-byte length (the lengths tried from 0 up).
SHORT_BODY = field_body()
#: A length of one byte, or two whose second is not zero (shortest form), up to 16383.
SHORT_LENGTH = rb"(?:[\x00-\x7f]|[\x80-\xff][\x01-\x7f])"
#: A varint of one to ten bytes.
VARINT = rb"[\x80-\xff]{0,9}[\x00-\x7f]"
#: A one-byte varint.
SMALL_VARINT = rb"[\x00-\x7f]"


def fields(tag: int, body: bytes = SHORT_BODY) -> bytes:
    """Any number of fields of ``tag`` (possessive)."""
    return b"(?:" + byte(tag) + body + b")*+"


def optional(tag: int, body: bytes = SHORT_BODY) -> bytes:
    return b"(?:" + byte(tag) + body + b")?+"


# -- patterns --------------------------------------------------------------------------------

#: The order in which the node-run pattern tries a name's length: nearest to 40 bytes
#: first, where the names torch exporters write cluster
#: (``/transformer/h.0/attn/Constant_output_0``): fewer branches tried per name.
_NAME_LENGTHS = sorted(range(128), key=lambda n: (abs(n - 40), n))


def _node() -> bytes:
    """A NodeProto in the order exporters write its fields, each of a one-byte length.

    Groups: 1 the input fields, 2 the output fields, 3 the node's *kind* (op_type to
    domain: everything but its names), within it 4 the op_type field, 5 the attribute
    fields, 6 the domain field.  `irmodel._wireview.nodes` reads the groups.
    """
    return (b"(" + fields(F.NODE_INPUT) + b")"
            + b"(" + fields(F.NODE_OUTPUT) + b")"
            + optional(F.NODE_NAME)
            + b"((" + byte(F.NODE_OP_TYPE) + SHORT_BODY + b")"
            + b"(" + fields(F.NODE_ATTRIBUTE) + b")"
            + optional(F.NODE_DOC_STRING)
            + b"(" + byte(F.NODE_DOMAIN) + SHORT_BODY + b")?+)")


def _node_run() -> bytes:
    """One GraphProto ``node`` field: its tag, its length (one or two bytes) and a
    NodeProto made of length-delimited fields of one-byte tags and lengths, names first.
    Group 1 is the whole field, group 2 the node's kind (every field after the leading
    names).  A kind's fields may have any one-byte LEN tag but the node's ``input`` tag,
    which is the graph's ``node`` tag and would run into the next node
    (`irmodel._wireview.nodescan.count_ops`)."""
    names = one_of((F.NODE_INPUT, F.NODE_OUTPUT, F.NODE_NAME))
    kind_tags = one_of(t for t in F.SHORT_LEN_TAGS if t != F.GRAPH_NODE)
    assert F.NODE_INPUT == F.GRAPH_NODE  # why the kind leaves it out
    return (b"(" + byte(F.GRAPH_NODE) + SHORT_LENGTH
            + b"(?:" + names + field_body(_NAME_LENGTHS) + b")*+"
            + b"((?:" + kind_tags + SHORT_BODY + b")*+))")


def _initializer_head() -> bytes:
    """A TensorProto's head as exporters write it: unpacked dims (group 1), data_type of one
    byte (group 2), the name field's length byte and bytes (group 3); raw_data follows
    (read apart, `irmodel._wireview.tensorscan.initializer_head`)."""
    return (b"(" + fields(F.TENSOR_DIMS_ONE_TAG, VARINT) + b")"
            + b"(" + byte(F.TENSOR_DATA_TYPE_TAG) + SMALL_VARINT + b")?+"
            + byte(F.TENSOR_NAME_TAG) + b"(" + SHORT_BODY + b")")


def _overlong_varint() -> bytes:
    """Ten bytes with the continuation bit: a varint longer than protobuf reads
    (`irmodel._report.dump` checks packed varints with it before showing their values)."""
    return rb"[\x80-\xff]{10}"


#: name -> (source builder, compiled only where the code cache can keep it).
_SOURCES = {
    "node": (_node, False),
    "node-run": (_node_run, True),
    "initializer-head": (_initializer_head, False),
    "overlong-varint": (_overlong_varint, False),
}
_COMPILED: dict = {}


def compiled(name: str):
    """The compiled pattern ``name`` (one of `_SOURCES`), made on first use; None for one
    compiled only where it is kept (``node-run``) when the code cache cannot keep it or the
    engine has no possessive repeats."""
    try:
        return _COMPILED[name]
    except KeyError:
        pass
    from .._files import codecache  # noqa: PLC0415 - imported by irmodel.messages already

    build, only_if_kept = _SOURCES[name]
    try:
        pattern = codecache.compiled_pattern(name, build(), codecache.DOTALL, only_if_kept=only_if_kept)
    except Exception:  # noqa: BLE001 - an engine without possessive repeats (before 3.11)
        if not only_if_kept:
            raise
        pattern = None
    _COMPILED[name] = pattern
    return pattern


def source(name: str) -> bytes:
    """The source of pattern ``name`` (for tests of the code cache)."""
    return _SOURCES[name][0]()


def forget() -> None:
    """Drop the compiled patterns (tests of the code cache)."""
    _COMPILED.clear()
