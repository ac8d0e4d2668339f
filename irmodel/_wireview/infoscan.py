"""A graph input's or output's tensor type, and a model's opset entries, read from their bytes.

What ``irmodel inspect`` reports of a graph's inputs and outputs is each one's name,
element type and shape, and of the model's opsets each domain and version.  Making the
messages for that (a ValueInfoProto, its TypeProto, TypeProto.Tensor, TensorShapeProto
and a Dimension per dim; an OperatorSetIdProto per opset) costs each of those six types
its scan code (loaded from the code cache: about 0.1 ms a type, most of the time these
few values take).  `value_info_tensor` and `opset_entry` read the wire form instead,
and answer only for the plain case: a value whose type is a tensor type, each message on
the way occurring once, every field of interest with the wire type the schema gives
it, names and dim params valid UTF-8.  For anything else they answer None, and the
caller makes the messages (`irmodel._report.summary`), which reads what is unusual its own way
(merges repeated occurrences, keeps misfitting fields aside) and raises the error bad
bytes deserve.

The rules of the message path hold, so the two agree exactly: each level is read field
by field with `irmodel._wireview.wire.field` (the checks the full scan makes: tags,
lengths, varints, groups, a field running past its message); the last scalar wins, and
of a Dimension's ``dim_value`` and ``dim_param`` (a oneof) the last one read; unknown
fields are skipped.  ``doc_string`` is not read, by either path, and of ``denotation``
only whether one is there (`value_info_type`: inference keeps them); a
value with ``metadata_props`` (messages: the checker decodes them) is declined, so that
a value read here has nothing left undecoded.
"""

from __future__ import annotations

from wirefmt.errors import DecodeError
from wirefmt.limits import MAX_DEPTH
from wirefmt.schema import LEN as _LEN, VARINT as _VARINT
from wirefmt.varint import to_int64

from .fields import number as _number
from .wire import field as _field

_INT32_MAX = (1 << 31) - 1
#: How far below a ValueInfoProto its Dimensions are (type, tensor type, shape, dim).
_DIMENSION_BELOW = 4

_VI_NAME, _VI_TYPE = _number("ValueInfoProto", "name"), _number("ValueInfoProto", "type")
_VI_METADATA = _number("ValueInfoProto", "metadata_props")
#: The members of TypeProto's ``value`` oneof: a plain value has ``tensor_type`` alone.
_TENSOR_TYPE = _number("TypeProto", "tensor_type")
_OTHER_TYPES = frozenset(_number("TypeProto", f) for f in ("sequence_type", "map_type", "optional_type",
                                                            "sparse_tensor_type", "opaque_type"))
_ELEM_TYPE, _SHAPE = _number("TypeProto.Tensor", "elem_type"), _number("TypeProto.Tensor", "shape")
_DIM = _number("TensorShapeProto", "dim")
_DIM_VALUE = _number("TensorShapeProto.Dimension", "dim_value")
_DIM_PARAM = _number("TensorShapeProto.Dimension", "dim_param")
_TP_DENOTATION = _number("TypeProto", "denotation")
_DIM_DENOTATION = _number("TensorShapeProto.Dimension", "denotation")
_OPSET_DOMAIN, _OPSET_VERSION = _number("OperatorSetIdProto", "domain"), _number("OperatorSetIdProto", "version")


def value_info_tensor(src, start: int, end: int, depth: int) -> tuple | None:
    """``(name, elem_type, shape)`` of the plain ValueInfoProto in ``src[start:end]``, else
    None.  ``shape`` is None when the tensor type has no ``shape``, else a list of ints
    (``dim_value``), strings (``dim_param``) and None (neither), as `summary.type_info`
    reports it; an absent ``elem_type`` reads 0, as the message's field does.  ``depth``
    is the value's nesting depth as the full path sees it (2 for a main graph's input).
    See the module docstring.
    """
    found = value_info_type(src, start, end, depth)
    if found is None:
        return None
    name, elem_type, shape, _ = found
    return name, (0 if elem_type is None else elem_type), shape


