"""Denotations of declared types, kept and dropped where the reference keeps and drops them.

``TypeProto.denotation`` and ``TensorShapeProto.Dimension.denotation`` are not part of
the inference types (`types`): no operator rule of ours reads them.  The reference merges
each inferred type *into* the declared ``TypeProto`` (``mergeShapesAndTypes``), so

* the declared type's own denotation (and that of nested element types) stays;
* a declared dim keeps its denotation unless the merge replaces the whole dim, which
  it does when the declared dim is unknown or the inferred dim has a value, even an
  equal one (the replacing dim brings its own denotation: none, for dims our rules
  build).

The engine records, for every declared type, the inferred types merged into it
(`slot.Slot.merged`); `declared_type_bytes` replays those merges over the declared
message and writes the result with the denotations that survive.

Not modelled: the reference's operator rules that copy a whole input dim (``*out_dim
= in_dim``) carry that dim's denotation to the output; ours produce dims without one.
"""

from __future__ import annotations

from wirefmt import encode_varint

from .._wireview import fields as F
from .types import MapType, OptionalType, SequenceType, SparseTensorType, TensorType, length_field, type_bytes


def has_denotation(tp) -> bool:
    """Whether a `TypeProto` view or anything nested in it carries a denotation."""
    if tp.denotation:
        return True
    which = tp.WhichOneof("value")
    if which == "tensor_type" or which == "sparse_tensor_type":
        t = tp.tensor_type if which == "tensor_type" else tp.sparse_tensor_type
        if t.HasField("shape"):
            for d in t.shape.dim:
                if d.denotation:
                    return True
        return False
    if which == "sequence_type":
        return tp.sequence_type.HasField("elem_type") and has_denotation(tp.sequence_type.elem_type)
    if which == "optional_type":
        return tp.optional_type.HasField("elem_type") and has_denotation(tp.optional_type.elem_type)
    if which == "map_type":
        return tp.map_type.HasField("value_type") and has_denotation(tp.map_type.value_type)
    return False


def _text(v) -> bytes:
    return v if type(v) is bytes else v.encode("utf-8", "surrogateescape")


def _replaced_dims(original, merged: list) -> set:
    """Indices of the declared dims some merge replaced whole (``*existing_dim = inferred_dim``)."""
    from .merge import merge  # noqa: PLC0415
    out = set()
    current = original
    for inferred in merged:
        if inferred is None:
            continue
        shape = getattr(current, "shape", None)
        inf_shape = getattr(inferred, "shape", None)
        if shape is not None and inf_shape is not None and type(inferred) is type(current):
            for i, d in enumerate(inf_shape):
                if i < len(shape) and (shape[i] is None or type(d) is int):
                    out.add(i)
        current = merge(inferred, current)
    return out


def _element(t, attr: str):
    return getattr(t, attr, None) if t is not None else None


_FIELD = {TensorType: F.TYPE_TENSOR, SequenceType: F.TYPE_SEQUENCE, MapType: F.TYPE_MAP,
          SparseTensorType: F.TYPE_SPARSE_TENSOR, OptionalType: F.TYPE_OPTIONAL}


def _with_note(kind, head: bytes, note) -> bytes:
    """A TypeProto's value field and its denotation, in field-number order."""
    if not note:
        return head
    tail = length_field(F.TYPE_DENOTATION, _text(note))
    return head + tail if _FIELD.get(kind, F.TYPE_OPAQUE) < F.TYPE_DENOTATION else tail + head


def _encode(final, tp, original, merged: list) -> bytes:
    """TypeProto bytes of ``final`` with the denotations of view ``tp`` that survive the merges.

    ``original`` is the declared type as inference read it and ``merged`` the inferred
    types merged into it; both are followed down into element types.
    """
    kind = type(final)
    if tp is None:
        return type_bytes(final)
    note = tp.denotation
    if type(original) is not kind:  # declared without a value (or another kind): filled in whole
        return _with_note(kind, type_bytes(final), note)
    merged = [m for m in merged if m is not None]
    if kind is TensorType or kind is SparseTensorType:
        msg = tp.tensor_type if kind is TensorType else tp.sparse_tensor_type
        body = b"" if final.elem is None else F.ELEM_TYPE_TAG + encode_varint(final.elem & 0xFFFFFFFFFFFFFFFF)
        if final.shape is not None:
            declared_dims = list(msg.shape.dim) if original.shape is not None else []
            replaced = _replaced_dims(original, merged)
            dims = []
            for i, d in enumerate(final.shape):
                if type(d) is int:
                    dim = F.DIM_VALUE_TAG + encode_varint(d & 0xFFFFFFFFFFFFFFFF)
                elif d is None:
                    dim = b""
                else:
                    dim = length_field(F.DIM_PARAM, _text(d))
                if i < len(declared_dims) and i not in replaced and declared_dims[i].denotation:
                    dim += length_field(F.DIM_DENOTATION, _text(declared_dims[i].denotation))
                dims.append(length_field(F.DIM, dim))
            body += length_field(F.SHAPE, b"".join(dims))
        return _with_note(kind, length_field(_FIELD[kind], body), note)
    if kind is SequenceType or kind is OptionalType:
        inner = tp.sequence_type if kind is SequenceType else tp.optional_type
        sub_tp = inner.elem_type if inner.HasField("elem_type") else None
        body = b"" if final.elem is None else length_field(F.SEQUENCE_ELEM, _encode(final.elem, sub_tp, original.elem,
                                                                [_element(m, "elem") for m in merged]))
        return _with_note(kind, length_field(_FIELD[kind], body), note)
    if kind is MapType:
        m = tp.map_type
        body = b"" if final.key is None else F.MAP_KEY_TAG + encode_varint(final.key & 0xFFFFFFFFFFFFFFFF)
        if final.value is not None:
            sub_tp = m.value_type if m.HasField("value_type") else None
            body += length_field(F.MAP_VALUE, _encode(final.value, sub_tp, original.value,
                                      [_element(x, "value") for x in merged]))
        return _with_note(kind, length_field(F.TYPE_MAP, body), note)
    return _with_note(kind, type_bytes(final), note)  # opaque


def declared_type_bytes(final, tp, original, merged: list) -> bytes | None:
    """The declared entry's new TypeProto bytes, or None when the reference leaves it as it is.

    ``tp`` is the declared `TypeProto` view; ``final`` the merged type.  Without
    denotations in ``tp`` the answer is None exactly when ``final`` equals ``original``.
    """
    if not has_denotation(tp):
        return None if final == original else type_bytes(final)
    from .. import dumps  # noqa: PLC0415
    data = _encode(final, tp, original, merged)
    return None if data == dumps(tp) else data
