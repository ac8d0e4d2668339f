"""Combining an inferred type with an existing one, with the reference's rules.

* `check_compatible`: kinds, element types, ranks and known dim values must agree
  (an unset side is compatible with anything).
* `merge`: the existing type refined by the inferred one -- an unset element type is
  filled, an absent shape copied, and per dim an inferred value fills or overrides,
  an existing name stays, an unknown existing dim takes whatever was inferred.
* `merge_in_shape` / `merge_in_dim`: the operator helpers' gentler merge (the target's
  name beats the source's).
* `union`: the least type covering two (used for the branches of If and for Loop).

All functions return new values (types are immutable).
"""

from __future__ import annotations

from .errors import fail_shape, fail_type
from .typestr import elem_name_or_code
from .types import (UNSET, MapType, OpaqueType, OptionalType, SequenceType, SparseTensorType,
                    TensorType, case_name)


def _check_tensor(inf, ex) -> None:
    ie = inf.elem or 0
    ee = ex.elem or 0
    if ie and ee and ie != ee:
        raise fail_type("Inferred elem type differs from existing elem type: (", elem_name_or_code(ie),
                        ") vs (", elem_name_or_code(ee), ")")
    if inf.shape is None or ex.shape is None:
        return
    if len(inf.shape) != len(ex.shape):
        raise fail_shape("Inferred shape and existing shape differ in rank: (", len(inf.shape), ") vs (",
                         len(ex.shape), ")")
    for i, (a, b) in enumerate(zip(inf.shape, ex.shape)):
        if type(a) is int and type(b) is int and a != b:
            raise fail_shape("Inferred shape and existing shape differ in dimension ", i, ": (", a, ") vs (",
                             b, ")")


def _sub(t):
    """A container's element type as the reference reads it: absent reads as unset."""
    return UNSET if t is None else t


def check_compatible(inf, ex) -> None:
    """``checkShapesAndTypes(inferred, existing)``: raise if they contradict each other."""
    if inf is UNSET or ex is UNSET:
        return
    ki, ke = type(inf), type(ex)
    if ki is not ke:
        raise fail_type("type case mismatch. existing=", case_name(ex), " inferred=", case_name(inf))
    if ki is TensorType or ki is SparseTensorType:
        _check_tensor(inf, ex)
    elif ki is SequenceType or ki is OptionalType:
        check_compatible(_sub(inf.elem), _sub(ex.elem))
    elif ki is MapType:
        if (inf.key or 0) != (ex.key or 0):
            raise fail_type("key type mismatch from MapProto. existing=", elem_name_or_code(ex.key or 0),
                            " inferred=", elem_name_or_code(inf.key or 0))
        check_compatible(_sub(inf.value), _sub(ex.value))
    elif ki is OpaqueType:
        if ex.domain is not None and inf.domain is not None and \
                _norm_domain(ex.domain) != _norm_domain(inf.domain):
            raise fail_type("domain mismatch for opaque type: existing=", ex.domain, " inferred=", inf.domain)
        if ex.name is not None and inf.name is not None and ex.name != inf.name:
            raise fail_type("name mismatch for opaque type: existing=", ex.name, " inferred=", inf.name)


def _norm_domain(d: str) -> str:
    return "" if d == "ai.onnx" else d


def _merge_tensor(inf, ex, kind):
    if type(ex) is not kind:  # the existing value was unset: the reference creates this kind
        ex = kind(None, None)
    elem = ex.elem if ex.elem else (inf.elem if inf.elem is not None else 0)
    if inf.shape is None:
        return kind(elem, ex.shape)
    if ex.shape is None:
        return kind(elem, inf.shape)
    merged = list(ex.shape)
    for i, d in enumerate(inf.shape):
        if merged[i] is None or type(d) is int:
            merged[i] = d
    return kind(elem, tuple(merged))


