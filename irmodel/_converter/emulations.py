"""Steps that compute a newer operator's behaviour with older operators.

Where an operator, or a value of one of its attributes, has no older form, the node is
rewritten into older operators that compute the same: Trilu (new in 14) as a Where over a
mask of the last two axes, Mod (new in 10) in double precision where that is exact,
ArgMax/ArgMin ``select_last_index`` (new in 12) on the input reversed along the axis,
Tile-6's ``repeats`` as one Tile-1 per repeated axis (and back), GroupNormalization's
per-group scale and bias (18) as per-channel ones (21) and back.  The nodes are written for
the opset named at each function and converted on to the target by the driver, which
reports any of them that does not exist there (Where below 9, Range below 11).
"""

from __future__ import annotations

from .adapters import _base, _node
from .changes import INT64, add_constant
from .errors import StepRefused
from .work import NewNode

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .changes import StepInfo
    from .scope import Scope
    from .work import NodeWork

_BOOL, _STRING, _DOUBLE, _FLOAT, _FLOAT16 = 9, 8, 11, 1, 10

#: The most elements a constant sized by the model's dims may have (a mask, a list of
#: indices): beyond, the values are computed when the graph runs, so that no allocation
#: here is sized by the input.
MAX_MADE_CONSTANT = 1 << 16


class _Writer:
    """Adds nodes after ``w`` for opset ``version``, each output a fresh name."""

    def __init__(self, w: NodeWork, s: Scope, version: int) -> None:
        self.w, self.s, self.version = w, s, version

    def node(self, op: str, inputs, what: str, out: str | None = None, **attrs) -> str:
        out = out or self.s.fresh(_base(self.w, what))
        self.w.after.append(NewNode(_node(op, inputs, [out], **attrs), self.version))
        return out

    def const(self, values, what: str, elem: int = INT64, scalar: bool = False) -> str:
        """A constant; its Constant node (if any) goes with the nodes written after ``w``."""
        before = len(self.w.before)
        name = add_constant(self.w, self.s, values, elem, _base(self.w, what), self.version, scalar=scalar)
        self.w.after.extend(self.w.before[before:])
        del self.w.before[before:]
        return name


def _zero(elem: int):
    """A 0-D array holding the zero of element type ``elem`` ("" for strings)."""
    import numpy as np  # noqa: PLC0415

    from .. import helper  # noqa: PLC0415

    if elem == _STRING:
        return np.array(b"", dtype=object)
    try:
        return np.zeros((), dtype=helper.tensor_dtype_to_np_dtype(elem))
    except Exception:  # noqa: BLE001 - an element type numpy cannot hold
        raise StepRefused("V004", f"no zero of element type {elem} can be written") from None


# -- Trilu, new in 14 --------------------------------------------------------------------------

def trilu_down(w: NodeWork, s: Scope, step: StepInfo) -> None:
    """Below 14: Where(mask, x, 0), the mask comparing column - row with k over the last two
    axes (a constant when they and k are; else made with Range, new in 11)."""
    import numpy as np  # noqa: PLC0415

    x, k, y = w.input(0), w.input(1), w.output(0)
    elem = s.elem_type(x)
    if elem is None:
        raise StepRefused("V007", "the input's element type is not known, and Trilu becomes a "
                                  "Where with a zero of that type")
    upper = w.value("upper", 1)
    out = _Writer(w, s, step.old_version)
    shape = s.shape(x)
    m, n = (shape[-2], shape[-1]) if shape is not None and len(shape) >= 2 else (None, None)
    k_value = [0] if not k else s.constant_ints(k)
    if isinstance(m, int) and isinstance(n, int) and m * n <= MAX_MADE_CONSTANT:
        offsets = np.arange(n, dtype=np.int64)[None, :] - np.arange(m, dtype=np.int64)[:, None]
        if k_value is not None and len(k_value) == 1:
            keep = offsets >= k_value[0] if upper else offsets <= k_value[0]
            mask = out.const(keep, "mask")
        else:
            mask = _compare(out, out.const(offsets, "diff"), k, upper)
    else:
        dims = out.node("Shape", [x], "shape")
        rows = out.node("Range", [out.const(0, "zero", scalar=True),
                                  out.node("Gather", [dims, out.const(-2, "m_at", scalar=True)], "m"),
                                  out.const(1, "one", scalar=True)], "rows")
        cols = out.node("Range", [out.const(0, "zero", scalar=True),
                                  out.node("Gather", [dims, out.const(-1, "n_at", scalar=True)], "n"),
                                  out.const(1, "one", scalar=True)], "cols")
        column = out.node("Unsqueeze", [rows, out.const([1], "axes")], "rows_column")
        diff = out.node("Sub", [cols, column], "diff")
        mask = _compare(out, diff, k or out.const(0, "k", scalar=True), upper)
    out.node("Where", [mask, x, out.const(_zero(elem), "zero_value")], "", out=y)
    w.removed = True


