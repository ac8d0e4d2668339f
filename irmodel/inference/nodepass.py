"""The node pass of a large graph, read from the nodes' bytes, with outcomes cached.

A 75,000-node graph holds a few dozen kinds of node, and most nodes of a kind see the
same input types.  The full path (`engine.Scope.process_node`) makes a NodeProto, a
`NodeView` and an `InferenceContext` per node and runs the operator's rule.  Here each
node is read from its wire form with the node reader's regular expression
(`irmodel._wireview.nodes.node_pattern`): its input and output names, op_type,
domain and attribute bytes, without making a message.  The rule's result is cached by

    (op_type, domain, opset version, attribute bytes, input types, which inputs and
     outputs are empty)

(an `outcomes.Outcome`) and a later node with the same key replays it: each output type is given fresh
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

from .._wireview.fastpath import declined, items as fast_items
from .._wireview.nodes import (FLOAT_TAG, attribute_items, has_no_graph, masked_kind, may_hold_float, names_of,
                               node_pattern)
from .context import NodeView
from .dataprop import PropagationContext, keep_value
from .outcomes import (Found, OpKind, Outcome, PartialAttrs, RecordingAttrs, SpanNode, ValuedOutcome, Variant,
                       data_signature, output_data_exists, symbolic_values, value_signature)
from .slot import Slot
from .types import UNSET

#: At most this many cached outcomes per run (attributes and shapes that all differ make many).
MAX_OUTCOMES = 1 << 16
#: At most this many outcomes by input values (`value_signature`) per operator, attributes and input types.
MAX_VALUE_OUTCOMES = 256
#: At most this many sets of looked-up attribute names per operator and input types.
MAX_VARIANTS = 8
#: A young collection after this many nodes of the full path during a node pass (`_PausedCollector`).
COLLECT_EVERY = 1000


def infer_nodes(scope, graph, nodes) -> bool:
    """Infer ``graph``'s nodes in order through the cache; False (nothing done) when the
    pass does not apply and the caller must take the full path for every node."""
    run = scope.run
    if run.explain is not None:
        return False
    found = fast_items(graph, "node", len(nodes))
    if found is None:
        return False
    src, spans = found
    if run.options.symbolic:
        infer_nodes_symbolic(scope, nodes, src, spans)
        return True

    collector = _PausedCollector()
    try:
        NodePass(scope, nodes, collector.counting(scope.process_node)).run(src, spans)
    finally:
        collector.resume()
    return True


def empty_node_spans(graph, count: int) -> list | None:
    """The spans of ``graph``'s nodes (as `fast_items`) when at least one node is an empty
    NodeProto and the graph is read from bytes; else None."""
    found = fast_items(graph, "node", count)
    if found is None:
        return None
    spans = found[1]
    if not any(map(int.__eq__, spans[0::2], spans[1::2])):
        return None
    return spans


class UnreadNodes:
    """The nodes of a node pass that the node pattern does not read: each takes the full
    path, except empty NodeProtos (no field: no op, no names).  The first empty one takes
    the full path; if it changed nothing but the scope's "unsupported" flag (no error),
    every later one is skipped: two million of them are a 4 MB file."""

    __slots__ = ("scope", "nodes", "spans", "full", "inert")

    def __init__(self, scope, nodes, spans, full) -> None:
        self.scope = scope
        self.nodes = nodes
        self.spans = spans
        self.full = full
        self.inert: bool | None = None  # None: no empty node seen yet

    def process(self, k: int) -> None:
        spans = self.spans
        if spans[2 * k] != spans[2 * k + 1]:
            declined("node", k, "not read by the node pattern")
            self.full(NodeView(self.nodes[k], k))
            return
        if self.inert:
            return
        errors = len(self.scope.errors)
        self.full(NodeView(self.nodes[k], k))
        if self.inert is None:
            self.inert = len(self.scope.errors) == errors


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


class NodePass:
    """One graph's node pass (see the module docstring): its caches and its loop.

    ``outcomes`` (per inference run): `Outcome` by the full key; ``by_shape`` (per run):
    the `Variant` lists by the key without the attribute bytes; ``by_id`` (per graph: its
    versions are fixed): a `Found` by the identity of the input types (the commonest hit:
    a value's type object is the one its producer's outcome holds; each entry keeps its
    types alive, so an id is never reused while it is a key); ``by_masked``: hits through
    the attributes the rule looked up, by the node's kind with its float attribute values
    masked (`nodes.masked_kind`: a Gemm's alpha that differs per node) and the input type
    ids: the masked bytes are the same attributes, as well formed, with the same values
    except those floats, and an entry is stored only when no attribute the rule looked up
    holds a float there; ``kinds``: `OpKind` (or None: not cacheable) by the op_type and
    domain fields' bytes.
    """

    __slots__ = ("scope", "nodes", "full", "outcomes", "by_shape", "by_id", "by_masked", "kinds")

    def __init__(self, scope, nodes, full):
        """``full(view, keep=None)`` infers one node by the full path (`Scope.process_node`)."""
        run = scope.run
        self.scope = scope
        self.nodes = nodes
        self.full = full
        if run.outcomes is None:
            run.outcomes = {}
            run.outcomes_by_shape = {}
        self.outcomes: dict = run.outcomes
        self.by_shape: dict = run.outcomes_by_shape
        self.by_id: dict = {}
        self.by_masked: dict = {}
        self.kinds: dict = {}

    def run(self, src, spans: list) -> None:
        """Infer the nodes whose bytes are ``src[spans[2k]:spans[2k + 1]]``, in order."""
        # The loop binds what it uses as locals (a hit costs a few dict lookups).
        scope, nodes, full = self.scope, self.nodes, self.full
        by_id, by_masked, lookup = self.by_id, self.by_masked, self._lookup
        float_tag = FLOAT_TAG  # (`may_hold_float`, inline: asked of every node)
        new_slot = object.__new__
        record = scope.record
        added = record.added if record is not None else None
        undefined = scope.undefined
        data_prop = scope.run.options.data_prop
        types = scope.types
        get_type = types.get
        update_type = scope.update_type
        unread = UnreadNodes(scope, nodes, spans, full)
        matches = map(node_pattern().fullmatch, repeat(src), spans[0::2], spans[1::2])
        for k, m in enumerate(matches):
            if m is None:
                unread.process(k)
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
            if found is None and float_tag in kind_bytes:  # a float attribute: its value masked
                masked_key = (masked_kind(kind_bytes), ids, in_skel, out_skel)
                found = by_masked.get(masked_key)
            else:
                masked_key = None
            if found is None:
                found = lookup(k, m, in_names, in_skel, out_skel, id_key, masked_key)
                if found is None:  # (the full path took the node)
                    continue
            if found.by_values is not None:  # outcomes by the inputs' values (`value_signature`)
                self._valued(k, found, in_names, out_names)
                continue
            results = found.results
            plain = found.plain
            try:
                if plain and out_name:  # `Scope.update_type` inlined: no fresh names to make, a new value
                    t = results[0]
                    if t is not None and t is not UNSET:
                        if out_name in types:
                            update_type(out_name, t)
                        else:
                            # `Slot(t)` without its __init__ (a Python frame per new value):
                            # measured with callgrind on check_model + infer_shapes + inspect of
                            # a 30,000-node model, ``Slot(t)`` here cost 15.8M more instructions
                            # (~500 a node, +0.6% of the whole run) than this.
                            slot = new_slot(Slot)
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
                prop = found.prop
                if prop is not None and data_prop:
                    outcome = found.outcome
                    quiet = outcome.quiet
                    if quiet is None or quiet != data_signature(scope, in_names):
                        # (Something to read, or not as on the node that computed the outcome.)
                        partial = found.partial
                        node_attrs = outcome.attrs
                        kind = found.kind
                        if partial is not None or node_attrs is None:
                            node_attrs = PartialAttrs(node_attrs or {}, frozenset(partial or ()), _Loader(nodes, k))
                        prop(PropagationContext(SpanNode(kind.op_type, kind.domain, in_names, out_names, node_attrs),
                                                scope))
            except Exception as exc:  # noqa: BLE001 - sorted out as the full path sorts them
                scope.node_failed(NodeView(nodes[k], k), None, exc)

    def _lookup(self, k: int, m, in_names: list, in_skel, out_skel, id_key: tuple, masked_key) -> Found | None:
        """Node ``k`` (its match ``m``) not found by the ids of its input types: its outcome by
        the full key, else through the attributes its kind's rule looked up, else the full
        path (`_miss`, None: nothing to replay)."""
        scope = self.scope
        get_type = scope.types.get
        in_types = tuple([None if (slot := get_type(name)) is None else slot.type for name in in_names])
        op, attrs, dom = m.group(4, 5, 6)
        kinds = self.kinds
        kind = kinds.get((op, dom), 0)
        if kind == 0:
            kind = kinds[(op, dom)] = _kind(scope, op, dom)
        if kind is None:
            self.full(NodeView(self.nodes[k], k))
            return None
        key = (op, dom, kind.version, attrs, in_types, in_skel, out_skel)
        outcome = self.outcomes.get(key)
        if outcome is not None:
            found = Found(outcome, kind, in_types, None)
            if len(self.by_id) < MAX_OUTCOMES:
                self.by_id[id_key] = found
            return found
        # Not these attribute bytes: a node with the same attributes where the rule looked.
        variants = self.by_shape.get(_shape_key(key))
        items = attribute_items(attrs) if attrs and variants is not None else None
        if items is not None and variants is not None:
            through = self._by_variant(variants, items, kind, in_types, masked_key)
            if through is not None:
                return through
        outcome = self._miss(k, kind, key, attrs, items, variants)
        if outcome is not None and len(self.by_id) < MAX_OUTCOMES:
            self.by_id[id_key] = Found(outcome, kind, in_types, None)
        return None

    def _by_variant(self, variants: list, items: dict, kind: OpKind, in_types: tuple, masked_key) -> Found | None:
        """An outcome of a node whose attributes where its rule looked are ``items``' (by name)."""
        for variant in variants:
            outcome = variant.table.get(tuple([items.get(name) for name in variant.names]))
            if outcome is not None:
                found = Found(outcome, kind, in_types, variant.names)
                if masked_key is not None and len(self.by_masked) < MAX_OUTCOMES and \
                        not any(may_hold_float(items[name]) for name in variant.names if name in items):
                    self.by_masked[masked_key] = found
                return found
        return None

    def _valued(self, k: int, found: Found, in_names: list, out_names: list) -> None:
        """Node ``k`` whose outcome depends on its inputs' values: replayed from the table
        by `value_signature`, or (another signature, or an output with a value already:
        the full path fails there) by the full path, its outcome added to the table."""
        scope = self.scope
        table = found.outcome.by_values
        assert table is not None
        vsig = value_signature(scope, in_names)
        valued = table.get(vsig) if vsig is not None else None
        if valued is None or output_data_exists(valued.additions, out_names, scope.shape_data):
            self._miss(k, found.kind, None, b"", None, None, table)
        else:
            _replay_valued(scope, valued, in_names, out_names, self.nodes, k)

    def _miss(self, k: int, kind: OpKind, key: tuple | None, attrs: bytes, items: dict | None,
              variants: list | None, table: dict | None = None) -> Outcome | None:
        """The full path for node ``k``; its outcome (None: not cacheable) is cached when it
        is the kind's (see the module docstring): under ``key`` (None: not cached by key),
        and under the attributes its rules looked up (``items``: the attributes' bytes by
        name, if read already; ``variants``: the key's `Variant` list, if any).  An outcome
        that depends on input values goes into a table by `value_signature` (``table``,
        when one was found for the node's key).

        ``keep`` is the engine's answer (`Scope.process_node`): ``[results, quiet]`` for a
        plain outcome, ``[results, quiet, (value signature, additions, effects)]`` for
        one by values, fewer items when the node is not cacheable."""
        keep: list = []
        view = _RecordingView(self.nodes[k], k)
        self.full(view, keep)
        if len(keep) == 3:
            signature, additions, effects = keep[2]
            valued = ValuedOutcome(keep[0], additions, effects)
            if table is not None:
                if len(table) < MAX_VALUE_OUTCOMES:
                    table[signature] = valued
                return None
            outcome = Outcome(by_values={signature: valued})
        elif len(keep) != 2 or table is not None:
            return None
        else:
            outcome = None
        outcomes = self.outcomes
        if len(outcomes) >= MAX_OUTCOMES or key is None:
            return None
        node_attrs: Any = view._attrs
        if outcome is None:
            # The node's attributes (and so the node) are kept only for propagation on hits.
            keep_attrs = kind.prop is not None and self.scope.run.options.data_prop
            outcome = Outcome.of(keep[0], keep[1], node_attrs if keep_attrs else None)
        outcomes[key] = outcome
        if not attrs or kind.op_type == "Constant":  # (a Constant's value is read past the recorded attributes)
            return outcome
        read = set() if node_attrs is None else node_attrs.read
        if read is None:
            return outcome
        if items is None:
            items = attribute_items(attrs)
            if items is None:
                return outcome
        known = tuple(sorted(read))
        if variants is None:
            variants = self.by_shape[_shape_key(key)] = []
        for variant in variants:
            if variant.names == known:
                break
        else:
            if len(variants) >= MAX_VARIANTS:
                return outcome
            variant = Variant(known)
            variants.append(variant)
        variant.table[tuple([items.get(name) for name in known])] = outcome
        return outcome


def _shape_key(key: tuple) -> tuple:
    """A full key without its attribute bytes (`NodePass.by_shape`)."""
    return key[:3] + key[4:]


def infer_nodes_symbolic(scope, nodes, src, spans) -> None:
    """The node pass in symbolic mode: outcomes keyed further by the symbolic state.

    Key: op_type, domain, opset version, attribute bytes, the input types as the scope
    holds them, the outputs' types if they have one, which inputs and outputs are empty,
    the inputs' values (`outcomes.symbolic_values`) and `symbolic.outcome_token()`.  Under one token the proven
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
    unread = UnreadNodes(scope, nodes, spans, full)
    matches = map(node_pattern().fullmatch, repeat(src), spans[0::2], spans[1::2])
    for k, m in enumerate(matches):
        if m is None:
            unread.process(k)
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
        vsig = symbolic_values(scope, in_names, known_sigs) if kind is not None else None
        if vsig is None or any(name in shape_data for name in out_names if name):
            full(NodeView(nodes[k], k))
            continue
        in_types = tuple([None if (slot := get_type(name)) is None else slot.type for name in in_names])
        out_types = tuple([None if (slot := get_type(name)) is None else slot.type for name in out_names])
        before = token()
        key = ("symbolic", op, dom, kind.version, attrs, in_types, tuple(map(bool, in_names)),
               tuple(map(bool, out_names)), out_types, vsig, before)
        entry = outcomes.get(key)
        if entry is not None:
            _replay_valued(scope, entry, in_names, out_names, nodes, k)
            continue
        keep: list = []
        full(NodeView(nodes[k], k), keep)
        if len(keep) == 1 and token() == before and len(outcomes) < MAX_OUTCOMES:
            outcomes[key] = ValuedOutcome(*keep[0])


def _replay_valued(scope, valued: ValuedOutcome, in_names: list, out_names: list, nodes, k: int) -> None:
    """A value-keyed outcome, replayed in the full path's order: output types, the Constant's
    value, the propagated values (of outputs, and of inputs read through their types)."""
    try:
        for name, t in zip(out_names, valued.results):
            if name:
                scope.update_type(name, t)
        effects = valued.effects
        if effects:
            out = out_names[0]
            for is_const, value in effects:
                (scope.const_data if is_const else scope.sparse_data)[out] = value
        additions = valued.additions
        if additions:
            for is_out, i, value in additions:
                keep_value(scope, (out_names if is_out else in_names)[i], value)
    except Exception as exc:  # noqa: BLE001 - sorted out as the full path sorts them
        scope.node_failed(NodeView(nodes[k], k), None, exc)


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

    A node the node pattern reads whose attributes are plain (`nodes.has_no_graph`: they
    hold no graph and, being well formed, would be read without error) is skipped.  Every
    other node is made, as before.
    """
    found = fast_items(graph, "node", len(nodes))
    if found is None:
        return None
    src, spans = found
    matches = map(node_pattern().fullmatch, repeat(src), spans[0::2], spans[1::2])
    picked = [k for k, m in enumerate(matches) if m is None or not has_no_graph(m)]
    return (nodes[k] for k in picked)


def _kind(scope, op: bytes, dom: bytes) -> OpKind | None:
    """The `OpKind` of a cacheable operator, else None."""
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
    if type(fn) is not _PLAIN_FUNCTION:
        return None  # a registered Python function (`pyrules.PythonRule`) runs at every node
    return OpKind(op_type, domain, version, prop)


_PLAIN_FUNCTION = type(_kind)  # our rules are plain functions; a `PythonRule` is not
