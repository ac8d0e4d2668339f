"""Collecting problems while the checker walks a model, and ordering them by location."""

from __future__ import annotations

from ..errors import Problem, ValidationError
from .. import limits
from .codes import CODES

# Reading order of the fields that appear in paths, so that problems come out in the
# order a reader meets their location: a model's header before its graph, a graph's
# inputs before its nodes, a node's inputs before its attributes.  Names not listed
# sort after, alphabetically.
_FIELD_RANK = {name: i for i, name in enumerate((
    "ir_version", "opset_import", "metadata_props", "graph", "functions",
    "name", "input", "output", "op_type", "domain", "overload", "attribute",
    "initializer", "sparse_initializer", "value_info", "node",
    "type", "t", "tensors", "sparse_tensor", "sparse_tensors", "g", "graphs",
    "values", "indices", "data_type", "dims", "external_data",
))}

# Longest name or value quoted in a message: an attacker's megabyte-long name is cut.
_QUOTE_LIMIT = 200


def short(text) -> str:
    """A name from the model as shown in a message, cut to a readable length."""
    if not isinstance(text, str):  # a proto2 string that is not UTF-8 reads as bytes
        text = repr(bytes(text)) if isinstance(text, (bytes, memoryview)) else str(text)
    return text if len(text) <= _QUOTE_LIMIT else text[:_QUOTE_LIMIT] + "..."


def _segment_key(part: str) -> tuple:
    name, bracket, rest = part.partition("[")
    key: list[tuple[int, int | str]] = [(_FIELD_RANK.get(name, len(_FIELD_RANK)), name)]
    if bracket:
        key.extend((-1, int(index) if index.isdigit() else -1) for index in rest[:-1].split("]["))
    return tuple(key)


def location_key(path: str, cache: dict | None = None) -> tuple:
    """A sort key for a problem path: fields in reading order, indices numerically.

    ``cache`` maps path segments (``attribute[0]``) to their keys across calls.
    """
    if cache is None:
        cache = {}
    key: tuple = ()
    for part in path.split("."):
        k = cache.get(part)
        if k is None:
            k = cache[part] = _segment_key(part)
        key += k
    return key


class Reporter:
    """The problems found so far; ``raise_if_any`` ends a check.

    Of each code, the first `irmodel.limits.MAX_PROBLEMS_PER_CODE` found are kept in ``problems``; later
    ones are only counted (``found`` counts every problem), and `sorted` ends with one
    summary problem per code that had more ("and N more").  A model broken the same way
    in each of two million nodes is reported in full by its first thousand, and the rest
    costs a dict update each (`listing` lets a caller skip composing a message too).
    """

    __slots__ = ("problems", "counts", "found", "limit")

    def __init__(self, limit: int | None = None) -> None:
        self.problems: list[Problem] = []
        self.counts: dict[str, int] = {}  # code -> problems found of it
        self.found = 0
        self.limit = limits.MAX_PROBLEMS_PER_CODE if limit is None else limit

    def add(self, code: str, path: str, message: str, node=None) -> None:
        """Record one problem; ``node`` is the innermost NodeProto concerned, if any."""
        assert code in CODES, code
        self.found += 1
        n = self.counts[code] = self.counts.get(code, 0) + 1
        if n > self.limit:
            return
        if node is not None:
            name, op = _node_names(node)
        else:
            name = op = ""
        self.problems.append(Problem(code, path, name, op, message))

    def replay(self, problems: tuple, prefix: str, node_name: str, op_type: str) -> None:
        """`add` problems recorded before: ``(code, path below prefix, message)`` each, of
        a node whose name and op_type (already cut to length) are given."""
        counts = self.counts
        limit = self.limit
        self.found += len(problems)
        for code, suffix, message in problems:
            n = counts[code] = counts.get(code, 0) + 1
            if n <= limit:
                self.problems.append(Problem(code, prefix + suffix, node_name, op_type, message))

    def merge(self, other: "Reporter") -> None:
        """Take over the problems of ``other`` (a scratch reporter), in their order."""
        for p in other.problems:
            self.replay(((p.code, p.path, p.message),), "", p.node_name, p.op_type)
        for code, n in other.counts.items():
            if n > other.limit:
                self.count(code, n - other.limit)

    def listing(self, code: str) -> bool:
        """Whether a problem of ``code`` found now would be listed (not only counted)."""
        return self.counts.get(code, 0) < self.limit

    def count(self, code: str, n: int = 1) -> None:
        """Count ``n`` problems of ``code`` past its limit without composing them."""
        self.found += n
        self.counts[code] = self.counts.get(code, 0) + n

    def sorted(self) -> list[Problem]:
        """The problems by location; problems at one location in the order they were found;
        then one summary per code of which more were found than listed."""
        segments: dict = {}
        out = sorted(self.problems, key=lambda p: location_key(p.path, segments))
        for code, n in sorted(self.counts.items()):
            if n > self.limit:
                out.append(Problem(code, "", "", "", f"and {n - self.limit} more problems of code {code} "
                                   f"({CODES[code][0]}), not listed: at most {self.limit} of each code are "
                                   "listed (irmodel.limits.MAX_PROBLEMS_PER_CODE)"))
        return out

    def raise_if_any(self) -> None:
        if self.problems:
            raise ValidationError(self.sorted())


def _node_names(node) -> tuple[str, str]:
    return short(node.name), short(node.op_type)
