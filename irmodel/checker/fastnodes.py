"""The checker's fast path over a graph's nodes: the cache of verdicts by node kind.

A 75,000-node graph holds a few dozen kinds of node.  The full path makes a NodeProto of
each node and applies every rule to it (tens of microseconds a node).  The fast path
(`graph.Walker._fast_nodes`) reads each node from its bytes with one match of the node
pattern (`irmodel._wireview.nodes`): its input and output names and its *kind* (op_type,
domain, the attributes, how many inputs and outputs and which are empty).  A node's own
rules and its schema's rules depend on nothing else but the check's context, so the full
path runs once per kind, on the first node of that kind, against a scratch reporter, and
its verdict ("no problem") is cached here: every later node of that kind costs a dict
lookup.  The scope rules (topological order, single assignment) are set lookups on the
names read.

Whatever is unusual sends a node to the full path, in its place in the walk, so every
problem is reported exactly as the full path reports it: a node whose kind has problems,
whose names break a scope rule, that the node pattern does not read, or whose attributes
hold anything but numbers, strings, their lists and tensors of dims, data_type and
raw_data (`nodes.attribute_kinds` with ``tensors``: a Constant's scalar, as torch exports
every Python float, is keyed by its tensor's dims, type and raw_data's length, which is
all the tensor rules read: Constants of one shape and type share a verdict whatever their
values).

The full path remembers too (`FastState.full_path`): a node of at most
`MAX_REPLAY_BYTES` bytes that holds no graph has the same own and schema problems as any
node of the same bytes, so they are recorded once, with paths relative to the node, and
replayed for each later copy; only the scope rules run again.  Two million empty nodes
(each three problems) then cost a dict lookup and three counts each, once the problem
limit of each code (`irmodel.limits.MAX_PROBLEMS_PER_CODE`) is reached.
"""

from __future__ import annotations

from wirefmt import DecodeError

from .._wireview.nodes import attribute_kinds, masked_kind
from .problems import Reporter

#: The cache of node kinds holds at most this many keys (attributes differing in their
#: values make many); the cache of replays as many nodes.
MAX_KINDS = 4096
#: Nodes of at most this many bytes are remembered by their bytes for replay (a key costs
#: its bytes: 4096 of them at most 2 MiB).
MAX_REPLAY_BYTES = 512
#: Problems of these codes come from the scope rules, which run for every node.
_SCOPE_CODES = frozenset({"G206", "G207"})


