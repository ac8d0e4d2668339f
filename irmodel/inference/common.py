"""Helpers shared by the operator functions (the reference's ``shape_inference.h``).

Attribute access, element-type propagation, reading input shapes and writing output
shapes, broadcasting, axis handling, rank checks.  Each rule is written once here and
used by every family.
"""

from __future__ import annotations

from . import dims as D
from .context import A_INTS
from .errors import fail_shape, fail_type
from .types import (UNSET, MapType, OptionalType, SequenceType, SparseTensorType, TensorType,
                    Dim, dim_param_text)

MAX_RANK = 1024  # kMaxMaterializedRank: the largest rank materialised from a value


# -- attributes -------------------------------------------------------------------------

def attr_int(ctx, name: str, default):
    """``getAttribute(ctx, name, default)`` for ints: 0 when present without an int."""
    a = ctx.attr(name)
    if a is None:
        return default
    return a.i if a.HasField("i") else 0


def attr_float(ctx, name: str, default):
    a = ctx.attr(name)
    if a is None:
        return default
    return a.f if a.HasField("f") else 0.0


def attr_str(ctx, name: str, default):
    """Strings of attributes are bytes on the wire; returned decoded (UTF-8, replacement)."""
    a = ctx.attr(name)
    if a is None:
        return default
    if not a.HasField("s"):
        return ""
    return bytes(a.s).decode("utf-8", "replace")


def attr_ints(ctx, name: str):
    """``getRepeatedAttribute``: the list of ints, or None when the attribute is absent."""
    a = ctx.attr(name)
    if a is None:
        return None
    return list(a.ints)


def attr_floats(ctx, name: str):
    a = ctx.attr(name)
    if a is None:
        return None
    return list(a.floats)


def required_attr(ctx, name: str):
    a = ctx.attr(name)
    if a is None:
        raise fail_shape("Required attribute '", name, "' is missing")
    return a


def required_attr_int(ctx, name: str) -> int:
    a = required_attr(ctx, name)
    if not a.HasField("i"):
        raise fail_shape("Required attribute '", name, "' must be an integer")
    return a.i


# -- element types --------------------------------------------------------------------------

def tensor_elem(t) -> int:
    """``getTensorElementType``: the element type of a tensor or sparse tensor, else 0."""
    if type(t) is TensorType or type(t) is SparseTensorType:
        return t.elem or 0
    return 0


def propagate_elem_from_tensor(ctx, i: int, o: int) -> None:
    """``propagateElemTypeFromTensorInputToOutput``."""
    t = ctx.input_type(i)
    if t is None:
        raise fail_type("Input type was null")
    kind = type(t)
    if kind is not TensorType and kind is not SparseTensorType:
        raise fail_type("Input ", i, " expected to have tensor or sparse tensor type. Got: ", _case_num(t))
    elem = t.elem or 0
    if elem == 0:
        raise fail_type("Element type of input ", i, " unknown")
    out = ctx.output(o)
    okind = type(out)
    if okind is TensorType or okind is SparseTensorType:
        ctx.set_output(o, out.with_elem(elem))
    elif out is None or out is UNSET:
        ctx.set_output(o, kind(elem, None))
    else:
        raise fail_type("Output ", o, " expected to have tensor or sparse tensor type. Got: ", _case_num(out))


_CASE_NUMBERS = {TensorType: 1, SequenceType: 4, MapType: 5, OptionalType: 9, SparseTensorType: 8}


def _case_num(t) -> int:
    """The value-case number the reference prints (its enum's field number)."""
    return _CASE_NUMBERS.get(type(t), 0 if t is None or t is UNSET else 7)


def propagate_elem(ctx, i: int, o: int) -> None:
    """``propagateElemTypeFromInputToOutput``: tensor, sequence, optional or map."""
    t = ctx.input_type(i)
    if t is None:
        raise fail_type("Input ", i, " expected to have type but instead is null")
    kind = type(t)
    if kind is TensorType or kind is SparseTensorType:
        propagate_elem_from_tensor(ctx, i, o)
    elif kind is SequenceType:
        if t.elem is None:
            raise fail_type("Element type of sequence input ", i, " unknown")
        ctx.set_output(o, SequenceType(t.elem))
    elif kind is OptionalType:
        if t.elem is None:
            raise fail_type("Element type of optional input ", i, " unknown")
        ctx.set_output(o, OptionalType(t.elem))
    elif kind is MapType:
        if t.key is None:
            raise fail_type("Key type of map input ", i, " unknown")
        if t.value is None:
            raise fail_type("Value type of map input ", i, " unknown")
        ctx.set_output(o, MapType(t.key, t.value))


