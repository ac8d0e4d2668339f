"""Steps that rewrite a node into several, or into another operator.

Where a version step changed what an operator computes, the node is rewritten around the
change: the Transposes that move Softmax's axis last, the Flatten and Reshape that keep
its old 2-D meaning, the Unsqueeze that makes legacy broadcasting numpy-style, a Slice
after a Shape with ``start``, Squeeze/Unsqueeze around a Scan for the batch axis it lost,
Casts around an operator that gained integer types, the operator a deprecated one became.
The added nodes are written for the opset of the step and converted on to the target by
the driver; `adapters` holds the steps that only edit the node itself.
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
    if not -r <= axis < r:  # a rank-0 input has no axis at all
        raise StepRefused("V003", f"axis={axis} is not an axis of the rank-{r} input")
    a = axis % r
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
