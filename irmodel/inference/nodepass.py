"""The node pass of a large graph, read from the nodes' bytes, with outcomes cached.

A 75,000-node graph holds a few dozen kinds of node, and most nodes of a kind see the
same input types.  The full path (`engine.Scope.process_node`) makes a NodeProto, a
`NodeView` and an `InferenceContext` per node and runs the operator's rule.  Here each
node is read from its wire form with the checker's regular expression
(`irmodel._wireview.nodes.node_pattern`): its input and output names, op_type,
domain and attribute bytes, without making a message.  The rule's result is cached by

    (op_type, domain, opset version, attribute bytes, input types, which inputs and
     outputs are empty)

and a later node with the same key replays it: each output type is given fresh
``unk__N`` names and merged exactly as `Scope.update_type` does for the full path (so
names come in the reference's order), and data propagation runs as it would.

What makes an outcome cacheable (decided on the node that computed it, `process_node`'s
``keep``): an operator with an inference function (not a function body),
a rule that read no sub-graph (the context derives those on the
first read: `InferenceContext._derive`), no error (the rule, ``check_type``, the merges
and propagation all passed).  Propagation is skipped on a hit only when it changed
nothing on the first node and no input of this node holds a value either (it then
reads the same types and attributes, and finds no value, as there); otherwise it runs.

A Constant, a rule that read input values, and a propagation with values to read are
cached too, in a table by `value_signature` under the same key: per input, its constant
(int32/int64, rank 0 or 1, at most `MAX_SIGNED_VALUES` values) and its propagated value
(ints, dim names, unknowns); anything else there (a float or sparse constant, a sub-graph)
is not cached.  Such an entry holds the rule's output types, the Constant's recorded
value (`Scope.process_constant`; never changed, so shared) and the values propagation
added (to outputs, and to inputs read through their types), by position; a hit replays
them in the full path's order, unless an output already holds a value (the full path
fails there).

Anything unusual takes the full path in its place: a node the pattern does not read
(fields out of order, names over 127 bytes, ``overload`` or metadata set), names that
are not UTF-8, an op with no opset import, and every node of a kind not cached yet.
The pass runs only for a graph read from bytes (unchanged), outside function bodies,
without ``explain``; in symbolic mode with its own key (`infer_nodes_symbolic`).
"""

from __future__ import annotations

from itertools import repeat

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only (`from __future__ import annotations`)
    from typing import Any

from wirefmt.message import exact_span

from .._wireview.fastpath import declined, items as fast_items
from .._wireview.nodes import (attribute_items, attribute_kinds, masked_kind, may_hold_float, names_of,
                               node_pattern)
from .._wireview.tensorscan import unnamed_bytes
from .context import NodeView
from .dataprop import PropagationContext
from .slot import Slot
from .tensordata import INT32, INT64
from .types import UNSET, TensorType

#: At most this many cached outcomes per run (attributes and shapes that all differ make many).
MAX_OUTCOMES = 1 << 16
#: At most this many outcomes by input values (`value_signature`) per operator, attributes and input types.
MAX_VALUE_OUTCOMES = 256
#: At most this many sets of looked-up attribute names per operator and input types.
MAX_VARIANTS = 8
#: A young collection after this many nodes of the full path during a node pass (`_PausedCollector`).
COLLECT_EVERY = 1000


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


def infer_nodes(scope, graph, nodes) -> bool:
    """Infer ``graph``'s nodes in order through the cache; False (nothing done) when the
    pass does not apply and the caller must take the full path for every node."""
    run = scope.run
    opts = run.options
    if run.explain is not None:
        return False
    found = fast_items(graph, "node", len(nodes))
    if found is None:
        return False
    src, spans = found
    if opts.symbolic:
        infer_nodes_symbolic(scope, nodes, src, spans)
        return True

    collector = _PausedCollector()
    try:
        _cached_pass(scope, nodes, src, spans, collector.counting(scope.process_node))
    finally:
        collector.resume()
    return True