def propagate_elem_validated(src, dst):
    """``propagateElemTypeWithValidation``: ``dst`` given ``src``'s element types (which must agree)."""
    if src is None:
        raise fail_type("Input type was null")
    kind = type(src)
    if kind is TensorType or kind is SparseTensorType:
        elem = src.elem or 0
        if elem == 0:
            raise fail_type("Element type of tensor or sparse tensor input was unknown")
        if dst is None or dst is UNSET:
            return kind(elem, None)
        if type(dst) is TensorType or type(dst) is SparseTensorType:
            if dst.elem:
                if dst.elem != elem:
                    raise fail_type("Input element type of ", elem, " does not match existing output type of ",
                                    dst.elem)
                return dst
            return dst.with_elem(elem)
        raise fail_type("Output was expected to have tensor type. Got ", _case_num(dst))
    if kind is SequenceType or kind is OptionalType:
        if type(src) is not kind:
            raise fail_type("Input was expected to have ", "sequence" if kind is SequenceType else "optional",
                            " type. Got ", _case_num(src))
        if src.elem is None:
            raise fail_type("Element type of ", "sequence" if kind is SequenceType else "optional",
                            " input was unknown")
        inner = dst.elem if type(dst) is kind else None
        return kind(propagate_elem_validated(src.elem, UNSET if inner is None else inner))
    if kind is MapType:
        if src.key is None:
            raise fail_type("Key type of map input was unknown")
        if src.value is None:
            raise fail_type("Value type of map input was unknown")
        inner = dst.value if type(dst) is MapType else None
        return MapType(src.key, propagate_elem_validated(src.value, UNSET if inner is None else inner))
    raise fail_type("Input was expected to have either tensor, sequence, optional or map type. Got ",
                    _case_num(src))


def set_output_elem(ctx, o: int, elem: int, kind=TensorType) -> None:
    """``updateOutputElemType`` / ``propagateElemTypeFromDtypeToOutput``."""
    out = ctx.output(o)
    if out is None or out is UNSET:
        ctx.set_output(o, kind(elem, None))
    elif type(out) is kind:
        ctx.set_output(o, out.with_elem(elem))
    else:
        raise fail_type("Output ", o, " expected to have tensor or sparse tensor type: ", _CASE_NUMBERS[kind],
                        " in ", ctx.display_name(), ".")


def propagate_elem_from_attr(ctx, name: str, o: int, default: int = 0) -> None:
    """``propagateElemTypeFromAttributeToOutput`` (tensor output)."""
    a = ctx.attr(name)
    if a is None:
        if default:
            set_output_elem(ctx, o, default)
            return
        raise fail_type("Value of attribute ", name, " not specified in ", ctx.display_name(), ".")
    if not a.HasField("i"):
        raise fail_type("Attribute ", name, " should be of integer type and specify a type in ",
                        ctx.display_name(), ".")
    code = D.int32(a.i)  # the reference casts the int64 to its (32-bit) enum first
    if not is_valid_data_type(code):
        raise fail_type("Attribute ", name, " does not specify a valid type in ", ctx.display_name(), ".")
    set_output_elem(ctx, o, code)


def is_valid_data_type(code: int) -> bool:
    """``TensorProto_DataType_IsValid``: a value of the DataType enum (UNDEFINED included)."""
    from .typestr import ELEM_NAMES  # noqa: PLC0415
    return code == 0 or code in ELEM_NAMES


# -- input shapes ------------------------------------------------------------------------------

def has_shape(t) -> bool:
    """``hasShape``: a tensor's shape, or that of a container's element."""
    kind = type(t)
    if kind is TensorType or kind is SparseTensorType:
        return t.shape is not None
    if kind is SequenceType or kind is OptionalType:
        return t.elem is not None and has_shape(t.elem)
    return False


def has_input_shape(ctx, n: int) -> bool:
    if ctx.num_inputs <= n:
        return False
    t = ctx.input_type(n)
    return t is not None and has_shape(t)


def has_n_input_shapes(ctx, n: int) -> bool:
    return all(has_input_shape(ctx, i) for i in range(n))


def input_shape(ctx, n: int) -> tuple:
    """``getInputShape``: the input's tensor shape, which must exist."""
    t = ctx.input_type(n)
    if t is None:
        raise fail_type("Input ", n, " is null in ", ctx.display_name(), ".")
    kind = type(t)
    if kind is not TensorType and kind is not SparseTensorType:
        raise fail_type("Input ", n, "expected to be a tensor or a sparse tensor type in ", ctx.display_name(), ".")
    if t.shape is None:
        raise fail_shape("Input ", n, " must have a non null shape in ", ctx.display_name(), ".")
    return t.shape