def _compare(out: _Writer, diff: str, k: str, upper: bool) -> str:
    """The mask ``diff >= k`` (upper) or ``diff <= k`` (lower), from Less/Greater and Not."""
    if upper:
        return out.node("Not", [out.node("Less", [diff, k], "below")], "mask")
    return out.node("Not", [out.node("Greater", [diff, k], "above")], "mask")


# -- Mod, new in 10 ----------------------------------------------------------------------------

#: Integer types whose values a double holds exactly (and whose quotients it orders right).
_EXACT_INTS = {2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32", 12: "uint32"}
#: Added to |q| before q is divided by it: q / (|q| + tiny) is exactly q's sign where
#: |q| >= 1, and 0 where q is 0.
_TINY = 1e-300


def mod_down(w: NodeWork, s: Scope, step: StepInfo) -> None:
    """Below 10: computed in double, ``a - b * floor(a / b)`` (fmod=0, the sign of b) or
    ``a - b * trunc(a / b)`` (fmod=1, the sign of a), trunc as floor(|q|) times
    q / (|q| + 1e-300) (q's sign where |q| >= 1; where |q| < 1 floor(|q|) is 0; Sign is new
    in 9 and onnxruntime has no Clip-6 for double).
    Exact for integers up to 32 bits and for float and float16 while |a / b| < 2**29;
    double and 64-bit integers are refused (their quotients are not exact in double)."""
    a, b, y = w.input(0), w.input(1), w.output(0)
    elem = s.elem_type(a) or s.elem_type(b)
    if elem is None:
        raise StepRefused("V007", "the element type is not known, and Mod is computed in double "
                                  "only where that is exact")
    fmod = w.value("fmod", 0)
    if elem not in _EXACT_INTS and elem not in (_FLOAT, _FLOAT16):
        raise StepRefused("V004", f"Mod on element type {elem} cannot be computed exactly before "
                                  "version 10 (only integers up to 32 bits, float and float16)")
    if elem in (_FLOAT, _FLOAT16) and not fmod:
        raise StepRefused("V003", "fmod=0 on floating-point inputs is not defined before version 28")
    out = _Writer(w, s, step.old_version)
    xa = out.node("Cast", [a], "a", to=_DOUBLE)
    xb = out.node("Cast", [b], "b", to=_DOUBLE)
    q = out.node("Div", [xa, xb], "quotient")
    if fmod:
        size = out.node("Abs", [q], "abs")
        magnitude = out.node("Floor", [size], "floor_abs")
        apart = out.node("Add", [size, out.const(_TINY, "tiny", _DOUBLE, scalar=True)], "apart")
        whole = out.node("Mul", [magnitude, out.node("Div", [q, apart], "sign")], "trunc")
    else:
        whole = out.node("Floor", [q], "floor")
    r = out.node("Sub", [xa, out.node("Mul", [xb, whole], "product")], "remainder")
    out.node("Cast", [r], "", out=y, to=elem)
    w.removed = True


# -- ArgMax/ArgMin select_last_index, new in 12 -------------------------------------------------

def select_last_index_down(w: NodeWork, s: Scope, step: StepInfo) -> None:
    """Below 12: the last index of the extreme is ``n - 1`` minus the first index of it in
    the input reversed along the axis: a Gather of n-1 .. 0 where n is known (and small),
    else a Slice with step -1 and n read from the input's shape (Slice takes steps from 10)."""
    import numpy as np  # noqa: PLC0415

    if not w.value("select_last_index", 0):
        w.drop("select_last_index")
        return
    x, y = w.input(0), w.output(0)
    shape = s.shape(x)
    r = s.need_rank(x, "select_last_index=1 reverses the input along the axis")
    axis = w.value("axis", 0)
    if not -r <= axis < r:
        raise StepRefused("V003", f"axis={axis} is outside the input's rank {r}")
    axis %= r
    n = shape[axis] if shape is not None else None
    v = step.old_version
    rev, first = s.fresh(_base(w, "reversed")), s.fresh(_base(w, "first"))
    if isinstance(n, int) and 0 < n <= MAX_MADE_CONSTANT:
        indices = add_constant(w, s, np.arange(n - 1, -1, -1, dtype=np.int64), INT64, _base(w, "reversed_at"), v)
        w.before.append(NewNode(_node("Gather", [x, indices], [rev], axis=axis), v))
        last = add_constant(w, s, n - 1, INT64, _base(w, "last"), v, scalar=True)
    else:
        c = [add_constant(w, s, [value], INT64, _base(w, what), v)
             for value, what in ((-1, "from"), (-(2**63), "to"), (axis, "axes"), (-1, "steps"))]
        w.before.append(NewNode(_node("Slice", [x] + c, [rev]), v))
        dims = s.fresh(_base(w, "shape"))
        size = s.fresh(_base(w, "size"))
        last = s.fresh(_base(w, "last"))
        at = add_constant(w, s, axis, INT64, _base(w, "at"), v, scalar=True)
        one = add_constant(w, s, 1, INT64, _base(w, "one"), v, scalar=True)
        w.before += [NewNode(_node("Shape", [x], [dims]), v), NewNode(_node("Gather", [dims, at], [size]), v),
                     NewNode(_node("Sub", [size, one], [last]), v)]
    w.inputs[0] = rev
    w.outputs[0] = first
    w.drop("select_last_index")
    w.set("axis", axis)  # the rank is known here; the reversed input's may not be later
    w.after.append(NewNode(_node("Sub", [last, first], [y]), v))


# -- Tile 1 <-> 6 ------------------------------------------------------------------------------

def tile_up(w: NodeWork, s: Scope, step: StepInfo) -> None:
    """Up to 6: Tile-1 repeats ``tiles`` times along ``axis`` (both constants here) ->
    ``repeats`` with ``tiles`` at ``axis`` and 1 elsewhere (needs the rank)."""
    tiles, axis = s.constant(w.input(1)), s.constant(w.input(2))
    if tiles is None or axis is None or tiles.size != 1 or axis.size != 1:
        raise StepRefused("V002", "Tile-1's tiles and axis must be one-element constants to "
                                  "become Tile-6's repeats")
    r = s.need_rank(w.input(0), "Tile-6's repeats has one entry per axis")
    a, t = int(axis.reshape(-1)[0]), int(tiles.reshape(-1)[0])
    if not -r <= a < r or t < 0:
        raise StepRefused("V003", f"tiles={t} along axis={a} of a rank-{r} input")
    repeats = [1] * r
    repeats[a % r] = t
    w.inputs[1:] = [add_constant(w, s, repeats, INT64, _base(w, "repeats"), step.version)]
    w.changed = True


def tile_down(w: NodeWork, s: Scope, step: StepInfo) -> None:
    """Down from 6: one Tile-1 per axis repeated other than once (an Identity if none);
    Tile-1 takes ``tiles`` and ``axis`` as tensors of the input's float type (as its
    schema declares them)."""
    import numpy as np  # noqa: PLC0415

    repeats = s.constant_ints(w.input(1))
    if repeats is None:
        raise StepRefused("V002", "input 'repeats' must be a constant to become Tile-1's "
                                  "tiles and axis")
    if any(t < 0 for t in repeats):
        raise StepRefused("V003", f"repeats={repeats} has a negative count")
    elem = s.elem_type(w.input(0))
    if elem not in (_FLOAT, _FLOAT16, _DOUBLE):
        raise StepRefused("V004" if elem else "V007", "Tile-1 takes float, float16 or double only"
                          + ("" if elem else "; the input's element type is not known"))
    from .. import helper  # noqa: PLC0415

    dtype = helper.tensor_dtype_to_np_dtype(elem)
    out = _Writer(w, s, step.old_version)
    current, y = w.input(0), w.output(0)
    steps = [(a, t) for a, t in enumerate(repeats) if t != 1]
    if not steps:
        out.node("Identity", [current], "", out=y)
    for i, (a, t) in enumerate(steps):
        current = out.node("Tile", [current, out.const(np.array(t, dtype), "tiles"),
                                    out.const(np.array(a, dtype), "axis")], "tiled",
                           out=y if i == len(steps) - 1 else None)
    w.removed = True


# -- GroupNormalization 18 <-> 21 --------------------------------------------------------------

def group_norm_up(w: NodeWork, s: Scope, step: StepInfo) -> None:
    """Up to 21: scale and bias per group (G) become per channel (C): each group's value
    repeated C / G times (constants when they are and C is known; else nodes that read C
    from the input's shape when the graph runs)."""
    import numpy as np  # noqa: PLC0415

    groups = w.value("num_groups")
    if groups is None:
        raise StepRefused("V005", "attribute num_groups is missing")
    shape = s.shape(w.input(0))
    c = shape[1] if shape is not None and len(shape) >= 2 else None
    scale, bias = s.constant(w.input(1)), s.constant(w.input(2))
    if (isinstance(c, int) and 0 < c <= MAX_MADE_CONSTANT and groups > 0 and c % groups == 0
            and scale is not None and bias is not None and scale.shape == bias.shape == (groups,)):
        # Constants (small: one value per group) become per-channel constants.
        for i, value, what in ((1, scale, "scale"), (2, bias, "bias")):
            w.inputs[i] = add_constant(w, s, np.repeat(value, c // groups), 0, _base(w, what), step.version)
        w.changed = True
        return
    out = _Writer(w, s, step.version)
    x = w.input(0)
    channels = out.node("Shape", [x], "channels", start=1, end=2)
    g = out.const([groups], "groups")
    wide = out.node("Concat", [g, out.node("Div", [channels, g], "per_group")], "wide_shape", axis=0)
    axes = out.const([1], "axes")
    for i, what in ((1, "scale"), (2, "bias")):
        column = out.node("Unsqueeze", [w.input(i), axes], f"{what}_column")
        spread = out.node("Expand", [column, wide], f"{what}_spread")
        w.inputs[i] = out.node("Reshape", [spread, channels], f"{what}_per_channel")
    w.before.extend(w.after)
    w.after = []
    w.changed = True


def group_norm_down(w: NodeWork, s: Scope, step: StepInfo) -> None:
    """Down from 21: per-channel scale and bias that are constants, equal within each group,
    become per-group ones; any other node becomes GroupNormalization-21's function body,
    whose operators all exist at 18."""
    import numpy as np  # noqa: PLC0415

    groups = w.value("num_groups")
    scale, bias = s.constant(w.input(1)), s.constant(w.input(2))
    if (groups and scale is not None and bias is not None and scale.ndim == 1 and bias.shape == scale.shape
            and scale.size % groups == 0 and w.value("stash_type", 1) == 1):
        per = scale.size // groups
        sg, bg = scale.reshape(groups, per), bias.reshape(groups, per)
        if (sg == sg[:, :1]).all() and (bg == bg[:, :1]).all():
            v = step.old_version
            w.inputs[1] = add_constant(w, s, np.ascontiguousarray(sg[:, 0]), 0, _base(w, "scale"), v)
            w.inputs[2] = add_constant(w, s, np.ascontiguousarray(bg[:, 0]), 0, _base(w, "bias"), v)
            w.drop("stash_type")
            w.changed = True
            return
    from .decompose import expand  # noqa: PLC0415

    body, opset = expand(w, step.domain, step.version, step.old_version, s)
    w.after.extend(NewNode(n, opset) for n in body)
    w.removed = True


# -- Equal on floating-point types, new in 11 ------------------------------------------------------

def equal_floats_down(w: NodeWork, s: Scope, step: StepInfo) -> None:
    """Below 11 Equal takes no floating-point types: ``a == b`` is neither ``a < b`` nor
    ``a > b``, with ``a + b`` not NaN (NaN exactly when an input is NaN, or when they are
    infinities of opposite signs, which are not equal either); x is not NaN when
    ``x < inf`` or ``x > -inf``."""
    import numpy as np  # noqa: PLC0415

    elem = s.elem_type(w.input(0)) or s.elem_type(w.input(1))
    if elem not in (_FLOAT, _FLOAT16, _DOUBLE):
        return  # the types Equal-7 takes (or unknown: the type check reports it)
    from .. import helper  # noqa: PLC0415

    dtype = helper.tensor_dtype_to_np_dtype(elem)
    a, b, y = w.input(0), w.input(1), w.output(0)
    out = _Writer(w, s, step.old_version)
    apart = out.node("Or", [out.node("Less", [a, b], "less"), out.node("Greater", [a, b], "greater")], "apart")
    total = out.node("Add", [a, b], "sum")
    finite_or_inf = out.node("Or", [out.node("Less", [total, out.const(np.array(np.inf, dtype), "inf")], "below_inf"),
                                    out.node("Greater", [total, out.const(np.array(-np.inf, dtype), "minus_inf")],
                                             "above_minus_inf")], "not_nan")
    out.node("And", [out.node("Not", [apart], "not_apart"), finite_or_inf], "", out=y)
    w.removed = True


# -- Resize-18's axes ----------------------------------------------------------------------------

def resize_axes_down(w: NodeWork, s: Scope, step: StepInfo) -> None:
    """Down from 18: ``axes`` names the axes that roi, scales or sizes cover; before, they
    cover every axis.  They are spread over all axes when the graph runs (ScatterElements
    into ones for scales, into the input's shape for sizes, into 0s and 1s for roi)."""
    axes = w.value("axes")
    if axes is None:
        return
    w.drop("axes")
    if w.value("keep_aspect_ratio_policy", "stretch") != "stretch":
        return  # refused by the step's keep_aspect_ratio_policy entry
    import numpy as np  # noqa: PLC0415

    x = w.input(0)
    r = s.need_rank(x, "axes must be spread over every axis before version 18")
    if len(set(a % r for a in axes if -r <= a < r)) != len(axes):
        raise StepRefused("V003", f"axes={list(axes)} are not distinct axes of a rank-{r} input")
    at = [a % r for a in axes]
    if at == list(range(r)):
        return
    out = _Writer(w, s, step.old_version)
    where = out.const(np.array(at, np.int64), "axes")
    k = len(at)

    def spread(base: str, values: str, what: str) -> str:
        return out.node("ScatterElements", [base, where, values], what, axis=0)

    roi, scales, sizes = w.input(1), w.input(2), w.input(3)
    if roi:
        elem = s.elem_type(roi) or _FLOAT
        from .. import helper  # noqa: PLC0415

        dtype = helper.tensor_dtype_to_np_dtype(elem)
        starts = out.node("Slice", [roi, out.const([0], "roi_from"), out.const([k], "roi_mid")], "roi_starts")
        ends = out.node("Slice", [roi, out.const([k], "roi_mid"), out.const([2 * k], "roi_to")], "roi_ends")
        w.inputs[1] = out.node("Concat", [spread(out.const(np.zeros(r, dtype), "roi_zeros"), starts, "roi_starts_all"),
                                          spread(out.const(np.ones(r, dtype), "roi_ones"), ends, "roi_ends_all")],
                               "roi_all", axis=0)
    if scales:
        w.inputs[2] = spread(out.const(np.ones(r, np.float32), "ones"), scales, "scales_all")
    if sizes:
        w.inputs[3] = spread(out.node("Shape", [x], "shape"), sizes, "sizes_all")
    w.before.extend(w.after)
    w.after = []
    w.changed = True


# -- ai.onnx.ml LabelEncoder 1 <-> 2 ------------------------------------------------------------------

_STRINGS, _INTS = 8, 7  # AttributeProto types


def _direction(w: NodeWork, s: Scope) -> str:
    """LabelEncoder-1 maps strings to their index ("s2i") or indices to strings ("i2s"),
    as its input's type says."""
    elem = s.elem_type(w.input(0))
    if elem == _STRING:
        return "s2i"
    if elem == INT64:
        return "i2s"
    raise StepRefused("V007" if elem is None else "V004",
                      "LabelEncoder-1 maps strings to int64 or int64 to strings, and the input's "
                      f"element type is {'not known' if elem is None else elem}")


def label_encoder_up(w: NodeWork, s: Scope, step: StepInfo) -> None:
    """Up to 2: ``classes_strings`` becomes a map, string -> its index or index -> string
    (the defaults carried over; a repeated class would make a map with a repeated key)."""
    classes = list(w.value("classes_strings") or [])
    if _direction(w, s) == "s2i":
        if len(set(classes)) != len(classes):
            raise StepRefused("V003", "classes_strings repeats a string, which LabelEncoder-2's "
                                      "keys cannot")
        keys, values = ("keys_strings", classes, _STRINGS), ("values_int64s", list(range(len(classes))), _INTS)
        default = ("default_int64", w.value("default_int64", -1))
    else:
        keys, values = ("keys_int64s", list(range(len(classes))), _INTS), ("values_strings", classes, _STRINGS)
        default = ("default_string", w.value("default_string", "_Unused"))
    for name in ("classes_strings", "default_int64", "default_string"):
        w.drop(name)
    for name, value, kind in (keys, values):
        w.set(name, value, attr_type=kind)
    w.set(*default)


def label_encoder_down(w: NodeWork, s: Scope, step: StepInfo) -> None:
    """Down from 2: a map from strings to 0..n-1 in order, or from 0..n-1 in order to
    strings, is LabelEncoder-1's ``classes_strings``; no other map is."""
    present = {n for n in ("keys_strings", "keys_int64s", "keys_floats", "values_strings", "values_int64s",
                           "values_floats") if w.has(n)}
    if present == {"keys_strings", "values_int64s"}:
        classes, index, default = w.value("keys_strings"), w.value("values_int64s"), "default_int64"
    elif present == {"keys_int64s", "values_strings"}:
        classes, index, default = w.value("values_strings"), w.value("keys_int64s"), "default_string"
    else:
        raise StepRefused("V003", f"LabelEncoder-1 maps strings to their index in a list and back; "
                                  f"a map with {', '.join(sorted(present)) or 'no keys'} is not one")
    if list(index) != list(range(len(classes))):
        raise StepRefused("V003", "LabelEncoder-1 maps strings to their index in a list and back; "
                                  "the map's integers are not 0, 1, 2, ... in order")
    keep = w.value(default)
    for name in present | {"default_int64", "default_string", "default_float"}:
        w.drop(name)
    w.set("classes_strings", list(classes), attr_type=_STRINGS)
    if keep is not None:
        w.set(default, keep)
