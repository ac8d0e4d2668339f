"""Which nodes (and initializers) may hold an external tensor or a graph: the external-data walk's skip.

Finding a model's external tensors (to check, map, copy or inline their data) walks every
node for tensor attributes and sub-graphs; made as messages, 2,000,000 empty nodes cost
40 s that way and one node of 300,000 attributes 800 MiB.  Almost no node holds a tensor
(a ``Constant`` does) or a graph (``If``, ``Loop``, ``Scan``), and that is read from its
bytes: `tensor_holders` gives the indices of the nodes that may, and the walk
(`irmodel._walk.walk`'s ``pick``) makes only those.

A node is skipped when it is empty (zero bytes: nothing at all) or `nodes.node_op` reads
it as *plain*: well formed, and its attributes hold no graph, no sparse tensor and no
tensor that sets ``data_location``; so a skipped node holds no external tensor and
nothing below it does.  Every other node (a ``Constant``, a node with a sub-graph, and a
node the reader declines, malformed ones included) is made and walked as before, which
raises what bad bytes deserve.

A graph's initializers are picked the same way: one that `tensorscan.tensor_header` reads
as *simple* keeps its data in the file (``data_location`` absent or DEFAULT), so only the
others are made (a model of 24,000 initializers made each of them at every save).
"""

from __future__ import annotations

from itertools import compress
from operator import sub

from wirefmt.itemsource import item_sources

from .fastpath import declined, fast_paths_on, items_read
from .nodes import node_op
from .tensorscan import tensor_header


def tensor_holders(container, depth: int, field: str = "node") -> list | None:
    """The indices, in order, of the nodes of ``container`` (a GraphProto or a
    FunctionProto) that may hold a tensor or a graph, or that changed since they were
    read (their bytes are stale); None when the byte readers do not run for it (fast
    paths off, a node list changed in memory): walk every node.  The nodes may be the
    container's own bytes or a list adopted from other bytes (`wirefmt.adopt_items`:
    an inlined graph's stamped nodes).
    ``depth``: the nodes' nesting depth as the message path sees it (2 for a model's
    main graph), which bounds group skipping as there.

    The fast paths' item threshold (`fastpath.FAST_FROM`) does not apply: it pays for
    loading a pattern, and `node_op` uses none; and one node may be the whole model
    (300,000 attributes in one node cost 25 s as messages, 0.6 s read here).

    ``field="initializer"`` (a GraphProto's): the initializers that may be external
    instead (see the module docstring)."""
    if not fast_paths_on():
        return None
    if field == "initializer":
        return _external_candidates(container)
    found = item_sources(container, "node")
    if found is None:
        return None
    src, spans, changed = found
    starts, ends = spans[0::2], spans[1::2]
    stale = set(changed)  # made whatever their old bytes say (even empty ones)
    out = []
    for i in compress(range(len(starts)), map(sub, ends, starts)):  # the non-empty nodes
        if i not in stale and node_op(src, starts[i], ends[i], depth) is None:
            declined("holders", i, "may hold a tensor or a graph, or not read as a plain node")
            out.append(i)
    return sorted(stale.union(out)) if stale else out


def _external_candidates(graph) -> list | None:
    """The indices of ``graph``'s initializers that may be external (or changed since read)."""
    read = items_read(graph, "initializer", tensor_header)
    return None if read is None else [i for i, header in enumerate(read) if header is None]
