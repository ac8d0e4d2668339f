"""The checker's data-size rules for every data type, against onnx.checker: every type code
(known and unknown), element counts around the packing boundaries, and stored sizes from
none to more than enough, in raw_data and in each typed field."""

from __future__ import annotations

import onnx
from onnx import helper as oh

import irmodel


def _verdicts(tensor: onnx.TensorProto) -> tuple[bool, bool]:
    model = oh.make_model(oh.make_graph([], "g", [], [], initializer=[tensor]))
    try:
        onnx.checker.check_model(model)
        reference = True
    except onnx.checker.ValidationError:
        reference = False
    try:
        irmodel.check_model(model.SerializeToString())
        ours = True
    except irmodel.ValidationError:
        ours = False
    return reference, ours


def test_data_size_rules_agree_with_the_reference_for_every_type():
    differ = []
    for data_type in range(30):  # 0 (UNDEFINED) to 28 (FLOAT6E3M2) and one unknown code
        for count in (0, 1, 2, 3, 4, 5, 8, 9):
            for stored in range(10):
                for field in ("raw_data", "int32_data", "float_data", "int64_data"):
                    value = b"\x00" * stored if field == "raw_data" else [0] * stored
                    t = onnx.TensorProto(name="t", data_type=data_type, dims=[count], **{field: value})
                    reference, ours = _verdicts(t)
                    if reference != ours:
                        differ.append((data_type, count, stored, field, reference))
    assert differ == []