def merge(inf, ex):
    """``mergeShapesAndTypes(inferred, existing)``: the existing type, refined."""
    check_compatible(inf, ex)
    ki = type(inf)
    if ki is TensorType or ki is SparseTensorType:
        return _merge_tensor(inf, ex, ki)
    if ki is SequenceType or ki is OptionalType:
        ex_elem = ex.elem if type(ex) is ki else None
        return ki(merge(_sub(inf.elem), _sub(ex_elem)))
    if ki is MapType:
        key = ex.key if type(ex) is MapType else None
        value = ex.value if type(ex) is MapType else None
        if not key:
            key = inf.key if inf.key is not None else 0
        return MapType(key, merge(_sub(inf.value), _sub(value)))
    if ki is OpaqueType:
        dom = ex.domain if type(ex) is OpaqueType else None
        name = ex.name if type(ex) is OpaqueType else None
        if dom is None and inf.domain is not None:
            dom = inf.domain
        if name is None and inf.name is not None:
            name = inf.name
        return OpaqueType(dom, name)
    return ex


# -- the operator helpers' merge ---------------------------------------------------------

def merge_in_dim(source, target, index: int):
    """``mergeInDimensionInfo``: values win over names, the target's name over the source's."""
    if type(source) is int:
        if type(target) is int:
            if target != source:
                raise fail_shape("Can't merge shape info. Both inferred and declared dimension have values but "
                                 "they differ. Inferred=", source, " Declared=", target, " Dimension=", index)
            return target
        return source
    if target is not None:
        return target
    return source


def merge_in_shape(source: tuple, target: tuple | None) -> tuple:
    """``mergeInShapeInfo(source_shape, target_type)``: the target's new shape."""
    if target is None:
        return source
    if len(source) != len(target):
        raise fail_shape("Mismatch between number of inferred and declared dimensions. inferred=", len(source),
                         " declared=", len(target))
    return tuple(merge_in_dim(s, t, i) for i, (s, t) in enumerate(zip(source, target)))


# -- union --------------------------------------------------------------------------------

def _union_shape(source_shape, target_shape):
    if target_shape is None:
        return None
    if source_shape is None or len(source_shape) != len(target_shape):
        return None
    out = []
    for s, t in zip(source_shape, target_shape):
        if type(s) is int:
            conflict = not (type(t) is int and t == s)
        elif type(s) is str:
            conflict = not (type(t) is str and t == s)
        else:
            conflict = t is not None
        out.append(None if conflict and t is not None else t)
    return tuple(out)


def union_shape_into(source_shape, target):
    """``UnionShapeInfo(source_shape, target_tensor_type)``."""
    if target.shape is None:
        return target
    return type(target)(target.elem, _union_shape(source_shape, target.shape))


def union(source, target):
    """``UnionTypeInfo(source, target)``: the target widened to cover the source."""
    ks, kt = type(source), type(target)
    if ks is not kt:
        raise fail_type("Mismatched type:", " inferred=", case_name(source), " declared=", case_name(target))
    if kt is TensorType or kt is SparseTensorType:
        if (source.elem or 0) != (target.elem or 0):
            what = "tensor" if kt is TensorType else "sparse tensor"
            raise fail_type(f"Mismatched {what} element type:", " inferred=", elem_name_or_code(source.elem or 0),
                            " declared=", elem_name_or_code(target.elem or 0))
        if source.shape is None:
            return kt(target.elem, None)
        return union_shape_into(source.shape, target)
    if kt is SequenceType or kt is OptionalType:
        what = "sequence" if kt is SequenceType else "optional"
        if source.elem is None:
            raise fail_type(f"source {what} type missing element type.")
        if target.elem is None:
            raise fail_type(f"target {what} type missing element type.")
        return kt(union(source.elem, target.elem))
    if kt is MapType:
        if source.key is None:
            raise fail_type("source map type missing key type.")
        if target.key is None:
            raise fail_type("target map type missing key type.")
        if source.key != target.key:
            raise fail_type("Mismatched map tensor key type:", " inferred=", elem_name_or_code(source.key),
                            " declared=", elem_name_or_code(target.key))
        if source.value is None:
            raise fail_type("source map type missing value type.")
        if target.value is None:
            raise fail_type("target map type missing value type.")
        return MapType(target.key, union(source.value, target.value))
    return target
