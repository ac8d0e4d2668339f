"""A structure mutator: libprotobuf-mutator's operations on our lazy messages.

The wire mutator (`irmodel.fuzz.wire`) breaks the encoding; this one keeps it valid and
changes the *content*: the mutant always decodes, with one field added, deleted, changed,
copied or cloned, or taken from a second input (crossover).  Which fields exist, their
kinds and value ranges come from the message specs (``MessageSpec``/``FieldSpec``), so
the mutator works on any registry; ONNX is only its default root type.

Each operation returns a `Mutation` naming the message it edited (a path of ``(field,
index)`` steps from the root, index -1 for a singular field) and the field, so tests can
check that the mutant differs from its input exactly there.  Mutation kinds:

- ``add_field``: an absent singular field set, or one element appended to a repeated field;
- ``delete_field``: a present singular field cleared, or one element of a repeated field removed;
- ``mutate_field``: one scalar value replaced (integers at the edges of their kind, floats
  including NaN and infinities, strings and bytes, enums inside and outside their range);
- ``copy_field``: a field's value replaced by a copy of another field of the same type;
- ``clone_field``: a copy of an existing value of the same type appended to a repeated field;
- crossover (`StructureMutator.crossover`): a field of one input replaced by, or extended
  with, the same field of a message of the same type in the other input.

Post-processors run after each mutation on the root (as libprotobuf-mutator's do):
`plausible_versions` keeps ``ir_version`` and the default opset import in ranges
runtimes accept, so mutants get past the first check; `defined_names` points node
inputs that name nothing at a value that exists.  Mutants of inputs that do not decode
are made by the wire mutator instead.
"""

from __future__ import annotations

import math
from typing import Any, Callable, NamedTuple

from wirefmt import DecodeError, EncodeError, Registry
from wirefmt.schema import BOOL, BYTES, DOUBLE, ENUM, FLOAT, GROUP, INT_RANGE, MESSAGE, STRING, VARINT

from .rng import FastRandom

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .wire import WireMutator

_MAX_SITES = 4096  # messages looked at per mutation: bounds the walk of a huge model
_MAX_NEW_DEPTH = 3  # nesting of a freshly made message
INTERESTING_FLOATS = (0.0, -0.0, 1.0, -1.0, math.nan, math.inf, -math.inf, 1e-45, 3.4028234663852886e38,
                      5e-324, 1.7976931348623157e308, 0.5)
INTERESTING_STRINGS = ("", "a", "x" * 300, "\u00e9\u4e2d\U0001f600", "\x00", "input", "output", "ai.onnx",
                       "com.microsoft", "../etc/passwd", " ", "%s%n")
INTERESTING_BYTES = (b"", b"\x00", b"\xff" * 8, b"\x80", bytes(range(16)))


class Mutation(NamedTuple):
    """What one operation changed: ``kind``, the edited message's ``path`` from the root
    (``(field name, index)`` steps, index -1 for a singular field), the ``field`` name and
    ``detail`` (the element index touched, the source path of a copy, the new value...)."""

    kind: str
    path: tuple
    field: str
    detail: dict


# -- values of each kind -------------------------------------------------------------------

def _int_value(kind: int, rng) -> int:
    lo, hi = INT_RANGE[kind]
    return rng.choice((lo, hi, 0, 1, -1 if lo < 0 else 2, lo + 1, hi - 1, rng.randint(-8, 8) if lo < 0
                       else rng.randint(0, 16), rng.randint(lo, hi)))


def scalar_value(kind: int, rng, enum_values: tuple = ()):
    """A value of a scalar field kind, biased to edges (in range for the kind)."""
    if kind in (FLOAT, DOUBLE):
        return rng.choice(INTERESTING_FLOATS) if rng.random() < 0.7 else rng.uniform(-1e6, 1e6)
    if kind == BOOL:
        return rng.random() < 0.5
    if kind == STRING:
        if rng.random() < 0.6:
            return rng.choice(INTERESTING_STRINGS)
        return "".join(chr(rng.choice((rng.randint(32, 126), rng.randint(0x80, 0x7ff), rng.randint(0x800, 0xd7ff))))
                       for _ in range(rng.randint(0, 12)))
    if kind == BYTES:
        return rng.choice(INTERESTING_BYTES) if rng.random() < 0.5 else rng.randbytes(rng.randint(0, 16))
    if kind == ENUM:
        return rng.choice(enum_values)
    return _int_value(kind, rng)


