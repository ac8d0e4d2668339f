"""Collecting problems while the checker walks a model, and ordering them by location."""

from __future__ import annotations

from ..errors import Problem, ValidationError
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
    """The problems found so far; ``raise_if_any`` ends a check."""

    __slots__ = ("problems",)

    def __init__(self) -> None:
        self.problems: list[Problem] = []

    def add(self, code: str, path: str, message: str, node=None) -> None:
        """Record one problem; ``node`` is the innermost NodeProto concerned, if any."""
        assert code in CODES, code
        if node is not None:
            name, op = _node_names(node)
        else:
            name = op = ""
        self.problems.append(Problem(code, path, name, op, message))

    def sorted(self) -> list[Problem]:
        """The problems by location; problems at one location in the order they were found."""
        segments: dict = {}
        return sorted(self.problems, key=lambda p: location_key(p.path, segments))

    def raise_if_any(self) -> None:
        if self.problems:
            raise ValidationError(self.sorted())


def _node_names(node) -> tuple[str, str]:
    return short(node.name), short(node.op_type)
