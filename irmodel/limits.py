"""Sizes computed from numbers read from a file, with one bound: `MAX_SIZE`.

A tensor's ``dims`` are int64 values from the file; their product is its element count.
Computed naively, 250 dims of 2**62 make a 4,700-digit integer that Python refuses to
print (``int`` to ``str`` stops at 4,300 digits) and 100,000 of them (a 0.9 MB file)
make a quadratic chain of big-integer multiplications that runs for half a minute.
Nothing real has more than ``MAX_SIZE`` elements or bytes, so every count and size here
stops growing there and says `TOO_LARGE`: the work is linear in the number of dims with
small integers throughout, and a result is never too long to print.

Every layer that derives a size from a file's numbers uses these functions (the
``inspect`` summary, ``dump``, ``to_array``; the checker and inference are to use them
too), so that they agree on what "too large" means:

* `element_count` (``dims`` -> elements, ``None`` for a negative dim),
* `byte_size` (elements of a given bit width -> bytes, packed, rounded up),
* `add_sizes` (a bounded sum), `is_too_large`, and `size_text` to print one;
* `int_text` (from `wirefmt.safetext`, its one home, since the decoder's messages use it
  too): any integer for a message, a huge one said by its length in digits.

It is also the home of the named budgets of work whose size a file decides
(`MAX_VALUE_ELEMENTS`, `MAX_PROPAGATED_ELEMENTS`: data propagation in inference, see
docs/inference-values.md), each with the reason for its number.

A result is an ``int`` from 0 to `MAX_SIZE`, or `TOO_LARGE` (``MAX_SIZE + 1``, an int
too, so comparisons and ``min``/``max`` keep working).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs every process a few ms
    from typing import Iterable

    from wirefmt.safetext import MAX_INT_DIGITS, int_text

#: The largest element count or byte size we compute: int64's maximum.  ONNX dims are
#: int64, numpy sizes are a signed 64-bit ``intp``, file offsets are a signed 64-bit
#: ``off_t``: no implementation can hold more.
MAX_SIZE = (1 << 63) - 1
#: What a bounded computation gives past `MAX_SIZE`.
TOO_LARGE = MAX_SIZE + 1


#: The most elements of one value that inference reads or computes: a constant offered to
#: shape computations (`inference.tensordata`), or a value computed by data propagation
#: (a shape, a slice or concatenation of shapes).  Such values hold dims and axes: a rank
#: is at most a few dozen in practice, and a shape computation of 4,096 elements covers
#: every exporter's; a larger value (20,000 copies of a shape concatenated: 400 million
#: elements from a 100 KB file) is a weight or an attack, and becomes "unknown value".
MAX_VALUE_ELEMENTS = 4096
#: The most elements data propagation computes in one inference run (the model's graph,
#: its sub-graphs and the function calls they make).  Every propagated value is held until
#: the run ends (a later node may read it), so this bounds the memory they take (a chain
#: of 3,000 Concats, each appending a shape to the last, held 3.7 GiB) and the work (2,000
#: Adds of the same 4,096-element value): 4 Mi elements are at most ~170 MB of tuples and
#: a few seconds of arithmetic, and a real model propagates a few elements per shape node
#: (a 200,000-node graph full of shape computations, a few hundred thousand).  Once spent,
#: every later value of the run is unknown, as without data propagation.
MAX_PROPAGATED_ELEMENTS = 1 << 22

def element_count(dims: Iterable[int]) -> int | None:
    """The product of ``dims``, bounded: `TOO_LARGE` past `MAX_SIZE`, ``None`` when a
    dim is negative (no count at all).  A zero dim makes the count 0 whatever the
    others are.  Linear in ``len(dims)``, with integers below 2**126 throughout."""
    n = 1
    zero = False
    for d in dims:
        if d < 0:
            return None
        if d == 0:
            zero = True
        elif n <= MAX_SIZE:
            n *= d  # both factors <= 2**63: no big integers
    if zero:
        return 0
    return n if n <= MAX_SIZE else TOO_LARGE


def byte_size(count: int, bits: int) -> int:
    """The bytes ``count`` elements of ``bits`` bits take, packed (sub-byte types share
    bytes) and rounded up to whole bytes; bounded like `element_count`."""
    if count > MAX_SIZE:
        return TOO_LARGE
    n = (count * bits + 7) // 8
    return n if n <= MAX_SIZE else TOO_LARGE


def add_sizes(sizes: Iterable[int]) -> int:
    """The sum of ``sizes``, bounded: `TOO_LARGE` once it passes `MAX_SIZE`."""
    total = 0
    for s in sizes:
        total += s
        if total > MAX_SIZE:
            return TOO_LARGE
    return total


def is_too_large(size: int | None) -> bool:
    return size is not None and size > MAX_SIZE


def size_text(size: int | None, unit: str = "") -> str:
    """``size`` for a message or a listing: the number (and ``unit``), ``too large``
    past `MAX_SIZE`, ``unknown`` for ``None``.  Never prints more than 19 digits."""
    if size is None:
        return "unknown"
    if size > MAX_SIZE:
        return "too large (over 2^63-1" + (f" {unit}" if unit else "") + ")"
    return f"{size} {unit}" if unit else str(size)




def __getattr__(name: str):
    """`int_text` and `MAX_INT_DIGITS`, re-exported from `wirefmt.safetext` when first
    asked for: nothing here uses them, and a process that only measures sizes (``inspect``)
    does not load the text module."""
    if name in ("int_text", "MAX_INT_DIGITS"):
        from wirefmt import safetext  # noqa: PLC0415 - see the docstring

        return getattr(safetext, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["MAX_SIZE", "MAX_VALUE_ELEMENTS", "MAX_PROPAGATED_ELEMENTS", "MAX_INT_DIGITS", "int_text", "TOO_LARGE", "element_count", "byte_size", "add_sizes", "is_too_large",
           "size_text"]


# -- the checker and inference on large models (issue 31) -----------------------------------
# Two million nodes broken the same way are one problem two million times: listing each
# costs seconds and hundreds of MiB and tells the reader nothing the first thousand do not.

#: The checker lists at most this many problems of one code; the rest are counted and
#: summarized in one last problem of that code ("and N more ... not listed").
MAX_PROBLEMS_PER_CODE = 1000
#: Inference nests sub-graphs and function calls in each other at most this many levels
#: deep, the two counted together (a sub-graph or a call is one level).  Above what a model
#: onnx accepts can reach: 100 chained local functions (the checker's and onnx's bound),
#: each at most 33 If levels deep inside its 100 message levels, are 3,400 levels.  Python's
#: stack is never the bound below it (`irmodel.inference.nesting`).
MAX_NESTING = 4096

__all__ += ["MAX_PROBLEMS_PER_CODE", "MAX_NESTING"]