def _enum_values(cls, f) -> tuple:
    return tuple(sorted(set(cls._registry.enum(f.type_name).values.values())))


def random_message(cls, rng, depth: int = 0):
    """A new message of ``cls`` with a few fields set at random (nesting bounded)."""
    msg = cls()
    fields = cls._spec.fields
    for _ in range(rng.randint(0, 3)):
        f = rng.choice(fields)
        if f.kind in (MESSAGE, GROUP) and depth >= _MAX_NEW_DEPTH:
            continue
        _add(msg, f, rng, depth)
    return msg


def _new_value(msg, f, rng, depth: int = 0):
    if f.kind in (MESSAGE, GROUP):
        return random_message(msg._classes[f.name], rng, depth + 1)
    return scalar_value(f.kind, rng, _enum_values(type(msg), f) if f.kind == ENUM else ())


def _add(msg, f, rng, depth: int = 0) -> int:
    """Set absent singular ``f`` or append to repeated ``f``; the element index (-1: singular)."""
    value = _new_value(msg, f, rng, depth)
    if f.repeated:
        seq = getattr(msg, f.name)
        seq.append(value)
        return len(seq) - 1
    setattr(msg, f.name, value)
    return -1


# -- the tree of messages ------------------------------------------------------------------

def _sites(root, limit: int = _MAX_SITES) -> list:
    """``(path, message)`` of the root and every message under it (breadth first, bounded)."""
    out: list[tuple[tuple, Any]] = [((), root)]
    i = 0
    while i < len(out) and len(out) < limit:
        path, msg = out[i]
        i += 1
        for f in _message_fields(msg._spec):
            if not _present(msg, f):
                continue
            if f.repeated:
                for j, child in enumerate(getattr(msg, f.name)):
                    out.append((path + ((f.name, j),), child))
            else:
                out.append((path + ((f.name, -1),), getattr(msg, f.name)))
    return out


_MESSAGE_FIELDS: dict = {}


def _message_fields(spec) -> tuple:
    """The message-typed fields of a spec (cached: the walk visits thousands of messages)."""
    fields = _MESSAGE_FIELDS.get(spec.name)
    if fields is None:
        fields = _MESSAGE_FIELDS[spec.name] = tuple(f for f in spec.fields if f.kind in (MESSAGE, GROUP))
    return fields


def _present(msg, f) -> bool:
    if f.repeated:
        return len(getattr(msg, f.name)) > 0
    return msg.HasField(f.name)


def _oneof_taken(msg, f) -> bool:
    """Whether another member of ``f``'s oneof is set: setting ``f`` would clear it too, a
    second change the operation does not claim."""
    if not f.oneof:
        return False
    return any(n != f.name and msg.HasField(n) for n in msg._spec.oneofs[f.oneof])


def _same_type(a, fa, b, fb) -> bool:
    return fa.kind == fb.kind and (fa.type_name == fb.type_name if fa.kind in (MESSAGE, GROUP, ENUM) else True)


def _value_copy(msg, f, value):
    if f.kind in (MESSAGE, GROUP):
        c = msg._classes[f.name]()
        c.CopyFrom(value)
        return c
    return value


# -- the operations ------------------------------------------------------------------------

def add_field(root, rng, sites) -> Mutation | None:
    path, msg = rng.choice(sites)
    fields = [f for f in msg._spec.fields if f.repeated or not (_present(msg, f) or _oneof_taken(msg, f))]
    if not fields:
        return None
    f = rng.choice(fields)
    index = _add(msg, f, rng)
    return Mutation("add_field", path, f.name, {"index": index})


def delete_field(root, rng, sites) -> Mutation | None:
    path, msg = rng.choice(sites)
    fields = [f for f in msg._spec.fields if _present(msg, f)]
    if not fields:
        return None
    f = rng.choice(fields)
    if f.repeated:
        seq = getattr(msg, f.name)
        index = rng.randrange(len(seq))
        del seq[index]
        return Mutation("delete_field", path, f.name, {"index": index})
    msg.ClearField(f.name)
    return Mutation("delete_field", path, f.name, {"index": -1})


