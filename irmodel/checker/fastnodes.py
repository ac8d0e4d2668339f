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
"""

from __future__ import annotations

from wirefmt import DecodeError

from .._wireview.nodes import attribute_kinds, masked_kind
from .problems import Reporter

#: The cache of node kinds holds at most this many keys (attributes differing in their
#: values make many).
MAX_KINDS = 4096


class FastState:
    """What the fast path over one graph's nodes keeps: the scope, the verdict caches."""

    __slots__ = ("walker", "nodes", "src", "spans", "ctx", "lex", "path", "depth", "names",
                 "parent_has", "verdicts", "by_kinds")

    def __init__(self, walker, nodes, src, spans, ctx, lex, path, depth) -> None:
        self.walker, self.nodes, self.src, self.spans = walker, nodes, src, spans
        self.ctx, self.lex, self.path, self.depth = ctx, lex, path, depth
        self.names = lex.names
        self.parent_has = outer_lookup(lex.parent)
        self.verdicts: dict = {}  # kind key (kind as bytes, or as `masked_kind`) -> no problem
        self.by_kinds: dict = {}  # kind key (attributes as `attribute_kinds`) -> no problem

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