def value_info_type(src, start: int, end: int, depth: int) -> tuple | None:
    """``(name, elem_type, shape, denoted)``: `value_info_tensor`'s, but ``elem_type`` None
    when the field is absent (inference tells an absent element type from UNDEFINED, as
    the reference's ``has_elem_type``), and ``denoted``: whether the type or a dim has a
    non-empty ``denotation`` (inference keeps those through merges, `denotation`).
    A value so deep that its Dimensions would pass the nesting limit is declined: the
    message path raises there, as protobuf does."""
    if depth + _DIMENSION_BELOW > MAX_DEPTH:
        return None
    try:
        name = ""
        type_span = None
        pos = start
        while pos < end:
            number, wt, a, pos = _field(src, pos, end, depth)
            if number == _VI_NAME:
                if wt != _LEN:
                    return None
                name = src[a:pos].decode()
            elif number == _VI_TYPE:
                if wt != _LEN or type_span is not None:  # twice: merged by the message path
                    return None
                type_span = (a, pos)
            elif number == _VI_METADATA and wt == _LEN:
                return None
        if pos != end or type_span is None:
            return None
        denoted: list = []  # a True for each denotation met
        tensor = _only_tensor_type(src, type_span[0], type_span[1], depth + 1, denoted)
        if tensor is None:
            return None
        found = _tensor(src, tensor[0], tensor[1], depth + 2, denoted)
        return None if found is None else (name, found[0], found[1], bool(denoted))
    except (DecodeError, IndexError, UnicodeDecodeError):
        return None


def _only_tensor_type(src, start: int, end: int, depth: int, denoted: list) -> tuple | None:
    """The span of a TypeProto's ``tensor_type``, if that is its one member of ``value``."""
    tensor = None
    pos = start
    while pos < end:
        number, wt, a, pos = _field(src, pos, end, depth)
        if number == _TENSOR_TYPE:
            if wt != _LEN or tensor is not None:
                return None
            tensor = (a, pos)
        elif number in _OTHER_TYPES:
            return None
        elif number == _TP_DENOTATION and wt == _LEN and pos > a:
            denoted.append(True)
    return tensor if pos == end else None


def _tensor(src, start: int, end: int, depth: int, denoted: list) -> tuple | None:
    """``(elem_type or None, shape)`` of a TypeProto.Tensor (see `value_info_type`)."""
    elem_type = None
    shape_span = None
    pos = start
    while pos < end:
        number, wt, a, pos = _field(src, pos, end, depth)
        if number == _ELEM_TYPE:
            if wt != _VARINT or a > _INT32_MAX:  # int32 truncation and negative codes: the message path's
                return None
            elem_type = a
        elif number == _SHAPE:
            if wt != _LEN or shape_span is not None:
                return None
            shape_span = (a, pos)
    if pos != end:
        return None
    if shape_span is None:
        return elem_type, None
    shape = []
    pos, end = shape_span
    while pos < end:
        number, wt, a, pos = _field(src, pos, end, depth + 1)
        if number == _DIM:
            if wt != _LEN:
                return None
            dim = _dimension(src, a, pos, depth + 2, denoted)
            if dim is _REFUSED:
                return None
            shape.append(dim)
    return (elem_type, shape) if pos == end else None


_REFUSED = object()


def _dimension(src, start: int, end: int, depth: int, denoted: list):
    """A Dimension's ``dim_value`` or ``dim_param`` (the last one read), None, or `_REFUSED`."""
    value = None
    pos = start
    while pos < end:
        number, wt, a, pos = _field(src, pos, end, depth)
        if number == _DIM_VALUE:
            if wt != _VARINT:
                return _REFUSED
            value = to_int64(a)
        elif number == _DIM_PARAM:
            if wt != _LEN:
                return _REFUSED
            value = src[a:pos].decode()
        elif number == _DIM_DENOTATION and wt == _LEN and pos > a:
            denoted.append(True)
    return value if pos == end else _REFUSED


def opset_entry(src, start: int, end: int, depth: int) -> tuple | None:
    """``(domain, version)`` of the OperatorSetIdProto in ``src[start:end]``, else None."""
    domain = ""
    version = 0
    pos = start
    try:
        while pos < end:
            number, wt, a, pos = _field(src, pos, end, depth)
            if number == _OPSET_DOMAIN:
                if wt != _LEN:
                    return None
                domain = src[a:pos].decode()
            elif number == _OPSET_VERSION:
                if wt != _VARINT:
                    return None
                version = to_int64(a)
    except (DecodeError, IndexError, UnicodeDecodeError):
        return None
    return (domain, version) if pos == end else None
