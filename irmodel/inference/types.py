"""Value types and dims as inference computes with them: small immutable Python values.

Inference runs on these, not on `TypeProto` messages: they are cheap to build and
compare, hashable, and independent of the wire format.  Conversion to and from
messages happens once per value (`type_from_proto`, `type_to_proto`).

**Dims.**  A dim is one of

* an ``int`` -- a known size (``dim_value``);
* a ``str`` -- a named size (``dim_param``), compared by name;
* ``None`` -- unknown (a `Dimension` with neither field set).

Every computation on dims goes through `irmodel.inference.dims`, never through Python
operators in the operator functions.  That module applies the reference's rules today
(known x known is known, ``1 * d`` is ``d``, anything else unknown); symbolic mode adds a
fourth kind, an integer expression over names, by changing only that module and
`dim_param_text`: an expression is neither ``int`` nor ``str``, so every ``isinstance(d,
int)`` test in the operator code already treats it as "not known", and its canonical
text becomes the ``dim_param`` written out.

**Presence.**  The reference compares its output byte for byte, and protobuf writes a
field that was set to its default.  So presence is kept where inference can produce it:
``elem`` is ``None`` when ``elem_type`` is absent (``0`` when set to UNDEFINED), a
shape is ``None`` when absent (``()`` is a scalar), a container's element type is
``None`` when absent and `UNSET` when present but empty.

Not kept: ``denotation`` of types and dims (no inference rule produces or reads one;
an existing declared type is written back untouched unless inference changed it).
"""

from __future__ import annotations

from itertools import accumulate
TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs every process a few ms
    from typing import Any

from wirefmt import encode_varint

from .._wireview import fields as F

Dim = int | str | None
Shape = tuple  # tuple[Dim, ...]


class _TypeBase:
    __slots__ = ()

    def __eq__(self, other) -> bool:
        return type(self) is type(other) and self._key() == other._key()

    def __ne__(self, other) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return hash((type(self).__name__, self._key()))

    def _key(self) -> tuple:  # pragma: no cover - overridden
        raise NotImplementedError


class UnsetType(_TypeBase):
    """A `TypeProto` that is present but has no value (``value_case`` NOT_SET)."""

    __slots__ = ()

    def _key(self) -> tuple:
        return ()

    def __repr__(self) -> str:
        return "UNSET"


UNSET = UnsetType()


class TensorType(_TypeBase):
    """``tensor_type``: element type code (or None) and shape (tuple of dims, or None)."""

    __slots__ = ("elem", "shape")
    elem: int | None
    shape: Shape | None

    def __init__(self, elem: int | None = None, shape: Shape | None = None):
        object.__setattr__(self, "elem", elem)
        object.__setattr__(self, "shape", shape)

    def __setattr__(self, name, value):
        raise AttributeError("types are immutable")

    def _key(self) -> tuple:
        return (self.elem, self.shape)

    # The base class's, inlined: types are hashed and compared once per value (merging,
    # the serialized-type cache), the commonest ones tensors.
    def __eq__(self, other) -> bool:
        return type(self) is type(other) and self.elem == other.elem and self.shape == other.shape

    def __hash__(self) -> int:
        return hash((self.elem, self.shape))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.elem!r}, {self.shape!r})"

    @property
    def rank(self) -> int | None:
        return None if self.shape is None else len(self.shape)

    def with_elem(self, elem):
        return type(self)(elem, self.shape)

    def with_shape(self, shape):
        return type(self)(self.elem, shape)


class SparseTensorType(TensorType):
    """``sparse_tensor_type``: as a tensor type."""

    __slots__ = ()


class SequenceType(_TypeBase):
    """``sequence_type``: the element type (a type, `UNSET`, or None when absent)."""

    __slots__ = ("elem",)
    elem: Type | None

    def __init__(self, elem=None):
        object.__setattr__(self, "elem", elem)

    def __setattr__(self, name, value):
        raise AttributeError("types are immutable")

    def _key(self) -> tuple:
        return (self.elem,)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.elem!r})"


class OptionalType(SequenceType):
    """``optional_type``: the element type."""

    __slots__ = ()


class MapType(_TypeBase):
    """``map_type``: key element type code (or None) and value type (or None/UNSET)."""

    __slots__ = ("key", "value")
    key: int | None
    value: Type | None

    def __init__(self, key: int | None = None, value=None):
        object.__setattr__(self, "key", key)
        object.__setattr__(self, "value", value)

    def __setattr__(self, name, value):
        raise AttributeError("types are immutable")

    def _key(self) -> tuple:
        return (self.key, self.value)

    def __repr__(self) -> str:
        return f"MapType({self.key!r}, {self.value!r})"


