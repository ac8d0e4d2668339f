"""The steps a table cannot say: code, one function per direction of a step.

Each function takes the node (`NodeWork`), the scope and the step (`StepInfo`), edits the
node or raises `StepRefused` with the reason.  Nodes they add are written for the opset of
the step (``step.version`` going up, ``step.old_version`` going down) and converted on to
the target by the driver.  The table in `steps` names these functions next to the
operator and version they belong to.
"""

from __future__ import annotations

from .changes import FLOAT, INT64, add_constant
from .errors import StepRefused
from .work import NewNode

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .changes import StepInfo
    from .scope import Scope
    from .work import NodeWork


def _node(op: str, inputs, outputs, **attrs):
    from .. import helper  # noqa: PLC0415

    return helper.make_node(op, list(inputs), list(outputs), **attrs)


def _base(w: NodeWork, what: str) -> str:
    return f"{w.original.name or w.op_type}_{what}"


# -- Softmax, LogSoftmax, Hardmax at 13: one axis, where before the input was cut into 2-D -----

def coerced_2d_up(w: NodeWork, s: Scope, step: StepInfo) -> None:
    """Up to 13: the old axis cut the input into 2-D at ``axis``; if that is not the last
    axis, the node computes on Flatten(x, axis) and the result is reshaped back."""
    axis = w.value("axis", 1)
    r = s.rank(w.input(0))
    if axis == -1 or (r is not None and axis % max(r, 1) == r - 1):
        w.set("axis", -1)
        return
    x, y = w.input(0), w.output(0)
    flat, shape, out2d = s.fresh(_base(w, "flat")), s.fresh(_base(w, "shape")), s.fresh(_base(w, "2d"))
    w.before.append(NewNode(_node("Shape", [x], [shape]), step.version))
    w.before.append(NewNode(_node("Flatten", [x], [flat], axis=axis), step.version))
    w.inputs[0] = flat
    w.outputs[0] = out2d
    w.set("axis", -1)
    w.after.append(NewNode(_node("Reshape", [out2d, shape], [y]), step.version))


def coerced_2d_down(w: NodeWork, s: Scope, step: StepInfo) -> None:
    """Down from 13: one axis.  The last axis is the same computation; any other is moved
    last by a Transpose (and back), which needs the input's rank."""
    axis = w.value("axis", -1)
    r = s.rank(w.input(0))
    if axis == -1 and r is None:
        w.set("axis", -1)
        return
    r = s.need_rank(w.input(0), f"axis={axis} is not known to be the last axis")
    a = axis % r if r else 0
    if a == r - 1:
        w.set("axis", r - 1)
        return
    perm = list(range(r))
    perm[a], perm[r - 1] = perm[r - 1], perm[a]
    x, y = w.input(0), w.output(0)
    moved, out_moved = s.fresh(_base(w, "moved")), s.fresh(_base(w, "out_moved"))
    w.before.append(NewNode(_node("Transpose", [x], [moved], perm=perm), step.old_version))
    w.inputs[0] = moved
    w.outputs[0] = out_moved
    w.set("axis", r - 1)
    w.after.append(NewNode(_node("Transpose", [out_moved], [y], perm=perm), step.old_version))


# -- numpy-style broadcasting at 7 (and 8 for the variadic ops) -----------------------------

def _known_dims(shape) -> bool:
    return shape is not None and all(isinstance(d, int) for d in shape)


def legacy_broadcast_up(w: NodeWork, s: Scope, step: StepInfo) -> None:
    """Up to 7: ``broadcast=1`` lined B up with A from ``axis`` (default: the end); numpy
    broadcasting lines shapes up from the end, so B gets trailing 1-dims when needed."""
    broadcast = w.value("broadcast", 0)
    axis = w.value("axis")
    w.drop("broadcast")
    w.drop("axis")
    if not broadcast or axis is None:
        return
    ra = s.need_rank(w.input(0), f"broadcast from axis={axis} must be made numpy-style")
    rb = s.need_rank(w.input(1), f"broadcast from axis={axis} must be made numpy-style")
    trailing = ra - (axis % ra if ra else 0) - rb
    if trailing <= 0:
        return
    b2 = s.fresh(_base(w, "b"))
    axes = [rb + k for k in range(trailing)]
    w.before.append(NewNode(_node("Unsqueeze", [w.input(1)], [b2], axes=axes), 1))
    w.inputs[1] = b2


