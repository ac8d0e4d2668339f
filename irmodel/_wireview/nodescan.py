"""A run of a graph's nodes counted by op, one regular expression search a run.

What ``irmodel inspect`` needs of the nodes of the main graph is their op types.
`count_ops` reads a graph's nodes in runs: one ``findall`` of the node-run pattern
(`irmodel._wireview.patterns`, compiled once and kept in the code cache) over a run's
bytes cuts each node, if all its fields are length-delimited of one-byte tags and
lengths, into its leading names (input, output, name) and its *kind*, every field after
them (op type, attributes, doc string, domain, as exporters write them); the nodes are
counted by kind, and `irmodel._wireview.nodes.node_op` reads each distinct kind once (a
model has a few dozen, against thousands of nodes).  Names need no more than the match:
`node_op` skips them, and a string field is well formed whatever its bytes.  A run whose
matches are not exactly its nodes (a field of 128 bytes or more, a varint field,
anything odd) and a long node are read by `node_op` node by node.
"""

from __future__ import annotations

# Built in (Counter's counting loop, and operator's functions): `collections` and
# `operator` are not imported for them.
from _collections import _count_elements  # type: ignore[import-not-found]
from _operator import gt, itemgetter, sub
from itertools import compress, repeat

from .fastpath import declined, enabled
from .nodes import node_op
from .patterns import compiled

_FIELD, _KIND = itemgetter(0), itemgetter(1)
#: Nodes longer than this (a Constant's tensor of 1 MB) are read one by one by `node_op`:
#: a run's pattern may search its bytes, which would touch every page of the payload.
LONG_NODE = 4096


def count_ops(src, spans: list, depth: int) -> tuple:
    """``(counts, walk)`` of the nodes of a graph whose spans are ``spans`` (start, end,
    start, ... of each ``node`` field's payload) in ``src``: ``counts`` maps ``(op_type,
    domain)`` to how many of them are plain nodes of that op (`node_op`'s answer),
    ``walk`` lists, in order, the indices (into ``spans``' nodes) of the others, which
    the caller makes and walks.  ``depth`` as in `node_op`.

    The nodes are cut into runs at each node longer than `LONG_NODE` (read alone); a
    run's bytes are read by one ``findall`` of the node-run pattern, whose matches are taken
    only if they are exactly the run's nodes: as many as the nodes and each as long as
    the bytes from the end of the node before to the end of its own.  As the matches do
    not overlap, they then cover the run without a gap, so the first starts at the first
    node's tag and, a node's length being read from the same bytes by both, each match
    is its node (a ``node`` field is the only field of a graph with that tag, so no other
    field lies between them).  A run not taken so is read node by node by `node_op`.
    """
    n = len(spans) >> 1
    pattern = compiled("node-run") if enabled(n) else None
    if pattern is None:
        return _count_each(src, spans, range(n), depth, {}, [])
    findall = pattern.findall
    starts, ends = spans[0::2], spans[1::2]
    lengths = list(map(sub, ends, starts))
    long_nodes = list(compress(range(n), map(gt, lengths, repeat(LONG_NODE, n))))
    kinds: dict = {}  # kind -> nodes
    # (first node, end of the run's bytes, start of its first field) of each run the
    # pattern read: a run's matches are dropped once counted (a run's worth of memory at
    # a time, not the graph's: 237 -> 50 page faults on the GPT-2-shaped model), and
    # found again only for a kind `node_op` refuses (rare).
    taken = []
    counts: dict = {}
    walk: list = []
    first = 0
    for stop in (*long_nodes, n):
        if stop > first:
            field_start = starts[first] - (2 if lengths[first] > 127 else 1) - 1
            expected = [ends[first] - field_start, *map(sub, ends[first + 1:stop], ends[first:stop - 1])]
            found = findall(src, field_start, ends[stop - 1])
            if len(found) == stop - first and list(map(len, map(_FIELD, found))) == expected:
                _count_elements(kinds, map(_KIND, found))
                taken.append((first, ends[stop - 1], field_start))
            else:
                declined("node-run", first, "the run's matches are not exactly its nodes")
                _count_each(src, spans, range(first, stop), depth, counts, walk)
            del found
        if stop < n:
            _count_each(src, spans, (stop,), depth, counts, walk)
        first = stop + 1
    refused = set()
    for kind, k in kinds.items():
        op = node_op(kind, 0, len(kind), depth)
        if op is None:
            refused.add(kind)
        else:
            counts[op] = counts.get(op, 0) + k
    if refused:  # rare: the nodes of the kinds node_op refused
        for first, run_end, field_start in taken:
            found = findall(src, field_start, run_end)
            walk += [first + i for i, (_, kind) in enumerate(found) if kind in refused]
    walk.sort()
    return counts, walk


def _count_each(src, spans: list, nodes, depth: int, counts: dict, walk: list) -> tuple:
    """`count_ops` of the ``nodes`` (indices) by `node_op` alone, node by node, into
    ``counts`` and ``walk``."""
    get = counts.get
    for i in nodes:
        op = node_op(src, spans[2 * i], spans[2 * i + 1], depth)
        if op is None:
            declined("node", i, "not a plain node (a graph, a sparse or external tensor) or not well formed")
            walk.append(i)
        else:
            counts[op] = get(op, 0) + 1
    return counts, walk