class OpaqueType(_TypeBase):
    """``opaque_type``: domain and name (None when absent)."""

    __slots__ = ("domain", "name")
    domain: str | None
    name: str | None

    def __init__(self, domain: str | None = None, name: str | None = None):
        object.__setattr__(self, "domain", domain)
        object.__setattr__(self, "name", name)

    def __setattr__(self, name, value):
        raise AttributeError("types are immutable")

    def _key(self) -> tuple:
        return (self.domain, self.name)

    def __repr__(self) -> str:
        return f"OpaqueType({self.domain!r}, {self.name!r})"


Type = UnsetType | TensorType | SparseTensorType | SequenceType | OptionalType | MapType | OpaqueType

# The reference's value-case names, for messages.
CASE_NAMES = {UnsetType: "NOT_SET", TensorType: "tensor_type", SparseTensorType: "sparse_tensor_type",
              SequenceType: "sequence_type", OptionalType: "optional_type", MapType: "map_type",
              OpaqueType: "opaque_type"}


def case_name(t) -> str:
    return "NOT_SET" if t is None else CASE_NAMES[type(t)]


def is_tensor_like(t) -> bool:
    """A tensor or a sparse tensor (the reference's ``kTensorType || kSparseTensorType``)."""
    return type(t) is TensorType or type(t) is SparseTensorType


def dim_param_text(d: Dim) -> str:
    """The ``dim_param`` string the reference compares dims by ("" for a known or unknown one)."""
    return d if type(d) is str else ""


def shape_of(t) -> Shape | None:
    """The shape of a tensor or sparse tensor type, else None."""
    if type(t) is TensorType or type(t) is SparseTensorType:
        return t.shape
    return None


# -- conversion from messages ---------------------------------------------------------

def shape_from_proto(shape_msg) -> Shape:
    dims = []
    for d in shape_msg.dim:
        which = d.WhichOneof("value")
        if which == "dim_value":
            dims.append(d.dim_value)
        elif which == "dim_param":
            p = d.dim_param
            dims.append(p.decode("utf-8", "surrogateescape") if type(p) is bytes else p)
        else:
            dims.append(None)
    return tuple(dims)


def type_from_proto(tp) -> Type:
    """A `TypeProto` view as a `Type` (UNSET when no value is set)."""
    which = tp.WhichOneof("value")
    if which == "tensor_type" or which == "sparse_tensor_type":
        t = tp.tensor_type if which == "tensor_type" else tp.sparse_tensor_type
        elem = t.elem_type if t.HasField("elem_type") else None
        shape = shape_from_proto(t.shape) if t.HasField("shape") else None
        return (TensorType if which == "tensor_type" else SparseTensorType)(elem, shape)
    if which == "sequence_type" or which == "optional_type":
        t = tp.sequence_type if which == "sequence_type" else tp.optional_type
        elem = type_from_proto(t.elem_type) if t.HasField("elem_type") else None
        return (SequenceType if which == "sequence_type" else OptionalType)(elem)
    if which == "map_type":
        m = tp.map_type
        key = m.key_type if m.HasField("key_type") else None
        value = type_from_proto(m.value_type) if m.HasField("value_type") else None
        return MapType(key, value)
    if which == "opaque_type":
        o = tp.opaque_type
        return OpaqueType(o.domain if o.HasField("domain") else None,
                          o.name if o.HasField("name") else None)
    return UNSET


# -- conversion to messages -----------------------------------------------------------

def type_to_proto(t):
    """A `TypeProto` message for ``t``, with the same fields present (opened over its bytes)."""
    from .. import loads  # noqa: PLC0415
    return loads(type_bytes(t), "TypeProto")


# -- serialized form ----------------------------------------------------------------------
# Written straight to bytes (canonical protobuf: fields in number order) and opened as a
# lazy message: the encoder then copies the bytes as they are.  Field numbers are those
# of onnx.proto (TypeProto: tensor 1, sequence 4, map 5, opaque 7, sparse 8, optional 9;
# Tensor/SparseTensor: elem_type 1, shape 2; Dimension: dim_value 1, dim_param 2;
# ValueInfoProto: name 1, type 2).

def _varint(n: int) -> bytes:
    return encode_varint(n & 0xFFFFFFFFFFFFFFFF)


def _utf8(v) -> bytes:
    """Text as stored: bytes stay bytes, surrogate escapes go back to the bytes they stood for."""
    return v if type(v) is bytes else v.encode("utf-8", "surrogateescape")


def length_field(number: int, payload: bytes) -> bytes:
    """A length-delimited field: its tag, the payload's length and the payload."""
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _shape_bytes(shape) -> bytes:
    out = []
    for d in shape:
        if type(d) is int:
            body = F.DIM_VALUE_TAG + _varint(d)
        elif d is None:
            body = b""
        else:
            body = length_field(F.DIM_PARAM, _utf8(d if type(d) is str else str(d)))
        out.append(length_field(F.DIM, body))
    return b"".join(out)


_TYPE_CACHE: dict = {}