def legacy_broadcast_down(w: NodeWork, s: Scope, step: StepInfo) -> None:
    """Down from 7: equal shapes need nothing; B's shape a suffix of A's is ``broadcast=1``;
    any other broadcast did not exist."""
    a, b = s.shape(w.input(0)), s.shape(w.input(1))
    if a is not None and b is not None and a == b and _known_dims(a):
        return
    if a is None or b is None or not (_known_dims(a) and _known_dims(b)):
        raise StepRefused("V007", "the input shapes are not known, and before version 7 "
                                  "broadcasting must be declared")
    if len(b) <= len(a) and tuple(a[len(a) - len(b):]) == tuple(b):
        w.set("broadcast", 1)
        return
    if len(b) == 0 or (len(b) <= len(a) and all(d == 1 for d in b)):
        w.set("broadcast", 1)
        return
    raise StepRefused("V003", f"shapes {list(a)} and {list(b)} broadcast numpy-style, "
                              f"which versions before 7 cannot")


def same_shapes_down(w: NodeWork, s: Scope, step: StepInfo) -> None:
    """Down from 8 (Max, Min, Mean, Sum): the older versions need equal input shapes."""
    shapes = [s.shape(x) for x in w.inputs if x]
    if len(shapes) <= 1:
        return
    if all(_known_dims(sh) for sh in shapes) and all(sh == shapes[0] for sh in shapes):
        return
    if not all(_known_dims(sh) for sh in shapes):
        raise StepRefused("V007", "the input shapes are not known, and before version 8 "
                                  "they must be equal")
    raise StepRefused("V003", "the inputs broadcast, which versions before 8 cannot")


def prelu_down(w: NodeWork, s: Scope, step: StepInfo) -> None:
    """Down from 7: the slope must have the input's shape or one element."""
    x, slope = s.shape(w.input(0)), s.shape(w.input(1))
    if _known_dims(slope) and (_prod(slope) == 1 or slope == x):
        return
    raise StepRefused("V003" if _known_dims(slope) else "V007",
                      "before version 7 the slope must have the input's shape or one element")


def _prod(dims) -> int:
    p = 1
    for d in dims:
        p *= d
    return p


# -- Shape at 15: start and end ----------------------------------------------------------------

def shape_slice_down(w: NodeWork, s: Scope, step: StepInfo) -> None:
    """Down from 15: ``start``/``end`` become a Slice of the whole shape."""
    start, end = w.value("start", 0), w.value("end")
    w.drop("start")
    w.drop("end")
    if start == 0 and end is None:
        return
    y = w.output(0)
    full = s.fresh(_base(w, "full"))
    w.outputs[0] = full
    v = step.old_version
    starts = add_constant(w, s, [start], INT64, _base(w, "start"), v)
    ends = add_constant(w, s, [end if end is not None else 2**63 - 1], INT64, _base(w, "end"), v)
    w.after.append(NewNode(_node("Slice", [full, starts, ends], [y]), v))


# -- Split ----------------------------------------------------------------------------------------