def optional_input_shape(ctx, n: int):
    """``getOptionalInputShape``: the shape, () when the tensor has none, None when no type."""
    t = ctx.input_type(n)
    if t is None:
        return None
    kind = type(t)
    if kind is not TensorType and kind is not SparseTensorType:
        raise fail_type("Input ", n, "expected to be a tensor or a sparse tensor type in ", ctx.display_name(), ".")
    return t.shape if t.shape is not None else ()


def input_rank(ctx, n: int):
    """The rank of input ``n`` when its shape is known, else None."""
    if has_input_shape(ctx, n):
        return len(input_shape(ctx, n))
    return None


def check_input_rank(ctx, n: int, rank: int) -> None:
    if has_input_shape(ctx, n):
        r = len(input_shape(ctx, n))
        if r != rank:
            raise fail_shape("Input ", n, " expected to have rank ", rank, " but has rank ", r, " in ",
                             ctx.display_name(), ".")


def unify_input_dim(ctx, n: int, dim_index: int, d):
    """``unifyInputDim``: ``d`` refined by dim ``dim_index`` of input ``n`` (if its shape is known)."""
    if has_input_shape(ctx, n):
        s = input_shape(ctx, n)
        if len(s) <= dim_index:
            raise fail_shape("Input ", n, " expected to have rank >", dim_index, " but has rank ", len(s), " in ",
                             ctx.display_name(), ".")
        return D.unify(s[dim_index], d)
    return d


def unify_input_shape(ctx, n: int, dims: list) -> list:
    """``unifyInputShape``: each of ``dims`` refined by input ``n``'s dim (whose rank must match)."""
    if not has_input_shape(ctx, n):
        return dims
    check_input_rank(ctx, n, len(dims))
    return [D.unify(src, d) for src, d in zip(input_shape(ctx, n), dims)]


# -- output shapes ------------------------------------------------------------------------------

def output_shape(ctx, o: int):
    """The shape currently built for output ``o`` (None if absent)."""
    out = ctx.output(o)
    if type(out) is TensorType or type(out) is SparseTensorType:
        return out.shape
    return None


def set_output_shape(ctx, o: int, shape) -> None:
    """``getOutputShape(ctx, o)`` then assignment of the whole shape.

    As in the reference, a sparse output's shape goes to a (new) ``tensor_type``: its
    ``getTensorMutableShape`` asks for the tensor case in both cases.
    """
    out = ctx.output(o)
    kind = type(out)
    if kind is TensorType:
        ctx.set_output(o, TensorType(out.elem, tuple(shape)))
    elif kind is SparseTensorType:
        ctx.set_output(o, TensorType(None, tuple(shape)))
    elif out is None or out is UNSET:
        ctx.set_output(o, TensorType(None, tuple(shape)))
    else:
        raise fail_type("Output ", o, " expected to have tensor type in ", ctx.display_name(), ".")


def propagate_shape(ctx, i: int, o: int) -> None:
    """``propagateShapeFromInputToOutput``."""
    src = ctx.input_type(i)
    ctx.set_output(o, _propagate_shape(src, ctx.output(o)))


def _propagate_shape(src, dst):
    ks = type(src) if src is not None else None
    if src is UNSET:
        ks = None
    kd = type(dst) if dst is not None and dst is not UNSET else None
    if ks is not kd:
        raise fail_shape("Mismatch between inferred and declared type. Inferred=", _case_num(src),
                         " Declared=", _case_num(dst))
    if ks is TensorType or ks is SparseTensorType:
        if src.shape is not None:
            return dst.with_shape(src.shape)
        return dst
    if ks is SequenceType or ks is OptionalType:
        return ks(_propagate_shape(src.elem if src.elem is not None else UNSET,
                                   dst.elem if dst.elem is not None else UNSET))
    if ks is MapType:
        return MapType(dst.key, _propagate_shape(src.value if src.value is not None else UNSET,
                                                 dst.value if dst.value is not None else UNSET))
    raise fail_shape("Unsupported Source/Target type=", _case_num(src))


def propagate_shape_and_type(ctx) -> None:
    """``propagateShapeAndTypeFromFirstInput``: output 0 is input 0 (element type and shape)."""
    propagate_elem(ctx, 0, 0)
    if not has_input_shape(ctx, 0):
        return
    propagate_shape(ctx, 0, 0)


def append_input_dim(dims: list, ctx, i: int, d: int) -> None:
    dims.append(input_shape(ctx, i)[d])


# -- broadcasting ------------------------------------------------------------------------------

