"""Shrink an input while it keeps a property (a disagreement between parsers, a crash).

`reduce` works structurally first, on the span tree of the input (`irmodel.fuzz.spans`):
it deletes runs of fields (halves first, then smaller runs, as ddmin does), replaces a
message field by its own fields or by a nested message of the same type, and shortens
length-delimited payloads; every candidate is built by splicing, so the enclosing length
prefixes stay right and a candidate stays as malformed as the input, no more.  Then it
deletes runs of bytes, to get rid of what structure cannot (a malformed tail).  It stops
at a fixed point or when its budget of tests is spent.

`reduce_disagreement` keeps a runner's *outcome vector* (each target's outcome, as in
`irmodel.fuzz.runner`) and `write_reproducer` saves the result as bytes and as raw text
(`wirefmt.rawtext`, which turns back into the same bytes and can be edited).
"""

from __future__ import annotations

import os
from typing import Callable

from wirefmt import Registry
from wirefmt.rawtext import render

from .spans import Node, SpanTree


class _Budget(Exception):
    """The test budget is spent."""


class _Tester:
    """Calls the predicate at most ``budget`` times, never twice on the same bytes."""

    def __init__(self, predicate: Callable[[bytes], bool], budget: int):
        self.predicate = predicate
        self.budget = budget
        self.tests = 0
        self.seen: dict = {}

    def __call__(self, data: bytes) -> bool:
        hit = self.seen.get(data)
        if hit is None:
            if self.tests >= self.budget:
                raise _Budget
            self.tests += 1
            hit = self.seen[data] = bool(self.predicate(data))
        return hit


def _containers_by_size(t: SpanTree) -> list:
    return sorted(t.containers, key=lambda c: -(c.end - c.start))


def _delete_runs(data: bytes, t: SpanTree, test: _Tester) -> bytes | None:
    """Delete runs of sibling fields, largest containers and longest runs first."""
    for c in _containers_by_size(t):
        kids = c.children
        n = len(kids)
        size = n
        while size >= 1:
            for i in range(0, n - size + 1, size):
                candidate = c.splice(data, kids[i].tag_start, kids[i + size - 1].stop, b"")[0]
                if len(candidate) < len(data) and test(candidate):
                    return candidate
            size //= 2
    return None


def _fields_largest_first(t: SpanTree) -> list:
    return sorted(t.fields, key=lambda n: -(n.stop - n.tag_start))


def _hoist(data: bytes, t: SpanTree, test: _Tester) -> bytes | None:
    """Replace a message field by its fields, or its payload by a same-type descendant's."""
    for n in _fields_largest_first(t):
        if n.children is None or n.parent is None:
            continue
        p = n.parent
        candidate = p.splice(data, n.tag_start, n.stop, data[n.start:n.tail])[0]
        if len(candidate) < len(data) and test(candidate):
            return candidate
        type_name = n.field_spec.type_name if n.field_spec is not None else None
        for d in _descendants(n):
            same = (d.field_spec is not None and d.field_spec.type_name == type_name) if type_name \
                else d.number == n.number
            if same and d.children is not None:
                candidate = n.splice(data, n.start, n.end, data[d.start:d.end])[0]
                if len(candidate) < len(data) and test(candidate):
                    return candidate
    return None


def _descendants(n: Node):
    stack = list(n.children or ())
    while stack:
        d = stack.pop()
        yield d
        stack.extend(d.children or ())


def _shorten_payloads(data: bytes, t: SpanTree, test: _Tester) -> bytes | None:
    """Cut length-delimited leaves (strings, bytes, packed data): empty, then halves."""
    for n in _fields_largest_first(t):
        if n.wire_type != 2 or n.children is not None or n.end == n.start:
            continue
        size = n.end - n.start
        for keep in (0, size // 4, size // 2):
            if keep >= size:
                continue
            candidate = n.splice(data, n.start + keep, n.end, b"")[0]
            if test(candidate):
                return candidate
    return None


def _delete_bytes(data: bytes, test: _Tester) -> bytes:
    """ddmin over bytes: delete chunks of halving size while the property holds."""
    size = max(1, len(data) // 2)
    while size >= 1:
        i = 0
        while i < len(data):
            candidate = data[:i] + data[i + size:]
            if len(candidate) < len(data) and test(candidate):
                data = candidate
            else:
                i += size
        size //= 2
    return data


def reduce(data: bytes, predicate: Callable[[bytes], bool], *, registry: Registry | None = None,
           root_type: str | None = None, max_tests: int = 3000) -> bytes:
    """The smallest input found for which ``predicate`` is still true.

    ``predicate(data)`` must be true for the input itself (``ValueError`` otherwise).
    With a schema, fields are known by type (a nested message is replaced only by one of
    its own type).  At most ``max_tests`` calls of the predicate.
    """
    data = bytes(data)
    test = _Tester(predicate, max_tests)
    if not test(data):
        raise ValueError("the predicate is false for the input itself: nothing to keep")
    try:
        while True:
            t = SpanTree(data, registry, root_type)
            smaller = (_delete_runs(data, t, test) or _hoist(data, t, test)
                       or _shorten_payloads(data, t, test))
            if smaller is None:
                break
            data = smaller
        data = _delete_bytes(data, test)
        while True:  # bytes removed may have made structure removable again
            t = SpanTree(data, registry, root_type)
            smaller = _delete_runs(data, t, test) or _hoist(data, t, test)
            if smaller is None:
                break
            data = smaller
    except _Budget:
        pass
    return data


def outcome_vector(outcomes) -> tuple:
    return tuple(o.outcome for o in outcomes)


def reduce_disagreement(runner, data: bytes, *, registry: Registry | None = None,
                        root_type: str | None = None, max_tests: int = 3000) -> tuple[bytes, tuple]:
    """Shrink ``data`` keeping the outcome vector ``runner`` gives it; returns (bytes, vector)."""
    wanted = outcome_vector(runner.run_one(data))
    small = reduce(data, lambda d: outcome_vector(runner.run_one(d)) == wanted, registry=registry,
                   root_type=root_type, max_tests=max_tests)
    return small, wanted


def write_reproducer(data: bytes, stem: str, *, note: str = "") -> tuple[str, str]:
    """Write ``stem.bin`` (the bytes) and ``stem.txt`` (raw text, exact form); returns the paths.

    ``note`` is written at the top of the text as comments (say, the outcome vector);
    `wirefmt.rawtext.encode` of the text gives the bytes back.
    """
    os.makedirs(os.path.dirname(os.path.abspath(stem)), exist_ok=True)
    bin_path, txt_path = stem + ".bin", stem + ".txt"
    with open(bin_path, "wb") as f:
        f.write(data)
    header = "".join(f"# {line}\n" for line in note.splitlines())
    header += f"# {len(data)} bytes; wirefmt.rawtext.encode(this text) gives them back\n"
    with open(txt_path, "w", encoding="utf-8") as f:
        f.write(header + render(data, expand_partial=True))
    return bin_path, txt_path


__all__ = ["reduce", "reduce_disagreement", "write_reproducer", "outcome_vector"]
