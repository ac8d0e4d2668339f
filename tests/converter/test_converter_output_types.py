"""Graph outputs of a converted model: typed and shaped as inference finds them, as onnx's are.

onnx's converter infers the model's shapes before converting and writes each graph
output's inferred type back, so a model whose outputs declared no shape converts into one
the checker accepts; onnx's tests check the converted model.  Ours completes an output
that leaves out its element type or shape, keeps what an output declares, and leaves an
output inference knows nothing about as it was.  Each case is judged against onnx's
converter and checker.
"""

from __future__ import annotations

import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as oh

import irmodel
from irmodel import version_converter as vc


def _ours(model: onnx.ModelProto):
    return irmodel.loads(model.SerializeToString(), "ModelProto")


def _range_model(opset: int, output_type) -> onnx.ModelProto:
    attrs = {"stash_type": 1} if opset >= 27 else {}
    g = oh.make_graph([oh.make_node("Range", ["start", "limit", "delta"], ["out"], **attrs)], "g",
                      [oh.make_tensor_value_info(n, T.FLOAT, []) for n in ("start", "limit", "delta")],
                      [output_type])
    return oh.make_model(g, opset_imports=[oh.make_opsetid("", opset)])


def _rank_and_elem(vi) -> tuple:
    tt = vi.type.tensor_type
    return tt.elem_type, (len(tt.shape.dim) if tt.HasField("shape") else None)


@pytest.mark.parametrize("src, dst", [(26, 27), (27, 26), (26, 18)])
@pytest.mark.parametrize("declared", ["no shape", "no type", "no elem_type"])
def test_an_incomplete_output_gets_the_type_onnx_gives_it(src, dst, declared):
    vi = {"no shape": oh.make_tensor_value_info("out", T.FLOAT, None),
          "no type": oh.make_empty_tensor_value_info("out"),
          "no elem_type": oh.make_tensor_value_info("out", T.UNDEFINED, None)}[declared]
    if declared == "no elem_type":
        vi.type.tensor_type.ClearField("elem_type")
    m = _range_model(src, vi)
    theirs = onnx.version_converter.convert_version(m, dst)
    ours = vc.convert_version(_ours(m), dst)
    assert _rank_and_elem(ours.graph.output[0]) == _rank_and_elem(theirs.graph.output[0]) == (T.FLOAT, 1)
    irmodel.checker.check_model(ours)
    onnx.checker.check_model(onnx.load_from_string(irmodel.dumps(ours)))
    assert not _ours(m).graph.output[0].type.tensor_type.HasField("shape")  # the input is untouched


def test_a_declared_output_type_is_kept_as_declared():
    """Declared dims (a name, a value) are the model's: inference does not replace them."""
    m = _range_model(26, oh.make_tensor_value_info("out", T.FLOAT, ["n"]))
    ours = vc.convert_version(_ours(m), 27)
    assert irmodel.dumps(ours.graph.output[0]) == m.graph.output[0].SerializeToString()


def test_an_output_inference_knows_nothing_about_stays_incomplete():
    """An op of a domain without schemas: nothing to infer; the conversion still succeeds
    (it was asked to convert, not to validate), the output as declared."""
    g = oh.make_graph([oh.make_node("Relu", ["x"], ["r"]), oh.make_node("Mystery", ["r"], ["y"], domain="custom")],
                      "g", [oh.make_tensor_value_info("x", T.FLOAT, [2])],
                      [oh.make_tensor_value_info("y", T.FLOAT, None)])
    m = oh.make_model(g, opset_imports=[oh.make_opsetid("", 12), oh.make_opsetid("custom", 1)])
    ours = vc.convert_version(_ours(m), 14)
    assert [o.version for o in ours.opset_import if o.domain == ""] == [14]
    assert irmodel.dumps(ours.graph.output[0]) == m.graph.output[0].SerializeToString()


def _gemm(opset: int, a_shape, b_shape) -> onnx.ModelProto:
    g = oh.make_graph([oh.make_node("Gemm", ["A", "B", "C"], ["Y"])], "g",
                      [oh.make_tensor_value_info("A", T.FLOAT, a_shape),
                       oh.make_tensor_value_info("B", T.FLOAT, b_shape),
                       oh.make_tensor_value_info("C", T.FLOAT, (4,))],
                      [oh.make_tensor_value_info("Y", T.FLOAT, None)])
    return oh.make_model(g, opset_imports=[oh.make_opsetid("", opset)])


@pytest.mark.parametrize("src, dst", [(6, 7), (7, 6), (5, 9), (9, 5)])
@pytest.mark.parametrize("a_shape, b_shape, bad", [((12,), (3, 4), "A"), ((4, 3), (28,), "B"),
                                                    ((1, 4, 3), (3, 4), "A")])
def test_gemm_across_7_with_an_input_that_is_not_a_matrix_is_refused_as_onnx_refuses(
        src, dst, a_shape, b_shape, bad):
    m = _gemm(src, a_shape, b_shape)
    with pytest.raises(RuntimeError):
        onnx.version_converter.convert_version(m, dst)
    with pytest.raises(vc.ConversionError) as info:
        vc.convert_version(_ours(m), dst)
    (p,) = info.value.problems
    assert p.code == "V003" and p.op_type == "Gemm" and f"input {bad} has rank" in p.message


@pytest.mark.parametrize("src, dst", [(6, 7), (7, 6)])
def test_gemm_across_7_with_matrices_or_unknown_ranks_converts(src, dst):
    for a_shape, b_shape in (((2, 3), (3, 4)), (None, None)):
        m = _gemm(src, a_shape, b_shape)
        ours = vc.convert_version(_ours(m), dst)
        assert [n.op_type for n in ours.graph.node] == ["Gemm"]
        if a_shape is not None:
            assert _rank_and_elem(ours.graph.output[0]) == (T.FLOAT, 2)
            irmodel.checker.check_model(ours)