def split_num_outputs_down(w: NodeWork, s: Scope, step: StepInfo) -> None:
    """Down from 18: ``num_outputs`` splits evenly, the last part smaller if need be; before,
    the number of outputs did the same for an even split.  An uneven one becomes sizes."""
    n = w.value("num_outputs")
    if n is None:
        return
    w.drop("num_outputs")
    shape = s.shape(w.input(0))
    if shape is None:
        return  # the even split (the only one Split-13 computes without sizes)
    axis = w.value("axis", 0) % max(len(shape), 1)
    d = shape[axis] if axis < len(shape) else None
    if not isinstance(d, int) or d % n == 0:
        return
    part = -(-d // n)
    sizes = [part] * (n - 1) + [d - part * (n - 1)]
    w.set_input(1, add_constant(w, s, sizes, INT64, _base(w, "split"), step.old_version))


def split_num_outputs_up(w: NodeWork, s: Scope, step: StepInfo) -> None:
    """Up to 18: without sizes, Split-18 needs ``num_outputs`` (before, the outputs' count)."""
    if not w.input(1):
        w.set("num_outputs", len(w.outputs))


def split_input_to_attr_up(w: NodeWork, s: Scope, step: StepInfo) -> None:
    """Up to 2: the sizes input of Split-1 became the ``split`` attribute."""
    name = w.input(1)
    if not name:
        return
    value = s.constant_ints(name)
    if value is None:
        raise StepRefused("V002", f"input 'split' ({name!r}) is not a constant")
    w.set("split", value)
    w.drop_input(1)


# -- Cast and Constant -------------------------------------------------------------------------

def _elem_names() -> dict[int, str]:
    from ..inference.typestr import ELEM_NAMES  # noqa: PLC0415

    return {k: v.upper() for k, v in ELEM_NAMES.items()}


def cast_to_int_up(w: NodeWork, s: Scope, step: StepInfo) -> None:
    """Up to 6: ``to`` was a type name (a string), now it is the data type number."""
    to = w.value("to")
    if isinstance(to, str):
        codes = {v: k for k, v in _elem_names().items()}
        if to.upper() not in codes:
            raise StepRefused("V003", f"Cast to {to!r}: not a type name")
        w.set("to", codes[to.upper()])


def cast_to_int_down(w: NodeWork, s: Scope, step: StepInfo) -> None:
    to = w.value("to")
    if isinstance(to, int):
        names = _elem_names()
        if to not in names:
            raise StepRefused("V003", f"Cast to type {to}: no name before version 6")
        w.set("to", names[to])


def constant_values_down(w: NodeWork, s: Scope, step: StepInfo) -> None:
    """Down from 12: ``value_float(s)``/``value_int(s)``/``value_string(s)`` become ``value``."""
    from .. import helper  # noqa: PLC0415

    kinds = {"value_float": (FLOAT, True), "value_floats": (FLOAT, False),
             "value_int": (INT64, True), "value_ints": (INT64, False),
             "value_string": (8, True), "value_strings": (8, False)}
    for name, (elem, scalar) in kinds.items():
        if w.has(name):
            v = w.value(name)
            if elem == 8:
                v = v.encode() if scalar else [x if isinstance(x, bytes) else x.encode() for x in v]
            values = [v] if scalar else list(v)
            dims = [] if scalar else [len(values)]
            w.drop(name)
            w.set("value", helper.make_tensor("value", elem, dims, values))


# -- GridSample at 20 ------------------------------------------------------------------------

_GRID_MODES = {"bilinear": "linear", "bicubic": "cubic"}


def grid_sample_up(w: NodeWork, s: Scope, step: StepInfo) -> None:
    mode = w.value("mode")
    if mode in _GRID_MODES:
        w.set("mode", _GRID_MODES[mode])


def grid_sample_down(w: NodeWork, s: Scope, step: StepInfo) -> None:
    mode = w.value("mode", "linear")
    back = {v: k for k, v in _GRID_MODES.items()}
    w.set("mode", back.get(mode, mode))
    r = s.rank(w.input(0))
    if r is not None and r != 4:
        raise StepRefused("V003", f"a rank-{r} input: before version 20 GridSample is 2-D only")


# -- operators replaced by others ------------------------------------------------------------

def upsample_to_resize_up(w: NodeWork, s: Scope, step: StepInfo) -> None:
    """Upsample is deprecated at 10: the same computation is Resize-10."""
    w.set_op("Resize")


def resize_to_upsample_down(w: NodeWork, s: Scope, step: StepInfo) -> None:
    """Resize-10 below 10 is Upsample-9 (same inputs and modes)."""
    w.set_op("Upsample")


def scatter_to_elements_up(w: NodeWork, s: Scope, step: StepInfo) -> None:
    """Scatter is deprecated at 11: the same computation is ScatterElements-11."""
    w.set_op("ScatterElements")


def elements_to_scatter_down(w: NodeWork, s: Scope, step: StepInfo) -> None:
    w.set_op("Scatter")


# -- Resize -----------------------------------------------------------------------------------

def resize_10_11_up(w: NodeWork, s: Scope, step: StepInfo) -> None:
    """Up to 11: inputs (X, scales) become (X, roi, scales); Resize-10's coordinates are
    'asymmetric' and its nearest rounding 'floor'."""
    scales = w.input(1)
    w.inputs[1:2] = [add_constant(w, s, [], FLOAT, _base(w, "roi"), step.version), scales]
    w.changed = True
    w.set("coordinate_transformation_mode", "asymmetric")
    if w.value("mode", "nearest") == "nearest":
        w.set("nearest_mode", "floor")


def resize_10_11_down(w: NodeWork, s: Scope, step: StepInfo) -> None:
    ctm = w.value("coordinate_transformation_mode", "half_pixel")
    mode = w.value("mode", "nearest")
    if ctm != "asymmetric" or (mode == "nearest" and w.value("nearest_mode", "round_prefer_floor") != "floor"):
        raise StepRefused("V003", f"coordinate_transformation_mode={ctm!r}: Resize-10 computes "
                                  f"'asymmetric' coordinates (and 'floor' for nearest) only")
    if mode == "cubic":
        raise StepRefused("V003", "mode 'cubic' is new in version 11")
    if w.input(3):
        raise StepRefused("V005", "input 'sizes' is new in version 11")
    for name in ("coordinate_transformation_mode", "nearest_mode", "cubic_coeff_a",
                 "exclude_outside", "extrapolation_value"):
        w.drop(name)
    w.drop_input(1)


def resize_11_13_down(w: NodeWork, s: Scope, step: StepInfo) -> None:
    """Down from 13: roi and scales may not be left out before; empty tensors stand in."""
    if w.value("coordinate_transformation_mode") == "tf_half_pixel_for_nn":
        return
    v = step.old_version
    if not w.input(1):
        w.set_input(1, add_constant(w, s, [], FLOAT, _base(w, "roi"), v))
    if not w.input(2) and w.input(3):
        w.set_input(2, add_constant(w, s, [], FLOAT, _base(w, "scales"), v))


def resize_11_13_up(w: NodeWork, s: Scope, step: StepInfo) -> None:
    if w.value("coordinate_transformation_mode") == "tf_half_pixel_for_nn":
        raise StepRefused("V003", "coordinate_transformation_mode 'tf_half_pixel_for_nn' is "
                                  "removed in version 13")


# -- Gemm, Pad, BatchNormalization, GRU, pooling, quantization -----------------------------

def gemm_c_optional_down(w: NodeWork, s: Scope, step: StepInfo) -> None:
    """Down from 11: C is required before; a zero of A's type stands in."""
    if w.input(2):
        return
    elem = s.elem_type(w.input(0))
    if elem is None:
        raise StepRefused("V007", "input C is absent and A's element type is not known")
    w.set_input(2, add_constant(w, s, 0, elem, _base(w, "C"), step.old_version, scalar=True))


def pad_axes_down(w: NodeWork, s: Scope, step: StepInfo) -> None:
    """Down from 18: ``axes`` are folded into a full ``pads`` (both must be constants)."""
    axes_name = w.input(3)
    if not axes_name:
        return
    axes, pads = s.constant_ints(axes_name), s.constant_ints(w.input(1))
    if axes is None or pads is None:
        raise StepRefused("V002", "input 'axes' (and 'pads') must be constants to be folded "
                                  "into pads before version 18")
    r = s.need_rank(w.input(0), "axes must be folded into pads before version 18")
    full = [0] * (2 * r)
    for k, a in enumerate(axes):
        a %= r
        full[a] = pads[k]
        full[a + r] = pads[k + len(axes)]
    w.inputs[1] = add_constant(w, s, full, INT64, _base(w, "pads"), step.old_version)
    w.drop_input(3)


def batchnorm_14_up(w: NodeWork, s: Scope, step: StepInfo) -> None:
    if any(w.outputs[1:]):
        raise StepRefused("V005", "the training outputs of BatchNormalization-9 (mean, var, "
                                  "saved_mean, saved_var) have no equivalent from version 14 on")


def batchnorm_14_down(w: NodeWork, s: Scope, step: StepInfo) -> None:
    if w.value("training_mode", 0) or any(w.outputs[1:]):
        raise StepRefused("V003", "training mode (running_mean, running_var outputs) is new in "
                                  "version 14")
    w.drop("training_mode")


def gru_y_h_down(w: NodeWork, s: Scope, step: StepInfo) -> None:
    """Down from 3: Y_h was a required output."""
    if not w.output(1):
        while len(w.outputs) < 2:
            w.outputs.append("")
        w.outputs[1] = s.fresh(_base(w, "Y_h"))
        w.changed = True


def lp_p_up(w: NodeWork, s: Scope, step: StepInfo) -> None:
    """Up to 2: ``p`` is an int (it was a float)."""
    p = w.value("p")
    if p is not None:
        if float(p) != int(p):
            raise StepRefused("V003", f"p={p} is not an integer")
        w.set("p", int(p))


def lp_p_down(w: NodeWork, s: Scope, step: StepInfo) -> None:
    p = w.value("p")
    if p is not None:
        w.set("p", float(p))


def per_tensor_down(w: NodeWork, s: Scope, step: StepInfo) -> None:
    """Down from 13 (QuantizeLinear, DequantizeLinear): per-tensor scale only."""
    shape = s.shape(w.input(1))
    if shape is not None and _known_dims(shape) and _prod(shape) != 1:
        raise StepRefused("V003", "a per-axis scale: versions before 13 quantize per tensor")
    w.drop("axis")


def slice_steps_down(w: NodeWork, s: Scope, step: StepInfo) -> None:
    """Down from 10: ``steps`` must be all ones (then dropped)."""
    if w.input(4):
        steps = s.constant_ints(w.input(4))
        if steps is None or any(v != 1 for v in steps):
            raise StepRefused("V003" if steps is not None else "V002",
                              "Slice steps other than 1 are new in version 10")
        w.drop_input(4)


def concat_axis_up(w: NodeWork, s: Scope, step: StepInfo) -> None:
    """Up to 4: ``axis`` became required; Concat-1's default was 1."""
    if not w.has("axis"):
        w.set("axis", 1)


def upsample_scales_up(w: NodeWork, s: Scope, step: StepInfo) -> None:
    """Up to 7: ``height_scale``/``width_scale`` became ``scales`` over all 4 dims."""
    h, wd = w.value("height_scale"), w.value("width_scale")
    w.drop("height_scale")
    w.drop("width_scale")
    w.set("scales", [1.0, 1.0, float(h), float(wd)])


def upsample_scales_down(w: NodeWork, s: Scope, step: StepInfo) -> None:
    scales = w.value("scales") or []
    if len(scales) != 4 or scales[0] != 1 or scales[1] != 1:
        raise StepRefused("V003", f"scales {scales}: Upsample-1 scales the last two of 4 dims only")
    w.drop("scales")
    w.set("height_scale", float(scales[2]))
    w.set("width_scale", float(scales[3]))


def unsqueeze_negative_down(w: NodeWork, s: Scope, step: StepInfo) -> None:
    """Down from 11: negative axes count from the back of the *output* (rank + len(axes))."""
    axes = w.value("axes")
    if not axes or all(a >= 0 for a in axes):
        return
    r = s.need_rank(w.input(0), "negative axes must be made non-negative before version 11")
    out_rank = r + len(axes)
    w.set("axes", [a + out_rank if a < 0 else a for a in axes])


def optional_input_required_down(w: NodeWork, s: Scope, step: StepInfo) -> None:
    if not w.input(0):
        raise StepRefused("V005", "the input may be left out only from version 18 on")


def scan_negative_axes_down(w: NodeWork, s: Scope, step: StepInfo) -> None:
    for name in ("scan_input_axes", "scan_output_axes"):
        if any(a < 0 for a in (w.value(name) or [])):
            raise StepRefused("V003", f"negative {name} are new in version 11")


def dft_axis_up(w: NodeWork, s: Scope, step: StepInfo) -> None:
    """Up to 20: the ``axis`` attribute (default 1) became input 2 (default -2)."""
    axis = w.value("axis", 1)
    w.drop("axis")
    if axis != -2:
        w.set_input(2, add_constant(w, s, axis, INT64, _base(w, "axis"), step.version, scalar=True))


def dft_axis_down(w: NodeWork, s: Scope, step: StepInfo) -> None:
    name = w.input(2)
    if not name:
        axis = -2
    else:
        value = s.constant_ints(name)
        if value is None:
            raise StepRefused("V002", f"input 'axis' ({name!r}) is not a constant")
        axis = value[0]
        w.drop_input(2)
    if axis < 0:
        r = s.need_rank(w.input(0), f"axis={axis} must be non-negative before version 20")
        axis += r
    w.set("axis", axis)


def mod_fmod_down(w: NodeWork, s: Scope, step: StepInfo) -> None:
    """Down from 28: a floating-point Mod with ``fmod=0`` (Python's sign rule) is new."""
    if w.value("fmod", 0):
        return
    t = s.type_string(w.input(0))
    if t is None:
        raise StepRefused("V007", "the input type is not known, and before version 28 fmod=0 "
                                  "is for integers only")
    if t in ("tensor(float)", "tensor(double)", "tensor(float16)", "tensor(bfloat16)"):
        raise StepRefused("V003", f"fmod=0 on {t} is new in version 28")


#: Integer types whose every value double holds exactly, and operators that compute the
#: same on such values in double (data movement and comparisons only).
_EXACT_IN_DOUBLE = {2, 3, 4, 5, 6, 12, 9}  # uint8 int8 uint16 int16 int32 uint32 bool
_WIDEN_OPS = {"Flatten", "Greater", "Less"}


def widen_down(w: NodeWork, s: Scope, step: StepInfo) -> None:
    """Down from 9 (Flatten, Greater, Less): integer types are new in 9; the same values
    are moved or compared exactly in double, so the node is wrapped in Casts."""
    if w.op_type not in _WIDEN_OPS:
        return
    elem = s.elem_type(w.input(0))
    if elem is None or elem in (1, 10, 11):
        return  # float types (or unknown: the fit check reports what it must)
    if elem not in _EXACT_IN_DOUBLE:
        return
    v = step.old_version
    for i, x in enumerate(list(w.inputs)):
        if x:
            d = s.fresh(_base(w, f"in{i}_double"))
            w.before.append(NewNode(_node("Cast", [x], [d], to=11), v))
            w.inputs[i] = d
    if w.op_type == "Flatten":
        y = w.output(0)
        d = s.fresh(_base(w, "out_double"))
        w.outputs[0] = d
        w.after.append(NewNode(_node("Cast", [d], [y], to=elem), v))
    w.changed = True


# -- Scan at 9: no batch axis -------------------------------------------------------------------

def _wrap_axis0(w: NodeWork, s: Scope, version: int, inputs: list[str], on_inputs: str,
                on_outputs: str, what: str) -> None:
    """``w`` reads ``inputs`` through ``on_inputs`` (Squeeze or Unsqueeze of axis 0) and
    its outputs are passed through ``on_outputs``: the batch axis taken off or put on."""
    new_inputs = []
    for i, x in enumerate(inputs):
        name = s.fresh(_base(w, f"in{i}_{what}"))
        w.before.append(NewNode(_node(on_inputs, [x], [name], axes=[0]), version))
        new_inputs.append(name)
    w.inputs = new_inputs
    for i, y in enumerate(list(w.outputs)):
        if y:
            inner = s.fresh(_base(w, f"out{i}_{what}"))
            w.outputs[i] = inner
            w.after.append(NewNode(_node(on_outputs, [inner], [y], axes=[0]), version))
    w.changed = True


def scan_8_9_up(w: NodeWork, s: Scope, step: StepInfo) -> None:
    """Up to 9: Scan-8 ran its body once per batch entry (axis 0 of every input and output);
    Scan-9 has no batch axis.  With a batch of one, the axis is squeezed from the inputs and
    put back on the outputs; a larger batch would need a loop around the scan (refused)."""
    if w.input(0):
        raise StepRefused("V003", "sequence_lens has no equivalent from version 9 on")
    for x in w.inputs[1:]:
        shape = s.shape(x)
        if shape is None or not shape or shape[0] != 1:
            raise StepRefused("V007" if shape is None or not isinstance(shape[0] if shape else None, int)
                              else "V003",
                              f"input {x!r} must have a batch of 1 (axis 0) for Scan-9, which has "
                              f"no batch axis")
    directions = w.value("directions")
    w.drop("directions")
    if directions is not None:
        w.set("scan_input_directions", directions)
    _wrap_axis0(w, s, step.old_version, w.inputs[1:], "Squeeze", "Unsqueeze", "unbatched")


def scan_8_9_down(w: NodeWork, s: Scope, step: StepInfo) -> None:
    """Down to 8: a batch of one is added on axis 0 of every input and taken off the
    outputs; Scan-8 scans axis 1 forwards (or as ``directions`` say) and has no output
    directions, so other axes or reversed outputs are refused."""
    for name in ("scan_input_axes", "scan_output_axes"):
        if any(v != 0 for v in (w.value(name) or [])):
            raise StepRefused("V003", f"{name} other than 0 are new in version 9")
    if any(w.value("scan_output_directions") or []):
        raise StepRefused("V003", "scan_output_directions are new in version 9")
    for name in ("scan_input_axes", "scan_output_axes", "scan_output_directions"):
        w.drop(name)
    directions = w.value("scan_input_directions")
    w.drop("scan_input_directions")
    if directions is not None:
        w.set("directions", directions)
    _wrap_axis0(w, s, step.old_version, w.inputs, "Unsqueeze", "Squeeze", "batched")
    w.inputs.insert(0, "")  # sequence_lens: absent


def constant_to_initializer_down(w: NodeWork, s: Scope, step: StepInfo) -> None:
    """Down from 9: Constant-1 holds float types only; another type's value becomes an
    initializer of the graph (a function body has none: the fit check then reports it)."""
    a = w.attrs.get("value")
    if a is None or a.ref_attr_name or a.t.data_type in (1, 10, 11):
        return
    from .. import TensorProto  # noqa: PLC0415

    t = TensorProto()
    t.CopyFrom(a.t)
    t.name = w.output(0)
    if s.add_initializer(t):
        w.removed = True


def dropout_mask_down(w: NodeWork, s: Scope, step: StepInfo) -> None:
    """Down from 12: in inference (the only mode before 12) Dropout-12's mask is all true;
    Dropout-10's mask there is not defined (onnxruntime gives all false).  A used mask is
    made apart: ConstantOfShape(Shape(x), true)."""
    mask = w.output(1)
    if not mask:
        return
    from .. import helper  # noqa: PLC0415

    v = step.old_version
    shape = s.fresh(_base(w, "mask_shape"))
    w.outputs[1:] = []
    w.changed = True
    w.after.append(NewNode(_node("Shape", [w.input(0)], [shape]), v))
    true = helper.make_tensor("value", 9, [1], [True])
    w.after.append(NewNode(_node("ConstantOfShape", [shape], [mask], value=true), v))