def _out_of_range_enum(msg, f, rng) -> int:
    """Write a value outside a closed enum's range for ``f``: the only way the message layer
    allows is merging it from the wire, where it lands in the unknown fields."""
    from wirefmt import encode_varint  # noqa: PLC0415
    known = set(_enum_values(type(msg), f))
    value = rng.choice((max(known) + 1, min(known) - 1, 1 << 20, (1 << 31) - 1, -(1 << 31)))
    if value in known:
        value = max(known) + 1
    tag = encode_varint(f.number << 3 | VARINT)
    msg.ClearField(f.name)
    msg.MergeFrom(type(msg).FromString(tag + encode_varint(value & ((1 << 64) - 1))))
    return value


def mutate_field(root, rng, sites) -> Mutation | None:
    candidates = [(p, m, f) for p, m in sites for f in m._spec.fields
                  if f.kind not in (MESSAGE, GROUP) and _present(m, f)]
    if not candidates:
        return None
    enums = [c for c in candidates if c[2].kind == ENUM]
    path, msg, f = rng.choice(enums if enums and rng.random() < 0.2 else candidates)
    if f.kind == ENUM and not f.repeated and rng.random() < 0.5:
        value = _out_of_range_enum(msg, f, rng)
        return Mutation("mutate_field", path, f.name, {"index": -1, "value": value, "out_of_range": True})
    value = _new_value(msg, f, rng)
    if f.repeated:
        seq = getattr(msg, f.name)
        index = rng.randrange(len(seq))
        seq[index] = value
    else:
        index = -1
        setattr(msg, f.name, value)
    return Mutation("mutate_field", path, f.name, {"index": index, "value": value, "out_of_range": False})


def _field_values(sites) -> list:
    """``(path, message, field, index, value)`` of every present value (elements one by one)."""
    out: list[tuple] = []
    for p, m in sites:
        for f in m._spec.fields:
            if not _present(m, f):
                continue
            if f.repeated:
                out.extend((p, m, f, j, v) for j, v in enumerate(getattr(m, f.name)))
            else:
                out.append((p, m, f, -1, getattr(m, f.name)))
    return out


def copy_field(root, rng, sites) -> Mutation | None:
    values = _field_values(sites)
    if not values:
        return None
    sp, sm, sf, si, value = rng.choice(values)
    targets = [(p, m, f) for p, m in sites for f in m._spec.fields
               if _same_type(sm, sf, m, f) and not f.repeated and not (m is sm and f is sf)
               and not _oneof_taken(m, f)
               and not _is_ancestor_or_self(p, sp)]
    if not targets:
        return None
    path, msg, f = rng.choice(targets)
    setattr(msg, f.name, _value_copy(msg, f, value))
    return Mutation("copy_field", path, f.name, {"index": -1, "source": (sp, sf.name, si)})


def _is_ancestor_or_self(path: tuple, other: tuple) -> bool:
    """Whether the message at ``path`` contains (or is) the one at ``other``: copying into it
    would rewrite the source while it is read."""
    return other[:len(path)] == path


def clone_field(root, rng, sites) -> Mutation | None:
    values = _field_values(sites)
    if not values:
        return None
    sp, sm, sf, si, value = rng.choice(values)
    targets = [(p, m, f) for p, m in sites for f in m._spec.fields if f.repeated and _same_type(sm, sf, m, f)]
    if not targets:
        return None
    path, msg, f = rng.choice(targets)
    seq = getattr(msg, f.name)
    seq.append(_value_copy(msg, f, value))
    return Mutation("clone_field", path, f.name, {"index": len(seq) - 1, "source": (sp, sf.name, si)})


#: The operations by kind name, each ``(root, rng, sites) -> Mutation | None`` (None: nothing
#: in this message tree it applies to).
OPERATIONS: dict[str, Callable] = {
    "add_field": add_field,
    "delete_field": delete_field,
    "mutate_field": mutate_field,
    "copy_field": copy_field,
    "clone_field": clone_field,
}


