"""The steps a table cannot say that edit the node itself: code, one per direction of a step.

Each function takes the node (`NodeWork`), the scope and the step (`StepInfo`), edits the
node or raises `StepRefused` with the reason.  Nodes they add are written for the opset of
the step (``step.version`` going up, ``step.old_version`` going down) and converted on to
the target by the driver.  The table in `steps` names these functions next to the
operator and version they belong to.
"""

from __future__ import annotations

from .changes import FLOAT, INT64, add_constant
from .errors import StepRefused

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


# -- broadcasting at 7 (and 8 for the variadic ops): what the older versions accept ----------

def _known_dims(shape) -> bool:
    return shape is not None and all(isinstance(d, int) for d in shape)


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
    if _known_dims(slope) and (_one_element(slope) or slope == x):
        return
    raise StepRefused("V003" if _known_dims(slope) else "V007",
                      "before version 7 the slope must have the input's shape or one element")


def _one_element(dims) -> bool:
    """Known dims that hold one element: all 1 (no product: a rank-100,000 shape would make
    a 30,000-digit one, multiplied out quadratically; a negative dim is no count at all)."""
    return all(d == 1 for d in dims)


# -- Split ----------------------------------------------------------------------------------------

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

def gemm_matrices(w: NodeWork, s: Scope, step: StepInfo) -> None:
    """Across 7, either way: how C broadcasts changed, against the (M, N) that A and B give,
    so A and B must be matrices (as every Gemm requires; onnx's converter refuses here too)."""
    for i, what in ((0, "A"), (1, "B")):
        r = s.rank(w.input(i))
        if r is not None and r != 2:
            raise StepRefused("V003", f"input {what} has rank {r}; Gemm multiplies matrices (rank 2)")


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
        if not float(p).is_integer():  # (inf and nan too: int() of those raises)
            raise StepRefused("V003", f"p={p} is not an integer")
        if not -(1 << 63) <= p < (1 << 63):
            raise StepRefused("V003", f"p={p} is outside int64")
        w.set("p", int(p))


def lp_p_down(w: NodeWork, s: Scope, step: StepInfo) -> None:
    p = w.value("p")
    if p is not None:
        w.set("p", float(p))


def per_tensor_down(w: NodeWork, s: Scope, step: StepInfo) -> None:
    """Down from 13 (QuantizeLinear, DequantizeLinear): per-tensor scale only."""
    shape = s.shape(w.input(1))
    if shape is not None and _known_dims(shape) and not _one_element(shape):
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
