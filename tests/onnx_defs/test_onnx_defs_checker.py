"""irmodel.checker's module-level names as onnx.checker's, and the FLOAT6 tensor rules.

Expectations come from the installed reference (onnx 1.23.2).
"""

from __future__ import annotations

import onnx
import onnx.checker
import pytest
from onnx import TensorProto, helper

import irmodel
from irmodel import checker


def _public(module) -> set:
    return {n for n in dir(module) if not n.startswith("_")} - {"annotations", "onnx", "os", "IR_VERSION",
                                                                "TYPE_CHECKING", "Message"}


def test_every_public_name_of_onnx_checker_is_ours():
    assert _public(onnx.checker) - _public(checker) == set()
    assert set(onnx.checker.__all__) <= set(checker.__all__)


def test_default_context_is_onnx_default():
    ours, ref = checker.DEFAULT_CONTEXT, onnx.checker.DEFAULT_CONTEXT
    assert (ours.ir_version, ours.opset_imports) == (ref.ir_version, ref.opset_imports)
    assert checker.DEFAULT_CONTEXT is ours  # made once
    assert checker.MAXIMUM_PROTOBUF == onnx.checker.MAXIMUM_PROTOBUF
    assert isinstance(checker.LEXICAL_SCOPE_CONTEXT, checker.C.LexicalScopeContext)


def test_a_context_made_through_c_checks_a_graph_as_onnx():
    """onnx's test_check_graph_ir_version_3, on both."""
    graph = helper.make_graph([helper.make_node("Relu", ["X"], ["Y"], name="test")], "test",
                              [helper.make_tensor_value_info("X", 1, [1, 2])],
                              [helper.make_tensor_value_info("Y", 1, [1, 2])])
    for mod, g in ((onnx.checker, graph), (checker, irmodel.loads(graph.SerializeToString(), "GraphProto"))):
        ctx = mod.C.CheckerContext()
        ctx.ir_version = 3
        ctx.opset_imports = {"": onnx.defs.onnx_opset_version()}
        mod.check_graph(g, ctx, mod.C.LexicalScopeContext())


def _model_bytes() -> bytes:
    graph = helper.make_graph([helper.make_node("Relu", ["X"], ["Y"])], "g",
                              [helper.make_tensor_value_info("X", 1, [1, 2])],
                              [helper.make_tensor_value_info("Y", 1, [1, 2])])
    return helper.make_model(graph).SerializeToString()


def test_bytes_longer_than_the_protobuf_bound_are_refused_as_onnx(monkeypatch):
    data = _model_bytes()
    for mod in (onnx.checker, checker):
        monkeypatch.setattr(mod, "MAXIMUM_PROTOBUF", len(data))
        mod.check_model(data)
        monkeypatch.setattr(mod, "MAXIMUM_PROTOBUF", len(data) - 1)
        with pytest.raises(ValueError, match="too large"):
            mod.check_model(data)


def test_a_message_is_checked_at_any_size(monkeypatch):
    """Deliberate difference: irmodel checks a message (and a path) over 2 GiB, lazily."""
    monkeypatch.setattr(checker, "MAXIMUM_PROTOBUF", 1)
    checker.check_model(irmodel.loads(_model_bytes()))


def _float6(dtype: int, n: int, raw: bytes | None = None, int32: list | None = None):
    t = TensorProto(name="t", data_type=dtype, dims=[n])
    if raw is not None:
        t.raw_data = raw
    else:
        t.int32_data.extend(int32)
    return t


def _verdict(call):
    try:
        call()
        return None
    except (onnx.checker.ValidationError, irmodel.ValidationError) as exc:
        return str(exc).split("\n")[0]


FLOAT6_RAW = [(dtype, n, last) for dtype in (TensorProto.FLOAT6E2M3, TensorProto.FLOAT6E3M2)
              for n in (1, 2, 3, 4, 5) for last in (0, 1, 0x0F, 0x10, 0x40, 0x80, 0xFF)]


@pytest.mark.parametrize("dtype, n, last", FLOAT6_RAW)
def test_float6_raw_data_padding_agrees_with_onnx(dtype, n, last):
    size = (n * 6 + 7) // 8
    for raw in (bytes(size - 1) + bytes([last]), bytes(size - 1) + bytes([last]) + b"\xff"):
        ref = _verdict(lambda: onnx.checker.check_tensor(_float6(dtype, n, raw=raw)))
        ours = _verdict(lambda: checker.check_tensor(irmodel.loads(_float6(dtype, n, raw=raw).SerializeToString(),
                                                                   "TensorProto")))
        assert (ours is None) == (ref is None), (ours, ref)
        if ref is not None:
            assert ours.startswith(ref)


@pytest.mark.parametrize("values", [[0], [63], [64], [-1], [1, 2, 3, 200], [2**31 - 1], [-(2**31)]])
@pytest.mark.parametrize("dtype", [TensorProto.FLOAT6E2M3, TensorProto.FLOAT6E3M2, TensorProto.INT32])
def test_float6_int32_values_agree_with_onnx(dtype, values):
    t = _float6(dtype, 1, int32=values)
    ref = _verdict(lambda: onnx.checker.check_tensor(t))
    ours = _verdict(lambda: checker.check_tensor(irmodel.loads(t.SerializeToString(), "TensorProto")))
    assert (ours is None) == (ref is None), (ours, ref)
    if ref is not None:
        assert ours.startswith(ref)