def broadcast(shapes) -> tuple:
    """``multidirectionalBroadcastShapeInference``.

    Per output dim: any known value other than 1 wins (two different ones are an
    error); with no such value, one distinct name (dims without value compare by their
    ``dim_param`` text, "" for an unknown dim) is kept, several give an unknown dim.
    """
    rank = max((len(s) for s in shapes), default=0)
    out: list[Dim] = []
    symbolic_mode = D.symbolic_state() is not None  # names that cannot be 1 decide
    for i in range(rank):
        value = 1
        symbolic = None
        n_symbolic = 0
        for s in shapes:
            j = i - rank + len(s)
            if j < 0:
                continue
            d = s[j]
            if type(d) is int:
                if d != 1:
                    if value != d and value != 1:
                        raise fail_shape("Incompatible dimensions")
                    value = d
            elif n_symbolic == 0:
                symbolic = d
                n_symbolic = 1
            elif dim_param_text(d) != dim_param_text(symbolic):
                n_symbolic += 1
        if value != 1 or n_symbolic == 0:
            out.append(value)
        elif n_symbolic == 1:
            out.append(symbolic)
        elif symbolic_mode:
            out.append(D.broadcast_names([s[i - rank + len(s)] for s in shapes if i - rank + len(s) >= 0]))
        else:
            out.append(None)
        if symbolic_mode and n_symbolic and value != 1:
            D.broadcast_names([s[i - rank + len(s)] for s in shapes if i - rank + len(s) >= 0])
    return tuple(out)


def broadcast_inputs_to_output(ctx, n_inputs: int, o: int = 0) -> None:
    """Output ``o``'s shape is the broadcast of the first ``n_inputs`` input shapes, when all known."""
    if has_n_input_shapes(ctx, n_inputs):
        set_output_shape(ctx, o, broadcast([input_shape(ctx, i) for i in range(n_inputs)]))


# -- axes ------------------------------------------------------------------------------------------

def check_axes_range(axes, rank: int) -> None:
    for a in axes:
        if a < -rank or a > rank - 1:
            raise fail_shape("Unexpected axis value: ", a, ". Expected range [", -rank, ", ", rank, ")")


def adjust_negative_axes(axes, rank: int) -> list:
    return [a + rank if a < 0 else a for a in axes]


def check_duplicate_axes(axes, rank: int) -> None:
    seen = set()
    for a in axes:
        actual = a + rank if a < 0 else a
        if actual in seen:
            raise fail_shape("Axis ", a, " is referred to more than once.")
        seen.add(actual)


def normalize_axis(axis: int, rank: int, what: str = "axis") -> int:
    """An axis in [-rank, rank) made non-negative, else an error naming the range."""
    if axis < -rank or axis >= rank:
        raise fail_shape(what, " ", axis, " is not in valid range [-", rank, ",", rank - 1, "]")
    return axis + rank if axis < 0 else axis


# -- shape-valued inputs ---------------------------------------------------------------------------

def shape_input(ctx, i: int, fail_if_negative: bool = False):
    """``getShapeInput``: the dims a shape-valued input gives, or None when not found.

    From the constant value, else from data propagation, else a rank-only shape from a
    1-D input of known length (at most MAX_RANK).
    """
    data = ctx.input_data(i)
    found = None
    if data is not None:
        found = tuple(data.values(7))
    if found is None:
        sym = ctx.symbolic_input(i)
        if sym is not None:
            found = tuple(sym)
    if found is None and has_input_shape(ctx, i):
        s = input_shape(ctx, i)
        if len(s) != 1:
            raise fail_shape("shape input must be 1D tensor")
        if type(s[0]) is int:
            n = s[0]
            if n < 0 or n > MAX_RANK:
                return None
            found = (None,) * n
    if found is not None and fail_if_negative:
        for d in found:
            if type(d) is int and d < 0:
                raise fail_shape("shape input tensor must have non-negative elements")
    return found


def attr_elem_type_and_length(a):
    """``getAttributeProtoElemTypeAndLength``: (elem type, number of values) of a value attribute."""
    if len(a.ints):
        return 7, len(a.ints)
    if len(a.floats):
        return 1, len(a.floats)
    if len(a.strings):
        return 8, len(a.strings)
    if a.HasField("t"):
        t = a.t
        if len(t.dims) != 1:
            raise fail_type("Attribute ", a.name, " expected to be a 1D tensor but was ", len(t.dims), "D")
        d0 = t.dims[0]
        if d0 < 0 or d0 > 2147483647:
            raise fail_type("Attribute ", a.name, " has tensor dimension ", d0,
                            " which is out of valid range [0, INT_MAX]")
        return t.data_type, d0
    return 0, 0


def attrs_elem_type_and_length(ctx, names) -> tuple:
    """``getAttributeElementTypeAndLength``: exactly one of ``names`` may be set."""
    elem, length = 0, 0
    for name in names:
        a = ctx.attr(name)
        if a is not None:
            if elem != 0:
                raise fail_shape("One and only one attribute must be set out of ", ", ".join(names) + ", ")
            elem, length = attr_elem_type_and_length(a)
    return elem, length


def is_ints_attr(a) -> bool:
    return a is not None and a.HasField("type") and a.type == A_INTS
