"""Type and dim denotations of declared types come out of inference as the reference's do.

The reference merges an inferred type into the declared ``TypeProto``: the type's own
denotation stays, a dim's stays unless the merge replaced the dim (declared unknown, or
inferred with a value).  Differential: the corpus with denotations added to declared
types, and small models for value_info, sub-graph inputs and containers.
"""

from __future__ import annotations

import warnings

import pytest

import irmodel
from irmodel.inference import InferenceError, infer_shapes

onnx = pytest.importorskip("onnx")
from onnx import helper as oh, shape_inference  # noqa: E402


def _note(t, dims: bool, depth: int = 0, nested: bool = True) -> None:
    which = t.WhichOneof("value")
    if which is None:
        return
    t.denotation = f"NOTE{depth}"
    if not nested:
        return
    if which in ("tensor_type", "sparse_tensor_type"):
        if dims:
            for i, d in enumerate(getattr(t, which).shape.dim):
                d.denotation = f"DIM{i}"
    elif which in ("sequence_type", "optional_type"):
        inner = getattr(t, which)
        if inner.HasField("elem_type"):
            _note(inner.elem_type, dims, depth + 1)
    elif which == "map_type" and t.map_type.HasField("value_type"):
        _note(t.map_type.value_type, dims, depth + 1)


def _both(data: bytes, **kw):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref = shape_inference.infer_shapes(onnx.load_from_string(data), **kw).SerializeToString()
    except Exception as exc:  # noqa: BLE001 - the reference refuses: ours must too
        ref = exc
    try:
        ours = irmodel.dumps(infer_shapes(irmodel.loads(data), **kw))
    except InferenceError as exc:
        ours = exc
    return ref, ours


def test_corpus_with_denoted_declared_types_infers_exactly_as_the_reference(node_corpus):
    """Inputs: a type denotation; outputs (kept, merged into): type and dim denotations.

    Not on the inputs' dims and element types: rules that copy a whole input dim or
    element type carry its denotation in the reference, not in ours (see
    `irmodel.inference.denotation`).
    """
    diffs, equal, noted = [], 0, 0
    for name, data in node_corpus:
        m = onnx.load_from_string(data)
        del m.graph.value_info[:]
        for vi in m.graph.input:
            _note(vi.type, dims=False, nested=False)
        for vi in m.graph.output:
            _note(vi.type, dims=True)
            noted += any(d.denotation for d in vi.type.tensor_type.shape.dim)
        ref, ours = _both(m.SerializeToString(), data_prop=True)
        if isinstance(ref, Exception):
            if not isinstance(ours, InferenceError):
                diffs.append((name, "reference raises"))
        elif ours != ref:
            diffs.append((name, "differs"))
        else:
            equal += 1
    assert not diffs, diffs[:20]
    assert equal > 1500 and noted > 1500


def _chain(value_info_dims, declared_out_dims, opset=18):
    """x[2,N] -> Abs -> y, x -> Neg -> z, with y declared in value_info, z as the output.

    Nothing reads y or z: a rule reading a denoted dim would copy its denotation in the
    reference (not modelled, see `irmodel.inference.denotation`).
    """
    g = oh.make_graph([oh.make_node("Abs", ["x"], ["y"]), oh.make_node("Neg", ["x"], ["z"])], "g",
                      [oh.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2, "N"])],
                      [oh.make_tensor_value_info("z", onnx.TensorProto.FLOAT, declared_out_dims)],
                      value_info=[oh.make_tensor_value_info("y", onnx.TensorProto.FLOAT, value_info_dims)])
    m = oh.make_model(g, opset_imports=[oh.make_opsetid("", opset)])
    for vi in list(m.graph.value_info) + list(m.graph.output):
        _note(vi.type, dims=True)
    return m


@pytest.mark.parametrize("declared", [[2, "N"], [None, None], ["B", 2], [2, None], ["B", "C"]])
def test_declared_dims_keep_their_denotation_unless_the_merge_replaces_them(declared):
    ref, ours = _both(_chain(declared, declared).SerializeToString())
    assert not isinstance(ref, Exception)
    assert ours == ref
    m = onnx.load_from_string(ours)
    kept = [d.denotation for d in m.graph.value_info[0].type.tensor_type.shape.dim]
    # dim 0 is inferred as 2 (replaced: its denotation goes); dim 1 as "N" (kept unless unknown)
    assert kept[0] == ""
    assert kept[1] == ("" if declared[1] is None else "DIM1")
    assert m.graph.value_info[0].type.denotation == "NOTE0"


def test_a_declared_type_without_a_value_keeps_its_denotation():
    m = _chain([2, "N"], [2, "N"])
    m.graph.value_info[0].type.ClearField("tensor_type")  # present, denotation only
    ref, ours = _both(m.SerializeToString())
    assert ours == ref
    assert onnx.load_from_string(ours).graph.value_info[0].type.denotation == "NOTE0"


def test_loop_body_inputs_and_sequence_types_keep_their_denotations():
    body = oh.make_graph(
        [oh.make_node("Identity", ["cond_in"], ["cond_out"]),
         oh.make_node("SequenceInsert", ["seq_in", "x"], ["seq_out"])],
        "body",
        [oh.make_tensor_value_info("i", onnx.TensorProto.INT64, []),
         oh.make_tensor_value_info("cond_in", onnx.TensorProto.BOOL, None),
         oh.make_tensor_sequence_value_info("seq_in", onnx.TensorProto.FLOAT, None)],
        [oh.make_tensor_value_info("cond_out", onnx.TensorProto.BOOL, []),
         oh.make_tensor_sequence_value_info("seq_out", onnx.TensorProto.FLOAT, [3])])
    g = oh.make_graph(
        [oh.make_node("SequenceEmpty", [], ["s0"], dtype=onnx.TensorProto.FLOAT),
         oh.make_node("Loop", ["n", "c", "s0"], ["s"], body=body)], "g",
        [oh.make_tensor_value_info("n", onnx.TensorProto.INT64, []),
         oh.make_tensor_value_info("c", onnx.TensorProto.BOOL, []),
         oh.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [3])],
        [oh.make_tensor_sequence_value_info("s", onnx.TensorProto.FLOAT, [3])])
    m = oh.make_model(g, opset_imports=[oh.make_opsetid("", 18)])
    b = m.graph.node[1].attribute[0].g
    for vi in list(b.input) + list(b.output) + list(m.graph.output):
        _note(vi.type, dims=True)
    ref, ours = _both(m.SerializeToString(), data_prop=True)
    assert not isinstance(ref, Exception)
    assert ours == ref
    out = onnx.load_from_string(ours)
    assert out.graph.node[1].attribute[0].g.input[1].type.denotation == "NOTE0"