def type_bytes(t) -> bytes:
    """The serialized `TypeProto` of ``t`` (cached: models repeat a few types many times)."""
    try:
        return _TYPE_CACHE[t]
    except KeyError:
        pass
    except TypeError:  # an unhashable dim kind would land here; encode without caching
        return _type_bytes(t)
    data = _type_bytes(t)
    if len(_TYPE_CACHE) > 4096:
        _TYPE_CACHE.clear()
    _TYPE_CACHE[t] = data
    return data


def _type_bytes(t) -> bytes:
    kind = type(t)
    if kind is TensorType or kind is SparseTensorType:
        body = b""
        if t.elem is not None:
            body += F.ELEM_TYPE_TAG + _varint(t.elem)
        if t.shape is not None:
            body += length_field(F.SHAPE, _shape_bytes(t.shape))
        return length_field(F.TYPE_TENSOR if kind is TensorType else F.TYPE_SPARSE_TENSOR, body)
    if kind is SequenceType or kind is OptionalType:
        body = b"" if t.elem is None else length_field(F.SEQUENCE_ELEM, _type_bytes(t.elem))
        return length_field(F.TYPE_SEQUENCE if kind is SequenceType else F.TYPE_OPTIONAL, body)
    if kind is MapType:
        body = b""
        if t.key is not None:
            body += F.MAP_KEY_TAG + _varint(t.key)
        if t.value is not None:
            body += length_field(F.MAP_VALUE, _type_bytes(t.value))
        return length_field(F.TYPE_MAP, body)
    if kind is OpaqueType:
        body = b""
        if t.domain is not None:
            body += length_field(F.OPAQUE_DOMAIN, _utf8(t.domain))
        if t.name is not None:
            body += length_field(F.OPAQUE_NAME, _utf8(t.name))
        return length_field(F.TYPE_OPAQUE, body)
    return b""


def value_info_bytes(name: str, t) -> bytes:
    """A serialized `ValueInfoProto` with ``name`` and type ``t``."""
    return length_field(F.VALUE_INFO_NAME, _utf8(name)) + length_field(F.VALUE_INFO_TYPE, type_bytes(t))


_SHORT = [bytes((n,)) for n in range(128)]  # one-byte varints


def value_infos_in_model_bytes(entries) -> bytes:
    """A serialized ModelProto whose graph holds one ValueInfoProto per ``(name, type)``.

    So that many new entries are opened with one decode (`api._write_back`), at the
    depth a graph's entries have in a model.  Same bytes per entry as `value_info_bytes`.
    """
    return length_field(F.MODEL_GRAPH_NUMBER, value_info_fields(entries))


def value_info_fields(entries, spans: list | None = None, slots: bool = False) -> bytes:
    """``GraphProto.value_info`` fields (each with its tag), one per ``(name, type)``.

    Each distinct type object is serialized once, with the heads (tag and lengths) of
    the entries of each name length; an entry is then that head, its name and the type's
    bytes, and the whole a single join (an entry of the same type and name length as the
    one before, the commonest case, reuses its parts without a lookup).  ``spans``, when
    given, receives the flat ``[start, end, ...]`` of each entry's ValueInfoProto (after
    its tag and length) in the result, as a scan of it would record them (`splice` needs
    no scan then).  ``slots``: the entries are ``(name, slot)`` and the type is the
    slot's ``type`` (a `GraphRecord`'s ``added``, without a list of pairs made first).
    """
    short = _SHORT
    type_tag, name_tag, value_info_tag = F.VALUE_INFO_TYPE_TAG, F.VALUE_INFO_NAME_TAG, F.GRAPH_VALUE_INFO_TAG
    # (id(type), name length) -> (type, head, field 2 with its tag, entry size, message size); type kept alive
    heads: dict = {}
    parts: list = []
    extend = parts.extend
    sized: list | None = [] if spans is not None else None
    last_t: Any = None
    last_n: Any = None
    hit: Any = None
    for name, t in entries:
        if slots:
            t = t.type
        if type(name) is str:
            try:
                nb = name.encode()
            except UnicodeEncodeError:
                nb = name.encode("utf-8", "surrogateescape")
        else:
            nb = name
        n = len(nb)
        if t is not last_t or n != last_n:
            hit = heads.get((id(t), n))
            if hit is None:
                tb = type_bytes(t)
                field = type_tag + (short[len(tb)] if len(tb) < 128 else _varint(len(tb))) + tb
                name_head = name_tag + (short[n] if n < 128 else _varint(n))
                size = len(name_head) + n + len(field)
                head = value_info_tag + (short[size] if size < 128 else _varint(size)) + name_head
                hit = heads[(id(t), n)] = (t, head, field, len(head) - len(name_head) + size, size)
            last_t, last_n = t, n
        extend((hit[1], nb, hit[2]))
        if sized is not None:
            sized.append(hit)
    if spans is not None and sized:
        ends = list(accumulate([hit[3] for hit in sized]))
        flat: list = [0] * (2 * len(ends))
        flat[1::2] = ends
        flat[0::2] = [end - hit[4] for end, hit in zip(ends, sized)]
        spans.extend(flat)
    return b"".join(parts)