class _PausedCollector:
    """The cyclic garbage collector paused for a node pass.

    The pass keeps what it makes (a slot and a type per value): young collections
    every `api._GC_THRESHOLDS` allocations traversed those survivors and freed nothing
    (two collections, about 4% of the pass on the 75,000-node graph).  So collection
    waits: only the full path makes cyclic garbage (a decoded node and its lists), and a
    young collection runs after every `COLLECT_EVERY` full-path nodes, which bounds it.
    At the end what the pass made is moved to the oldest generation at once
    (``gc.freeze(); gc.unfreeze()``: no traversal).  Not done when the collector is off
    or something is frozen already (the caller's freeze must stay).
    """

    __slots__ = ("paused", "count")

    def __init__(self):
        import gc  # noqa: PLC0415

        self.paused = gc.isenabled() and not gc.get_freeze_count()
        self.count = 0
        if self.paused:
            gc.disable()

    def counting(self, process_node):
        if not self.paused:
            return process_node

        def full(view, keep=None):
            process_node(view, keep)
            self.count += 1
            if self.count % COLLECT_EVERY == 0:
                import gc  # noqa: PLC0415
                gc.collect(0)
        return full

    def resume(self) -> None:
        if self.paused:
            import gc  # noqa: PLC0415
            gc.freeze()
            gc.unfreeze()
            gc.enable()


