"""What inference's node pass caches: outcomes as named records, and the keys they are found by.

An `Outcome` is what the full path's rule gave for one node (`nodepass.NodePass`
replays it on later nodes of its key); a `ValuedOutcome` is one that depends on the
inputs' values, kept in a table by `value_signature`.  The signatures say what a node's
inputs offer its rule and data propagation (`data_signature`, `value_signature`, and
in symbolic mode `symbolic_values`); the engine asks them too (`data_positions`).
"""

from __future__ import annotations

from wirefmt.message import exact_span

from .._wireview.tensorscan import unnamed_bytes
from .tensordata import INT32, INT64
from .types import UNSET, TensorType


class OpKind:
    """A cacheable operator as the pass found it (`nodepass._kind`): names, opset version and
    its data propagation function (None: none)."""

    __slots__ = ("op_type", "domain", "version", "prop")

    def __init__(self, op_type: str, domain: str, version: int, prop):
        self.op_type = op_type
        self.domain = domain
        self.version = version
        self.prop = prop


class ValuedOutcome:
    """An outcome that read input values: the rule's output types, the values propagation
    added (``(is output, index, value)`` each, `data_positions`) and a Constant's recorded
    value (``(is dense, value)`` pairs, or None)."""

    __slots__ = ("results", "additions", "effects")

    def __init__(self, results: tuple, additions: tuple, effects):
        self.results = results
        self.additions = additions
        self.effects = effects


class Outcome:
    """What the full path gave for a node, replayed on the later nodes of its key.

    ``results``: the rule's output types; ``quiet``: the `data_signature` under which
    propagation changed nothing (None: it changed something, or there is none to skip);
    ``attrs``: the node's attributes, kept only for propagation on hits; ``plain``: every
    result is fully known or named (`Scope.update_type` makes no fresh name for it).  An
    outcome that depends on the inputs' values has none of these but ``by_values``: its
    `ValuedOutcome` by `value_signature`.
    """

    __slots__ = ("results", "quiet", "attrs", "plain", "by_values")

    def __init__(self, results: tuple = (), quiet=None, attrs=None, plain: bool = False,
                 by_values: dict | None = None):
        self.results = results
        self.quiet = quiet
        self.attrs = attrs
        self.plain = plain
        self.by_values = by_values

    @classmethod
    def of(cls, results: tuple, quiet, attrs) -> Outcome:
        return cls(results, quiet, attrs, all(t is None or t is UNSET or _named(t) for t in results))


class Found:
    """An outcome as the pass's quick tables hold it: with the node's `OpKind`, the input
    types it was found for (kept alive: the tables are keyed by their ids) and, for a hit
    through looked-up attributes, their names (``partial``; None: all attributes).

    What a hit reads of the outcome (``results``, ``plain``, ``by_values``) and of the kind
    (``prop``) is copied here when the entry is made (outcomes never change once made): a
    hit, the commonest step of the pass, then reads one record, not three.
    """

    __slots__ = ("outcome", "kind", "in_types", "partial", "results", "plain", "by_values", "prop")

    def __init__(self, outcome: Outcome, kind: OpKind, in_types: tuple, partial: tuple | None):
        self.outcome = outcome
        self.kind = kind
        self.in_types = in_types
        self.partial = partial
        self.results = outcome.results
        self.plain = outcome.plain
        self.by_values = outcome.by_values
        self.prop = kind.prop


class Variant:
    """Outcomes by the values of the attributes their rule looked up (``names``)."""

    __slots__ = ("names", "table")

    def __init__(self, names: tuple):
        self.names = names
        self.table: dict = {}


class SpanNode:
    """What data propagation reads of a node read from its bytes (`dataprop.PropagationContext`)."""

    __slots__ = ("op_type", "domain", "inputs", "outputs", "attrs")

    def __init__(self, op_type: str, domain: str, inputs: list, outputs: list, attrs: dict):
        self.op_type = op_type
        self.domain = domain
        self.inputs = inputs
        self.outputs = outputs
        self.attrs = attrs


class RecordingAttrs(dict):
    """A node's attributes by name that remember which names were looked up (``read``;
    None once anything else was asked, such as iterating them)."""

    __slots__ = ("read",)

    def __init__(self, attrs: dict):
        super().__init__(attrs)
        self.read: set | None = set()

    def get(self, name, default=None):
        if self.read is not None:
            self.read.add(name)
        return dict.get(self, name, default)

    def _everything(self, *args):
        self.read = None

    def __getitem__(self, name):
        self._everything()
        return dict.__getitem__(self, name)

    def __contains__(self, name) -> bool:
        self._everything()
        return dict.__contains__(self, name)

    def __iter__(self):
        self._everything()
        return dict.__iter__(self)

    def keys(self):
        self._everything()
        return dict.keys(self)

    def values(self):
        self._everything()
        return dict.values(self)

    def items(self):
        self._everything()
        return dict.items(self)


class PartialAttrs:
    """The attributes of a node that shares the names ``known`` (their bytes) with the node
    whose attributes are ``attrs``; any other name is read from the node itself."""

    __slots__ = ("attrs", "known", "load")

    def __init__(self, attrs: dict, known: frozenset, load):
        self.attrs = attrs
        self.known = known
        self.load = load

    def get(self, name, default=None):
        if name in self.known:
            return self.attrs.get(name, default)
        return self.load().attrs.get(name, default)