def crossover_messages(a, b, rng) -> Mutation | None:
    """Edit ``a`` in place with a field of a same-typed message of ``b`` (replaced or appended)."""
    sites_a = _sites(a)
    by_type: dict = {}
    for p, m in _sites(b):
        by_type.setdefault(m._type_name, []).append((p, m))
    pairs = [(p, m) for p, m in sites_a if m._type_name in by_type]
    for _ in range(8):
        if not pairs:
            return None
        path, msg = rng.choice(pairs)
        bp, other = rng.choice(by_type[msg._type_name])
        fields = [f for f in other._spec.fields if _present(other, f) and not _oneof_taken(msg, f)]
        if not fields:
            continue
        f = rng.choice(fields)
        if f.repeated:
            src = getattr(other, f.name)
            j = rng.randrange(len(src))
            seq = getattr(msg, f.name)
            seq.append(_value_copy(msg, f, src[j]))
            return Mutation("crossover", path, f.name, {"index": len(seq) - 1, "source": (bp, f.name, j)})
        setattr(msg, f.name, _value_copy(msg, f, getattr(other, f.name)))
        return Mutation("crossover", path, f.name, {"index": -1, "source": (bp, f.name, -1)})
    return None


# -- post-processors -----------------------------------------------------------------------

def plausible_versions(root, rng) -> None:
    """A ModelProto's ``ir_version`` in 3..IR_VERSION and a default-domain opset import in
    7..the newest: mutants then get past every runtime's first check."""
    if getattr(root, "_type_name", "") != "ModelProto":
        return
    from irmodel import IR_VERSION, defs  # noqa: PLC0415
    newest = defs.onnx_opset_version()
    if not 3 <= root.ir_version <= IR_VERSION:
        root.ir_version = rng.randint(7, IR_VERSION)
    default = [o for o in root.opset_import if o.domain in ("", "ai.onnx")]
    if not default:
        root.opset_import.add(domain="", version=rng.randint(7, newest))
    for o in default:
        if not 1 <= o.version <= newest:
            o.version = rng.randint(7, newest)


def defined_names(root, rng) -> None:
    """Every node input of a ModelProto's main graph that names no value (graph input,
    initializer, an earlier node's output) renamed to one that exists."""
    if getattr(root, "_type_name", "") != "ModelProto" or not root.HasField("graph"):
        return
    g = root.graph
    known = [vi.name for vi in g.input] + [t.name for t in g.initializer]
    seen = set(known)
    for node in g.node:
        for i, name in enumerate(node.input):
            if name and name not in seen and known:
                node.input[i] = rng.choice(known)
        for out in node.output:
            if out and out not in seen:
                seen.add(out)
                known.append(out)


#: Post-processors run on the root after every mutation, in order, when none are given.
DEFAULT_POST_PROCESSORS = (plausible_versions, defined_names)