def _cached_pass(scope, nodes, src, spans, full) -> None:
    """`infer_nodes`' loop (see the module docstring); ``full`` infers one node by the full path."""
    run = scope.run
    opts = run.options

    new_slot = object.__new__

    outcomes = run.outcomes
    if outcomes is None:
        outcomes = run.outcomes = {}
        run.outcomes_by_shape = {}
    by_shape = run.outcomes_by_shape
    # The same outcomes by the identity of the input types (the commonest hit: a value's
    # type object is the one its producer's outcome holds); each entry keeps its types
    # alive, so an id is never reused while it is a key.  Per graph: its versions are fixed.
    by_id: dict = {}
    # Hits through the attributes the rule looked up (`by_shape`'s variants), by the node's
    # kind with its float attribute values masked (`nodes.masked_kind`: a Gemm's alpha
    # that differs per node) and the input type ids: the masked bytes are the same
    # attributes, as well formed, with the same values except those floats, and an entry
    # is stored only when no attribute the rule looked up holds a float there.
    by_masked: dict = {}
    kinds: dict = {}  # (op_type field, domain field) -> (op_type, domain, version, prop) or None
    types = scope.types
    get_type = types.get
    update_type = scope.update_type
    record = scope.record
    added = record.added if record is not None else None
    undefined = scope.undefined
    data_prop = opts.data_prop
    matches = map(node_pattern().fullmatch, repeat(src), spans[0::2], spans[1::2])
    for k, m in enumerate(matches):
        if m is None:
            full(NodeView(nodes[k], k))
            continue
        ins, outs, kind_bytes = m.group(1, 2, 3)  # kind_bytes: op_type to domain (attributes, doc_string)
        try:  # one or two names: inline (most nodes have one output, one or two inputs)
            ids: Any
            in_skel: Any
            out_skel: Any
            a = ins[1] + 2 if ins else 0
            if a == len(ins) and a:
                name = ins[2:].decode()
                in_names = [name]
                slot = get_type(name)
                ids = 0 if slot is None else id(slot.type)  # 0 when untyped: no object has that id
                in_skel = None if name else (False,)
            elif a and a + 2 + ins[a + 1] == len(ins):
                name = ins[2:a].decode()
                second = ins[a + 2:].decode()
                in_names = [name, second]
                slot = get_type(name)
                slot2 = get_type(second)
                ids = (0 if slot is None else id(slot.type), 0 if slot2 is None else id(slot2.type))
                in_skel = None if name and second else (bool(name), bool(second))
            else:
                in_names = names_of(ins)
                ids = tuple([0 if (slot := get_type(name)) is None else id(slot.type) for name in in_names])
                in_skel = None if "" not in in_names else tuple(map(bool, in_names))
            if outs and outs[1] + 2 == len(outs):
                out_bytes = outs[2:]
                out_name = out_bytes.decode()
                out_names = [out_name]
                out_skel = 1 if out_name else (False,)
            else:
                out_name = out_bytes = None
                out_names = names_of(outs)
                out_skel = len(out_names) if "" not in out_names else tuple(map(bool, out_names))
        except UnicodeDecodeError:
            full(NodeView(nodes[k], k))
            continue
        id_key = (kind_bytes, ids, in_skel, out_skel)
        found = by_id.get(id_key)
        if found is None and may_hold_float(kind_bytes):  # a float attribute: its value masked
            masked_key = (masked_kind(kind_bytes), ids, in_skel, out_skel)
            found = by_masked.get(masked_key)
        else:
            masked_key = None
        if found is not None:
            hit, kind, partial = found[0], found[1], found[3]
        else:
            in_types: Any = [None if (slot := get_type(name)) is None else slot.type for name in in_names]
            op, attrs, dom = m.group(4, 5, 6)
            kind = kinds.get((op, dom), 0)
            if kind == 0:
                kind = kinds[(op, dom)] = _kind(scope, op, dom)
            if kind is None:
                full(NodeView(nodes[k], k))
                continue
            in_types = tuple(in_types)
            key = (op, dom, kind[2], attrs, in_types, in_skel, out_skel)
            hit = outcomes.get(key)
            partial = None
            if hit is None:
                # Not these attribute bytes: a node with the same attributes where the rule looked.
                shape_key = key[:3] + key[4:]
                variants = by_shape.get(shape_key)
                items = attribute_items(attrs) if attrs and variants is not None else None
                if items is not None:
                    for known, table in variants:
                        hit = table.get(tuple([items.get(name) for name in known]))
                        if hit is not None:
                            partial = known
                            if masked_key is not None and len(by_masked) < MAX_OUTCOMES and \
                                    not any(may_hold_float(items[name]) for name in known if name in items):
                                by_masked[masked_key] = (hit, kind, in_types, known)
                            break
                if hit is None:
                    entry = _miss(scope, nodes, k, key, attrs, items, variants, shape_key, kind, full, outcomes,
                                  by_shape)
                    if entry is not None and len(by_id) < MAX_OUTCOMES:
                        by_id[id_key] = (entry, kind, in_types, None)
                    continue
            elif len(by_id) < MAX_OUTCOMES:
                by_id[id_key] = (hit, kind, in_types, None)
        if type(hit) is dict:  # outcomes by the inputs' values (`value_signature`)
            vsig = value_signature(scope, in_names)
            entry = hit.get(vsig) if vsig is not None else None
            if entry is None or _output_data_exists(entry[1], out_names, scope.shape_data):
                _miss(scope, nodes, k, None, b"", None, None, None, kind, full, outcomes, by_shape, hit)
            else:
                _replay_valued(scope, entry, in_names, out_names, nodes, k)
            continue
        results, quiet, node_attrs, plain = hit
        try:
            if plain and out_name:  # `Scope.update_type` inlined: no fresh names to make, a new value
                t = results[0]
                if t is not None and t is not UNSET:
                    if out_name in types:
                        update_type(out_name, t)
                    else:
                        slot = new_slot(Slot)  # `Slot(t)` without its __init__
                        slot.type = t
                        slot.merged = None
                        types[out_name] = slot
                        if added is not None:
                            added.append((out_bytes, slot))  # (its UTF-8 as read: what the write-back writes)
                            if undefined and out_name in undefined:
                                record.assigned[undefined[out_name]] = t
            elif plain:
                for name, t in zip(out_names, results):
                    if name and t is not None and t is not UNSET:
                        if name in types:
                            update_type(name, t)
                            continue
                        slot = Slot(t)
                        types[name] = slot
                        if added is not None:
                            added.append((name, slot))
                            if undefined and name in undefined:
                                record.assigned[undefined[name]] = t
            else:
                for name, t in zip(out_names, results):
                    if name:
                        update_type(name, t)
            prop = kind[3]
            if prop is not None and data_prop:
                if quiet is None or quiet != data_signature(scope, in_names):
                    # (Something to read, or not as on the node that computed the outcome.)
                    if partial is not None or node_attrs is None:
                        node_attrs = PartialAttrs(node_attrs or {}, frozenset(partial or ()), _Loader(nodes, k))
                    prop(PropagationContext(SpanNode(kind[0], kind[1], in_names, out_names, node_attrs), scope))
        except Exception as exc:  # noqa: BLE001 - sorted out as the full path sorts them
            scope.node_failed(NodeView(nodes[k], k), None, exc)


