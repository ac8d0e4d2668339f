"""Names for anonymous dims: ``unk__0``, ``unk__1``, ... exactly as the reference makes them.

The reference numbers fresh symbols with one counter per model run, skipping any name
already used as a ``dim_param`` in a graph's inputs, outputs or value_info (collected
from each graph when inference enters it, and from every name it has made).  Our
output is compared with the reference's byte for byte, so the order in which dims are
named (`materialize`) follows the reference's order of events exactly.
"""

from __future__ import annotations

from .types import MapType, OptionalType, SequenceType, SparseTensorType, TensorType, UNSET


class SymbolTable:
    """The set of names in use and the counter of the next fresh one."""

    __slots__ = ("_used", "_next", "_pending")

    def __init__(self) -> None:
        self._used: set = set()
        self._next = 0
        self._pending: list = []  # callables that add names; run before the first fresh name

    def defer(self, add_names) -> None:
        """Run ``add_names(self)`` before the next fresh name is made.

        Collecting the names used in a graph's sub-graphs means decoding every attribute
        of every node; most models never need a fresh name, and the set is read only by
        `create_new`, so the collection waits until then (same names, same result).
        """
        self._pending.append(add_names)

    def _flush(self) -> None:
        pending = self._pending
        while pending:
            pending.pop(0)(self)

    def add(self, name: str) -> None:
        self._used.add(name)

    def add_from_type(self, t) -> None:
        kind = type(t)
        if kind is TensorType or kind is SparseTensorType:
            if t.shape is not None:
                for d in t.shape:
                    if type(d) is str:
                        self._used.add(d)
        elif kind is SequenceType or kind is OptionalType:
            if t.elem is not None:
                self.add_from_type(t.elem)
        elif kind is MapType:
            if t.value is not None:
                self.add_from_type(t.value)

    def create_new(self, prefix: str = "unk__") -> str:
        if self._pending:
            self._flush()
        used = self._used
        while True:
            name = f"{prefix}{self._next}"
            self._next += 1
            if name not in used:
                used.add(name)
                return name


def materialize(t, symbols: SymbolTable):
    """``t`` with each unknown dim of each tensor shape named by a fresh symbol.

    Mirrors the reference's walk, including the element type of a sequence, optional or
    map that it creates (empty) on the way when absent.
    """
    kind = type(t)
    if kind is TensorType or kind is SparseTensorType:
        shape = t.shape
        if shape is None or None not in shape:
            return t
        return kind(t.elem, tuple(symbols.create_new() if d is None else d for d in shape))
    if kind is SequenceType or kind is OptionalType:
        elem = t.elem
        new = UNSET if elem is None else materialize(elem, symbols)
        return t if new is elem else kind(new)
    if kind is MapType:
        value = t.value
        new = UNSET if value is None else materialize(value, symbols)
        return t if new is value else MapType(t.key, new)
    return t