class StructureMutator:
    """Mutates serialized messages of ``root_type`` through our message layer; see the module
    docstring.  ``StructureMutator(seed)`` draws from its own generator (each call advances
    it); the module-level `custom_mutator` is a pure function of its arguments instead.

    ``kinds`` restricts the operations (default: all of `OPERATIONS`); ``post_processors``
    are functions ``(root, rng)`` run after each mutation (default: `DEFAULT_POST_PROCESSORS`;
    ``()`` for none).
    """

    def __init__(self, seed: int = 0, *, registry: Registry | None = None, root_type: str = "ModelProto",
                 kinds=None, post_processors=None):
        from irmodel import message_class  # noqa: PLC0415
        if registry is not None:
            from wirefmt import build_classes  # noqa: PLC0415
            self.cls = build_classes(registry)[root_type]
        else:
            self.cls = message_class(root_type)
        self.root_type = root_type
        self.rng = FastRandom(seed)
        names = list(OPERATIONS) if kinds is None else list(kinds)
        unknown = [k for k in names if k not in OPERATIONS]
        if unknown or not names:
            raise ValueError(f"unknown structure mutation kinds: {unknown}" if unknown else "no kinds")
        self.kinds = tuple(names)
        self.post_processors = DEFAULT_POST_PROCESSORS if post_processors is None else tuple(post_processors)
        self._wire: WireMutator | None = None

    def _decode(self, data: bytes):
        """``(message, its sites)``, or None when ``data`` does not decode (every nested
        message is decoded now: a bad one anywhere means a wire-level mutation instead)."""
        try:
            msg = self.cls.FromString(data)
            return msg, _sites(msg)
        except (DecodeError, RecursionError):
            return None

    def _wire_mutant(self, data: bytes, max_size: int, rng) -> bytes:
        from .wire import WireMutator  # noqa: PLC0415
        if self._wire is None:
            self._wire = WireMutator(self.cls._registry, self.root_type)
        return self._wire.mutate(data, rng.getrandbits(63), max_size=max_size).data

    def mutate_message(self, msg, rng=None, kind: str | None = None, sites: list | None = None) -> Mutation | None:
        """Apply one operation to ``msg`` in place (post-processors included); None if none applies.

        ``sites`` is ``msg``'s tree of messages when the caller has it (`_sites`)."""
        rng = rng or self.rng
        names = [kind] if kind is not None else list(self.kinds)
        sites = sites if sites is not None else _sites(msg)
        for _ in range(8):
            name = rng.choice(names)
            mutation = OPERATIONS[name](msg, rng, sites)  # None: nothing changed, sites still hold
            if mutation is not None:
                for post in self.post_processors:
                    post(msg, rng)
                return mutation
        return None

    def mutant(self, data: bytes, rng=None, kind: str | None = None) -> tuple[bytes, Mutation | None]:
        """``(mutant bytes, what changed)``; the input itself and None if nothing applies."""
        decoded = self._decode(bytes(data))
        if decoded is None:
            return bytes(data), None
        msg, sites = decoded
        try:
            mutation = self.mutate_message(msg, rng or self.rng, kind, sites)
            return msg.SerializeToString(), mutation
        except EncodeError:  # nested past the depth limit by copies: keep the input
            return bytes(data), None
        except DecodeError:  # a part decoded on first read is malformed (packed data, ...)
            return bytes(data), None
        except UnicodeDecodeError:  # a string of the input that is not UTF-8, copied into a
            return bytes(data), None  # field whose setter checks it: no structure mutant

    def mutate(self, data: bytes, max_size: int, *, rng=None) -> bytes:
        """A mutant of ``data`` no longer than ``max_size`` (a wire mutant if it does not decode)."""
        rng = rng or self.rng
        data = bytes(data)
        for _ in range(4):
            out, mutation = self.mutant(data, rng)
            if mutation is None:  # undecodable, or nothing applies
                break
            if len(out) <= max_size:
                return out
        return self._wire_mutant(data, max_size, rng)

    def crossover(self, a: bytes, b: bytes, max_size: int, *, rng=None) -> bytes:
        """``a`` with one field replaced by or extended with one of ``b`` (same message type)."""
        rng = rng or self.rng
        da, db = self._decode(bytes(a)), self._decode(bytes(b))
        if da is None or db is None:
            return _splice(bytes(a), bytes(b), max_size, rng)
        ma, mb = da[0], db[0]
        try:
            if crossover_messages(ma, mb, rng) is not None:
                for post in self.post_processors:
                    post(ma, rng)
                out = ma.SerializeToString()
                if out and len(out) <= max_size:
                    return out
        except (EncodeError, DecodeError, UnicodeDecodeError):  # too deep once copied; malformed, read late
            pass
        return _splice(bytes(a), bytes(b), max_size, rng)


def _splice(a: bytes, b: bytes, max_size: int, rng) -> bytes:
    """libFuzzer's plain crossover (a prefix of one, a suffix of the other), for undecodable inputs."""
    i, j = rng.randint(0, len(a)), rng.randint(0, len(b))
    return (a[:i] + b[j:])[:max_size]


_DEFAULT: StructureMutator | None = None


def _default() -> StructureMutator:
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = StructureMutator()
    return _DEFAULT


def custom_mutator(data: bytes, max_size: int, seed: int) -> bytes:
    """atheris ``custom_mutator`` over ONNX models: the same arguments give the same mutant."""
    return _default().mutate(data, max_size, rng=FastRandom(seed))


def custom_crossover(data1: bytes, data2: bytes, max_size: int, seed: int) -> bytes:
    """atheris ``custom_crossover`` over ONNX models (deterministic in its arguments)."""
    return _default().crossover(data1, data2, max_size, rng=FastRandom(seed))


__all__ = ["StructureMutator", "Mutation", "OPERATIONS", "DEFAULT_POST_PROCESSORS", "plausible_versions",
           "defined_names", "crossover_messages", "random_message", "scalar_value", "custom_mutator",
           "custom_crossover"]