def infer_nodes_symbolic(scope, nodes, src, spans) -> None:
    """The node pass in symbolic mode: outcomes keyed further by the symbolic state.

    Key: op_type, domain, opset version, attribute bytes, the input types as the scope
    holds them, the outputs' types if they have one, which inputs and outputs are empty,
    the inputs' values (`_symbolic_values`) and `symbolic.outcome_token()`.  Under one token the proven
    equalities are fixed, so the resolved input types, the symbolic rule's result and
    `symbolic.propagate`'s values are functions of that key.  An outcome is stored only
    when the token did not change while its node was processed (a node that proved an
    equality is never replayed), and only for nodes whose outputs hold no value yet
    (neither at the node that computed it nor at a hit: the full path would skip
    propagation); outputs that have a type already key by it (the full path merges into
    it, and propagation reads the merged type).  A hit replays the rule's output types
    through `Scope.update_type` (fresh names in the same order), a Constant's value and
    the values propagation added (`Scope._finish_symbolic` records them).
    """
    token = scope.run.options.symbolic.outcome_token
    outcomes = scope.run.outcomes
    if outcomes is None:
        outcomes = scope.run.outcomes = {}
    kinds: dict = {}
    known_sigs: dict = {}
    types = scope.types
    get_type = types.get
    shape_data = scope.shape_data
    full = scope.process_node
    matches = map(node_pattern().fullmatch, repeat(src), spans[0::2], spans[1::2])
    for k, m in enumerate(matches):
        if m is None:
            full(NodeView(nodes[k], k))
            continue
        ins, outs, op, attrs, dom = m.group(1, 2, 4, 5, 6)
        try:
            in_names = [ins[2:].decode()] if ins and ins[1] + 2 == len(ins) else names_of(ins)
            out_names = [outs[2:].decode()] if outs and outs[1] + 2 == len(outs) else names_of(outs)
        except UnicodeDecodeError:
            full(NodeView(nodes[k], k))
            continue
        kind = kinds.get((op, dom), 0)
        if kind == 0:
            kind = kinds[(op, dom)] = _kind(scope, op, dom)
        vsig = _symbolic_values(scope, in_names, known_sigs) if kind is not None else None
        if vsig is None or any(name in shape_data for name in out_names if name):
            full(NodeView(nodes[k], k))
            continue
        in_types = tuple([None if (slot := get_type(name)) is None else slot.type for name in in_names])
        out_types = tuple([None if (slot := get_type(name)) is None else slot.type for name in out_names])
        before = token()
        key = ("symbolic", op, dom, kind[2], attrs, in_types, tuple(map(bool, in_names)),
               tuple(map(bool, out_names)), out_types, vsig, before)
        entry = outcomes.get(key)
        if entry is not None:
            _replay_valued(scope, entry, in_names, out_names, nodes, k)
            continue
        keep: list = []
        full(NodeView(nodes[k], k), keep)
        if len(keep) == 1 and token() == before and len(outcomes) < MAX_OUTCOMES:
            outcomes[key] = keep[0]


def _symbolic_values(scope, names, known_sigs: dict) -> tuple | None:
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


def _output_data_exists(additions: tuple, out_names: list, shape_data: dict) -> bool:
    """An output the cached propagation gives a value already has one (an error, as the full path finds)."""
    return any(is_out and out_names[i] in shape_data for is_out, i, _value in additions)


def _replay_valued(scope, entry: tuple, in_names: list, out_names: list, nodes, k: int) -> None:
    """A value-keyed outcome, replayed in the full path's order: output types, the Constant's
    value, the propagated values (of outputs, and of inputs read through their types)."""
    results, additions, effects = entry
    try:
        for name, t in zip(out_names, results):
            if name:
                scope.update_type(name, t)
        if effects:
            out = out_names[0]
            for is_const, value in effects:
                (scope.const_data if is_const else scope.sparse_data)[out] = value
        if additions:
            shape_data = scope.shape_data
            for is_out, i, value in additions:
                shape_data[(out_names if is_out else in_names)[i]] = value
    except Exception as exc:  # noqa: BLE001 - sorted out as the full path sorts them
        scope.node_failed(NodeView(nodes[k], k), None, exc)