class FastState:
    """What the fast path over one graph's nodes keeps: the scope, the verdict caches."""

    __slots__ = ("walker", "nodes", "src", "spans", "ctx", "lex", "path", "depth", "names",
                 "parent_has", "verdicts", "by_kinds", "replays")

    def __init__(self, walker, nodes, src, spans, ctx, lex, path, depth) -> None:
        self.walker, self.nodes, self.src, self.spans = walker, nodes, src, spans
        self.ctx, self.lex, self.path, self.depth = ctx, lex, path, depth
        self.names = lex.names
        self.parent_has = outer_lookup(lex.parent)
        self.verdicts: dict = {}  # kind key (kind as bytes, or as `masked_kind`) -> no problem
        self.by_kinds: dict = {}  # kind key (attributes as `attribute_kinds`) -> no problem
        self.replays: dict = {}  # a node's bytes -> _Replay

    def verdict(self, k: int, key: tuple, m) -> bool:
        """Whether node ``k``'s own and schema rules find no problem: by the full path, run
        once per kind (attributes compared by `attribute_kinds`) against a scratch reporter.
        ``key`` is the node's kind key, ``m`` its match of the node pattern.  Nodes whose
        kinds differ only in float values (`masked_kind`) share a verdict, kept under the
        masked key, before `attribute_kinds` is asked."""
        kind, in_shape, out_shape = key
        verdicts = self.verdicts
        masked = masked_kind(kind)
        if masked is not kind:
            # Kept by its masked form only: float values that differ from node to node would
            # fill the cache with keys never asked for again.
            key = (masked, in_shape, out_shape)
            ok = verdicts.get(key)
            if ok is not None:
                return ok
        op, domain, attrs = m.group(4, 6, 5)
        kinds = attribute_kinds(attrs, tensors=True) if attrs else ()
        if kinds is None:
            ok = False
        else:
            key2 = (op, domain or b"", kinds, in_shape, out_shape)
            ok = self.by_kinds.get(key2)
            if ok is None:
                ok = self.by_kinds[key2] = self._full_path_finds_nothing(k)
        if len(verdicts) < MAX_KINDS:
            verdicts[key] = ok
        return ok

    def _full_path_finds_nothing(self, k: int) -> bool:
        walker = self.walker
        report = walker.report
        scratch = walker.report = Reporter()
        try:
            walker._node(self.nodes[k], self.ctx, self.lex, f"{self.path}.node[{k}]", self.depth)
            return not scratch.problems
        except DecodeError:
            return False
        finally:
            walker.report = report


    def full_path(self, k: int) -> None:
        """Node ``k`` by the full path (`graph.Walker._one_node`), or replayed from an
        earlier node of the same bytes."""
        walker = self.walker
        start, end = self.spans[2 * k], self.spans[2 * k + 1]
        key = None
        if end - start <= MAX_REPLAY_BYTES:
            key = bytes(self.src[start:end])
            rec = self.replays.get(key)
            if rec is not None:
                npath = f"{self.path}.node[{k}]"
                if rec.inputs:
                    walker.scope_inputs(rec, rec.inputs, self.lex, npath)
                if rec.problems:
                    walker.report.replay(rec.problems, npath, rec.node_name, rec.node_op)
                if rec.outputs:
                    walker.scope_outputs(rec, rec.outputs, self.lex, npath)
                return
        npath = f"{self.path}.node[{k}]"
        try:
            node = self.nodes[k]
        except DecodeError as exc:
            walker.report.add("B001", npath, f"cannot be decoded: {exc}")
            return
        if key is None or len(self.replays) >= MAX_KINDS:
            walker._one_node(node, self.ctx, self.lex, npath, self.depth)
            return
        report = walker.report
        scratch = walker.report = Reporter()
        try:
            walker._one_node(node, self.ctx, self.lex, npath, self.depth)
        finally:
            walker.report = report
        report.merge(scratch)
        if scratch.found != len(scratch.problems) or "B001" in scratch.counts or _holds_graph(node):
            return  # problems of a sub-graph depend on the scope; a decode error stops the walk
        own = tuple((p.code, p.path[len(npath):], p.message) for p in scratch.problems
                    if p.code not in _SCOPE_CODES)
        self.replays[key] = _Replay(tuple(node.input), tuple(node.output), node.name, node.op_type,
                                    own, own and scratch.problems[0])


class _Replay:
    """What a node's bytes decide: its names, and its own and schema problems (code, path
    below the node, message); ``name``/``op_type`` are what scope messages quote."""

    __slots__ = ("inputs", "outputs", "name", "op_type", "node_name", "node_op", "problems")

    def __init__(self, inputs: tuple, outputs: tuple, name, op_type, problems: tuple, first) -> None:
        self.inputs, self.outputs = inputs, outputs
        self.name, self.op_type = name, op_type
        self.problems = problems
        # as `problems.Reporter.add` shows them (cut to length): from a problem it made
        self.node_name: str = first.node_name if first else ""
        self.node_op: str = first.op_type if first else ""


def _holds_graph(node) -> bool:
    return any(a.HasField("g") or len(a.graphs) for a in node.attribute)


def outer_lookup(scope):
    """``name in`` the enclosing scopes, or None when they are all empty (a main graph)."""
    chain = []
    while scope is not None:
        if scope.names:
            chain.append(scope)
        scope = scope.parent
    if not chain:
        return None
    if len(chain) == 1:
        return chain[0].names.__contains__
    return chain[0].this_or_ancestor_graph_has