def data_signature(scope, names) -> tuple | None:
    """What data propagation finds for the inputs ``names``: None when one holds a value it
    reads (propagated, or a constant of rank 0 or 1 and type int32/int64); else, per input,
    whether it is a constant it passes over (True) or nothing (False).  Two nodes of one
    kind with the same input types and the same signature propagate alike."""
    shape_data, const_data, inert = scope.shape_data, scope.const_data, scope.inert_constants
    sig = []
    for name in names:
        if name in shape_data:
            return None
        c = const_data.get(name)
        if c is None:
            sig.append(False)
            continue
        known = inert.get(name)
        if known is None or known[0] is not c:  # (its type only: a lazy constant stays unread)
            known = inert[name] = (c, len(c.dims) > 1 or c.data_type not in (INT32, INT64))
        if not known[1]:
            return None
        sig.append(True)
    return tuple(sig)


#: At most this many values in one input's constant or propagated value of a value signature.
MAX_SIGNED_VALUES = 64


def value_signature(scope, names) -> tuple | None:
    """The values the inputs ``names`` offer a rule and data propagation, as a hashable key:
    per input, its constant's ``(type, dims, values)`` (int32/int64, rank 0 or 1) or None, and
    its propagated value or None.  None when an input offers anything else (a sparse value,
    a float or larger constant, a value with other than ints, names and unknowns)."""
    return _input_values(scope, names, scope.const_signatures, _const_signature, _plain_value)


def _plain_value(v) -> bool:
    return type(v) is tuple and len(v) <= MAX_SIGNED_VALUES and \
        all(type(x) is int or type(x) is str or x is None for x in v)


def _input_values(scope, names, known_sigs: dict, const_key, value_ok) -> tuple | None:
    """Per input of ``names``, ``(its constant's key, its propagated value)``: the one loop
    of `value_signature` and `_symbolic_values`, which differ in how a constant becomes a
    key (``const_key(constant)``, None when it cannot) and which propagated values they take
    (``value_ok(value)``).  None for a sparse value, a constant without a key or a value not
    taken.  ``known_sigs``: name -> (constant, its key), so a constant is keyed once."""
    const_data, shape_data, sparse = scope.const_data, scope.shape_data, scope.sparse_data
    out = []
    for name in names:
        c = const_data.get(name)
        if c is None:
            if sparse and name in sparse:
                return None
            csig = None
        else:
            known = known_sigs.get(name)
            if known is None or known[0] is not c:
                known = known_sigs[name] = (c, const_key(c))
            csig = known[1]
            if csig is None:
                return None
        v = shape_data.get(name)
        if v is not None and not value_ok(v):
            return None
        out.append((csig, v))
    return tuple(out)


def _const_signature(c) -> tuple | None:
    proto = c.proto
    code = proto.data_type
    dims = tuple(proto.dims)
    if code not in (INT32, INT64) or len(dims) > 1 or (dims and not 0 <= dims[0] <= MAX_SIGNED_VALUES):
        return None
    try:
        values = tuple(c.values(code))
    except Exception:  # noqa: BLE001 - a value the rule would fail on: not cached
        return None
    return code, dims, values


def data_positions(inputs, outputs, shape_data: dict, before: int) -> tuple | None:
    """The propagated values added to ``shape_data`` after its first ``before`` entries, as
    ``(is output, index, value)``; None when a name is not once among the node's names."""
    if len(shape_data) == before:
        return ()
    found = []
    items = reversed(shape_data.items())
    for name, value in reversed([next(items) for _ in range(len(shape_data) - before)]):
        where = [(False, i) for i, n in enumerate(inputs) if n == name]
        where += [(True, i) for i, n in enumerate(outputs) if n == name]
        if len(where) != 1:
            return None
        found.append((*where[0], value))
    return tuple(found)


def symbolic_values(scope, names, known_sigs: dict) -> tuple | None:
    """The inputs' values as a key for `infer_nodes_symbolic`: per input, its constant's
    key (`_symbolic_constant_key`) and its propagated value (a tuple of ints, dims and
    None).  None for a sparse value or a value not a tuple.  ``known_sigs``: name ->
    (constant, its key), per pass."""
    return _input_values(scope, names, known_sigs, _symbolic_constant_key, _is_tuple)


def _symbolic_constant_key(c):
    """A constant's bytes without its name (`_unnamed_bytes`; equal bytes, equal value),
    else its small int signature (`_const_signature`), else the constant object itself
    (equal only to itself: the same initializer read by every layer; the key keeps it
    alive, so its id is never reused meanwhile)."""
    key = _unnamed_bytes(c.proto)
    if key is None:
        key = _const_signature(c)
    return c if key is None else key


def _is_tuple(v) -> bool:
    return type(v) is tuple


#: A constant's bytes longer than this are not a key (`_unnamed_bytes`).
MAX_KEY_BYTES = 1024


def _unnamed_bytes(proto) -> bytes | None:
    """A TensorProto read from bytes: those bytes without its ``name`` fields
    (`tensorscan.unnamed_bytes`), or None (built in memory, long, or not plainly laid out)."""
    span = exact_span(proto)
    if span is None or span[2] - span[1] > MAX_KEY_BYTES:
        return None
    return unnamed_bytes(bytes(span[0][span[1]:span[2]]))


def output_data_exists(additions: tuple, out_names: list, shape_data: dict) -> bool:
    """An output the cached propagation gives a value already has one (an error, as the full path finds)."""
    return any(is_out and out_names[i] in shape_data for is_out, i, _value in additions)


def _named(t) -> bool:
    """A tensor type with every dim known or named: `Scope.update_type` gives it no fresh name."""
    return type(t) is TensorType and (t.shape is None or None not in t.shape)