def _miss(scope, nodes, k: int, key: tuple | None, attrs: bytes, items, variants, shape_key: tuple | None, kind,
          full, outcomes: dict, by_shape: dict, table: dict | None = None) -> Any:
    """The full path for node ``k``, its outcome cached when it is the kind's (see the module
    docstring): under its attribute bytes, and under the attributes its rules looked up.  An
    outcome that depends on input values goes into a table by `value_signature` (``table``,
    when one was found for the node's key)."""
    keep: list = []
    view = _RecordingView(nodes[k], k)
    full(view, keep)
    if len(keep) == 3:
        valued, additions, effects = keep[2]
        entry: Any = (keep[0], additions, effects)
        if table is not None:
            if len(table) < MAX_VALUE_OUTCOMES:
                table[valued] = entry
            return table
        entry = {valued: entry}
    elif len(keep) != 2 or table is not None:
        return None
    else:
        entry = None
    if len(outcomes) >= MAX_OUTCOMES or key is None:
        return None
    node_attrs: Any = view._attrs
    if entry is None:
        results = keep[0]
        # The node's attributes (and so the node) are kept only for propagation on hits.
        entry = (results, keep[1], node_attrs if kind[3] is not None and scope.run.options.data_prop else None,
                 all(t is None or t is UNSET or _named(t) for t in results))
    outcomes[key] = entry
    if not attrs or kind[0] == "Constant":  # (a Constant's value is read past the recorded attributes)
        return entry
    read = set() if node_attrs is None else node_attrs.read
    if read is None:
        return entry
    if items is None:
        items = attribute_items(attrs)
        if items is None:
            return entry
    known = tuple(sorted(read))
    if variants is None:
        variants = by_shape[shape_key] = []
    for have, table in variants:
        if have == known:
            break
    else:
        if len(variants) >= MAX_VARIANTS:
            return entry
        table = {}
        variants.append((known, table))
    table[tuple([items.get(name) for name in known])] = entry
    return entry


def _named(t) -> bool:
    """A tensor type with every dim known or named: `Scope.update_type` gives it no fresh name."""
    return type(t) is TensorType and (t.shape is None or None not in t.shape)


class _RecordingView(NodeView):
    """A node whose attributes, once read, are a `RecordingAttrs`."""

    __slots__ = ()

    @property
    def attrs(self) -> dict:
        attrs = self._attrs
        if attrs is None:
            attrs = self._attrs = RecordingAttrs(_NODE_ATTRS(self))
        return attrs


_NODE_ATTRS: Any = NodeView.attrs.fget  # type: ignore[attr-defined]


class _Loader:
    """Makes node ``k`` (for an attribute its outcome's node did not share)."""

    __slots__ = ("nodes", "k", "view")

    def __init__(self, nodes, k: int):
        self.nodes = nodes
        self.k = k
        self.view: NodeView | None = None

    def __call__(self) -> NodeView:
        view = self.view
        if view is None:
            view = self.view = NodeView(self.nodes[self.k], self.k)
        return view


def nodes_with_graphs(graph, nodes):
    """The nodes of ``graph`` whose attributes may hold a graph, in order, or None (all of them).

    A node the node pattern reads whose attributes `nodes.attribute_kinds` reads (or
    that has none) holds no graph and, its attributes being well formed, would be read
    without error: it is skipped.  Every other node is made, as before.
    """
    found = fast_items(graph, "node", len(nodes))
    if found is None:
        return None
    src, spans = found
    matches = map(node_pattern().fullmatch, repeat(src), spans[0::2], spans[1::2])
    picked = []
    for k, m in enumerate(matches):
        if m is not None:
            attrs = m.group(5)
            if not attrs or attribute_kinds(attrs) is not None:
                continue
        picked.append(k)
    return (nodes[k] for k in picked)


def _kind(scope, op: bytes, dom: bytes):
    """``(op_type, domain, version, propagation function)`` of a cacheable operator, else None."""
    try:
        op_type = op[2:].decode()
        domain = dom[2:].decode() if dom else ""
    except UnicodeDecodeError:
        return None
    version = scope.opsets.get(domain)
    if version is None:
        return None  # (no import, or "" through "ai.onnx": the full path looks it up its way)
    schema, fn, prop = scope.run.op_rules(domain, op_type, version)
    if schema is None or fn is None or not schema.has_type_and_shape_inference_function:
        return None
    return op_type, domain, version, prop
