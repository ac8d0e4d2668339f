"""Rules for the values of onnx-data.proto: SequenceProto, MapProto, OptionalProto.

The reference has these checks but ``check_model`` never reaches them (a model holds no
such values); they check ``.pb`` files of sequences, maps and optionals, as the backend
test data has.
"""

from __future__ import annotations

from wirefmt import MAX_DEPTH, DecodeError

from ..proto import IR_VERSION
from .context import CheckerContext
from .problems import Reporter, short
from .tensor import check_sparse_tensor as _sparse_rules
from .tensor import check_tensor as _tensor_rules

_UNDEFINED, _TENSOR, _SPARSE, _SEQUENCE, _MAP = 0, 1, 2, 3, 4
# Key types a map may not have (besides UNDEFINED): FLOAT, BOOL, FLOAT16, COMPLEX64, COMPLEX128.
_BAD_KEY_TYPES = frozenset({1, 9, 10, 14, 15})
_VALUES_OF = {_TENSOR: "tensor_values", _SPARSE: "sparse_tensor_values", _SEQUENCE: "sequence_values",
              _MAP: "map_values"}


def _sequence(report, seq, ctx, path: str, depth: int) -> None:
    if depth > MAX_DEPTH:
        report.add("D005", path, f"values nest more than {MAX_DEPTH} levels deep; not checked further")
        return
    if not seq.HasField("elem_type"):
        report.add("D001", path, "Field 'elem_type' of 'sequence' is required but missing.")
        return
    et = seq.elem_type
    field = _VALUES_OF.get(et)
    if field is None:
        report.add("D001", path, f"Sequence ( Structure name: {short(seq.name)}, elem_type: {et}) is not have "
                                 "a valid element type.")
        return
    for i, v in enumerate(getattr(seq, field)):
        _value(report, et, v, ctx, f"{path}.{field}[{i}]", depth)


def _value(report, et: int, v, ctx, path: str, depth: int) -> None:
    if et == _TENSOR:
        _tensor_rules(report, v, ctx, path)
    elif et == _SPARSE:
        _sparse_rules(report, v, ctx, path)
    elif et == _SEQUENCE:
        _sequence(report, v, ctx, path, depth + 1)
    else:
        _map(report, v, ctx, path, depth + 1)


def _optional(report, opt, ctx, path: str, depth: int) -> None:
    if depth > MAX_DEPTH:
        report.add("D005", path, f"values nest more than {MAX_DEPTH} levels deep; not checked further")
        return
    if not opt.HasField("elem_type"):
        report.add("D001", path, "Field 'elem_type' of 'optional' is required but missing.")
        return
    et = opt.elem_type
    if et == _UNDEFINED:
        return
    field = {_TENSOR: "tensor_value", _SPARSE: "sparse_tensor_value", _SEQUENCE: "sequence_value",
             _MAP: "map_value"}.get(et)
    if field is None:
        report.add("D001", path, f"Optional ( Structure name: {short(opt.name)}, elem_type: {et}) is not have "
                                 "a valid element type.")
        return
    if opt.HasField(field):
        _value(report, et, getattr(opt, field), ctx, f"{path}.{field}", depth)


def _map(report, m, ctx, path: str, depth: int) -> None:
    if depth > MAX_DEPTH:
        report.add("D005", path, f"values nest more than {MAX_DEPTH} levels deep; not checked further")
        return
    name = short(m.name)
    if not m.HasField("key_type"):
        report.add("D002", path, "Field 'key_type' of 'map' is required but missing.")
    elif m.key_type == _UNDEFINED:
        report.add("D002", path, f"setting key_type field (map name: {name}) to UNDEFINED is not allowed")
    elif m.key_type in _BAD_KEY_TYPES:
        report.add("D002", path, f"setting key_type field (map name: {name}) to invalid TensorProto key_type "
                                 f"{m.key_type} is not allowed")
    n_keys, n_strings = len(m.keys), len(m.string_keys)
    if n_keys and n_strings:
        report.add("D003", path, f"Map (name: {name}) should not contain more than one keys field.")
    if not m.HasField("values"):
        report.add("D004", path, "Field 'values' of 'map' is required but missing.")
        return
    values = m.values
    _sequence(report, values, ctx, f"{path}.values", depth + 1)
    field = _VALUES_OF.get(values.elem_type)
    n_values = len(getattr(values, field)) if field else 0
    if n_keys + n_strings != n_values:
        report.add("D003", path, f"Length of map keys and map values are not the same (map name: {name}) "
                                 f"({n_keys + n_strings} keys, {n_values} values)")


def _run(check, msg, type_name: str, ctx, path: str) -> None:
    from .model import _message  # noqa: PLC0415

    report = Reporter()
    try:
        check(report, _message(msg, type_name), ctx or CheckerContext(IR_VERSION, {}), path, 0)
    except DecodeError as exc:
        report.add("B001", path, f"cannot be decoded: {exc}")
    report.raise_if_any()


def check_sequence(sequence, ctx: CheckerContext | None = None) -> None:
    """The rules of a SequenceProto value and everything in it."""
    _run(_sequence, sequence, "SequenceProto", ctx, "sequence")


def check_map(map_value, ctx: CheckerContext | None = None) -> None:
    """The rules of a MapProto value: key type, keys, values."""
    _run(_map, map_value, "MapProto", ctx, "map")


def check_optional(optional, ctx: CheckerContext | None = None) -> None:
    """The rules of an OptionalProto value."""
    _run(_optional, optional, "OptionalProto", ctx, "optional")
