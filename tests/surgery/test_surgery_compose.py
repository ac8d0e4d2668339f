"""compose against onnx.compose, and onnxruntime on what merged models compute.

Differential on the reference corpus (each model prefixed; each model merged with a
prefixed copy of itself, its outputs feeding the copy's inputs) and on generated models;
one test per onnx bug (expand_out_dim's declared shape and its opset-11 Unsqueeze, the
duplicated opset imports, models of different IR versions and opsets).
"""

from __future__ import annotations

import warnings

import numpy as np
import onnx
import onnx.compose
import pytest
from onnx import TensorProto, helper as oh

import irmodel
from irmodel import compose
from irmodel.fuzz.generate import random_model

from surgery_helpers import assert_same_results, run


def _ref(fn, *args, **kw):
    try:
        return getattr(onnx.compose, fn)(*args, **kw)
    except Exception as exc:  # noqa: BLE001 - the reference's verdict
        return exc


def _r(data: bytes):
    return onnx.ModelProto.FromString(data)


def _o(data: bytes):
    return irmodel.loads(data)


def _valid(m) -> bool:
    try:
        onnx.checker.check_model(m)
    except onnx.checker.ValidationError:
        return False
    return True


@pytest.mark.slow
def test_add_prefix_matches_onnx_on_the_corpus(node_corpus):
    """onnx's bytes wherever onnx's result is valid; where it is not (with rename_nodes=False
    it leaves sub-graphs reading the old names), ours is valid."""
    onnx_wrong = 0
    for name, data in node_corpus:
        ref = _ref("add_prefix", _r(data), "p/")
        assert irmodel.dumps(compose.add_prefix(_o(data), "p/")) == ref.SerializeToString(), name
        for flag in ("rename_nodes", "rename_edges", "rename_inputs", "rename_outputs",
                     "rename_initializers", "rename_value_infos", "rename_functions"):
            ref = _ref("add_prefix", _r(data), "q_", **{flag: False})
            ours = irmodel.dumps(compose.add_prefix(_o(data), "q_", **{flag: False}))
            if ours != ref.SerializeToString() and not _valid(ref) and _valid(_r(data)):
                assert _valid(_r(ours)), (name, flag)
                onnx_wrong += 1
                continue
            assert ours == ref.SerializeToString(), (name, flag)
    assert onnx_wrong < 100


def _self_merge_io(data: bytes):
    m = _r(data)
    inits = {t.name for t in m.graph.initializer}
    ins = [v for v in m.graph.input if v.name not in inits]
    outs = list(m.graph.output)
    pairs = [(o.name, "b/" + i.name) for o, i in zip(outs, ins) if o.type == i.type]
    return pairs


@pytest.mark.slow
def test_merge_models_matches_onnx_on_the_corpus(node_corpus):
    """Each model merged with a prefixed copy of itself (outputs feeding inputs of the same
    type): onnx's model, except its opset imports listed twice (ours once)."""
    compared = 0
    for name, data in node_corpus:
        pairs = _self_merge_io(data)
        if not pairs:
            continue
        io_map = [(o, i[2:]) for o, i in pairs]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref = _ref("merge_models", _r(data), _r(data), io_map, prefix2="b/")
        if isinstance(ref, Exception):
            with pytest.raises(Exception):  # noqa: B017,PT011 - the same request refused
                compose.merge_models(_o(data), _o(data), io_map, prefix2="b/")
            continue
        ours = _r(irmodel.dumps(compose.merge_models(_o(data), _o(data), io_map, prefix2="b/")))
        assert len(ref.opset_import) == 2 * len(ours.opset_import)
        del ref.opset_import[len(ours.opset_import):]
        assert ours == ref, name
        compared += 1
    assert compared > 800


def test_merge_generated_models_computes_the_chain():
    """A generated model feeding a prefixed copy of itself: onnxruntime's result of the
    merged model equals running the two in sequence."""
    ran = 0
    for seed in range(30):
        data = irmodel.dumps(random_model(seed))
        pairs = _self_merge_io(data)
        m = _r(data)
        if not pairs or len(pairs) < len([v for v in m.graph.input if v.name not in {t.name for t in m.graph.initializer}]):
            continue
        io_map = [(o, i[2:]) for o, i in pairs]
        merged = irmodel.dumps(compose.merge_models(_o(data), _o(data), io_map, prefix2="b/"))
        ref = _ref("merge_models", _r(data), _r(data), io_map, prefix2="b/")
        if not isinstance(ref, Exception):
            del ref.opset_import[len(_r(merged).opset_import):]
            assert _r(merged) == ref, seed
        from surgery_helpers import random_inputs
        feeds = random_inputs(data, seed)
        if feeds is None:
            continue
        try:
            first = run(data, feeds)
        except Exception:  # noqa: BLE001 - onnxruntime lacks an operator: compared with onnx only
            continue
        second = run(data, {i: first[o] for o, i in io_map})
        got = run(merged, feeds)
        assert_same_results({"b/" + k: v for k, v in second.items()}, got, ["b/" + k for k in second])
        ran += 1
    assert ran >= 3


def _graph(opset: int = 17, ir: int = 8, out_shape=("N", 3), op: str = "Relu"):
    g = oh.make_graph([oh.make_node(op, ["x"], ["y"])], "g",
                      [oh.make_tensor_value_info("x", TensorProto.FLOAT, list(out_shape))],
                      [oh.make_tensor_value_info("y", TensorProto.FLOAT, list(out_shape))])
    return oh.make_model(g, opset_imports=[oh.make_opsetid("", opset)], ir_version=ir)


@pytest.mark.parametrize("dim_idx", [0, 1, 2, -1, -2, -3])
def test_expand_out_dim_declares_what_unsqueeze_computes(dim_idx):
    model = _graph(out_shape=(2, 3))
    ours = _r(irmodel.dumps(compose.expand_out_dim(_o(model.SerializeToString()), dim_idx)))
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    got = run(ours.SerializeToString(), {"x": x})["y"]
    declared = [d.dim_value for d in ours.graph.output[0].type.tensor_type.shape.dim]
    assert list(got.shape) == declared == list(np.expand_dims(x, dim_idx).shape)
    onnx.checker.check_model(ours, full_check=True)  # inference agrees with the declaration
    theirs = onnx.compose.expand_out_dim(model, dim_idx)
    # the same nodes as onnx's; onnx declares the wrong shape for -1 and -2
    assert list(ours.graph.node) == list(theirs.graph.node)
    theirs_declared = [d.dim_value for d in theirs.graph.output[0].type.tensor_type.shape.dim]
    assert (theirs_declared == declared) == (dim_idx >= 0 or dim_idx == -3)


def test_expand_out_dim_keeps_symbolic_dims():
    ours = compose.expand_out_dim(_o(_graph(out_shape=("N", 3)).SerializeToString()), 0)
    dims = ours.graph.output[0].type.tensor_type.shape.dim
    assert [d.dim_value for d in dims] == [1, 0, 3] and dims[1].dim_param == "N"


def test_expand_out_dim_below_opset_13_uses_the_axes_attribute():
    model = _graph(opset=11, ir=6, out_shape=(2, 3))
    ours = _r(irmodel.dumps(compose.expand_out_dim(_o(model.SerializeToString()), -1)))
    onnx.checker.check_model(ours, full_check=True)
    assert [n.op_type for n in ours.graph.node] == ["Relu", "Unsqueeze"]
    got = run(ours.SerializeToString(), {"x": np.ones((2, 3), np.float32)})["y"]
    assert got.shape == (2, 3, 1)
    theirs = onnx.compose.expand_out_dim(model, -1)
    with pytest.raises(onnx.checker.ValidationError):  # Unsqueeze-11 with two inputs
        onnx.checker.check_model(theirs, full_check=True)


def test_merge_models_writes_each_opset_once():
    a, b = _graph(), _graph()
    ours = compose.merge_models(_o(a.SerializeToString()), _o(b.SerializeToString()), [("y", "x")], prefix2="b_")
    assert [(o.domain, o.version) for o in ours.opset_import] == [("", 17)]
    theirs = onnx.compose.merge_models(a, b, [("y", "x")], prefix2="b_")
    assert [(o.domain, o.version) for o in theirs.opset_import] == [("", 17), ("", 17)]


def test_merge_models_of_different_ir_versions_and_compatible_opsets():
    a, b = _graph(opset=14, ir=7), _graph(opset=17, ir=8)  # Relu is Relu-14 at both
    assert isinstance(_ref("merge_models", a, b, [("y", "x")], prefix2="b_"), ValueError)
    ours = compose.merge_models(_o(a.SerializeToString()), _o(b.SerializeToString()), [("y", "x")], prefix2="b_")
    assert ours.ir_version == 8 and [(o.domain, o.version) for o in ours.opset_import] == [("", 17)]
    x = np.array([[-1.0, 2.0, -3.0]], np.float32)
    np.testing.assert_array_equal(run(irmodel.dumps(ours), {"x": x})["b_y"], np.maximum(x, 0))


def test_merge_models_of_changed_operators_converts_the_older_one():
    # Clip's min and max became inputs at opset 11: the opset-10 model is converted to 17
    # by the version converter, and the merge computes Relu(Clip(x)) as the two did apart.
    clip = oh.make_node("Clip", ["x"], ["y"], min=-1.0, max=1.0)
    a = oh.make_model(oh.make_graph([clip], "g", [oh.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3])],
                                    [oh.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 3])]),
                      opset_imports=[oh.make_opsetid("", 10)], ir_version=6)
    b = _graph(opset=17, ir=8)
    m = compose.merge_models(_o(a.SerializeToString()), _o(b.SerializeToString()), [("y", "x")], prefix2="b_")
    ref = _r(irmodel.dumps(m))
    onnx.checker.check_model(ref, full_check=True)
    assert [(o.domain, o.version) for o in ref.opset_import] == [("", 17)]
    x = np.array([[-3.0, 0.5, 2.0]], np.float32)
    np.testing.assert_array_equal(run(ref.SerializeToString(), {"x": x})["b_y"], np.maximum(np.clip(x, -1, 1), 0))


def test_rename_auto_resolves_clashes():
    a, b = _graph(), _graph()
    a.graph.node.append(oh.make_node("Neg", ["y"], ["t"]))
    a.graph.output.append(oh.make_tensor_value_info("t", TensorProto.FLOAT, ["N", 3]))
    b.graph.node.insert(0, oh.make_node("Abs", ["x"], ["t"]))
    b.graph.node[1].input[0] = "t"
    with pytest.raises(compose.SurgeryError, match="overlapping"):
        compose.merge_models(_o(a.SerializeToString()), _o(b.SerializeToString()), [("y", "x")])
    m = compose.merge_models(_o(a.SerializeToString()), _o(b.SerializeToString()), [("y", "x")], rename="auto")
    ref = _r(irmodel.dumps(m))
    onnx.checker.check_model(ref, full_check=True)
    assert [o.name for o in ref.graph.output] == ["t", "y__1"]
    x = np.array([[-1.0, 2.0, -3.0]], np.float32)
    got = run(ref.SerializeToString(), {"x": x})
    np.testing.assert_array_equal(got["y__1"], np.abs(np.maximum(x, 0)))
    np.testing.assert_array_equal(got["t"], -np.maximum(x, 0))


def test_check_overlapping_names_matches_onnx():
    a, b = _graph(), _graph()
    ours = compose.check_overlapping_names(_o(a.SerializeToString()).graph, _o(b.SerializeToString()).graph)
    theirs = onnx.compose.check_overlapping_names(a.graph, b.graph)
    assert [(c, sorted(n)) for c, n in ours] == [(c, sorted(n)) for c, n in theirs]
    assert compose.check_overlapping_names(_o(a.SerializeToString()).graph, _o(b.SerializeToString()).graph,
                                           [("y", "x")]) == [("edge", ["y"])]


def test_bad_arguments():
    g = _o(_graph().SerializeToString())
    with pytest.raises(TypeError):
        compose.merge_models(g.graph, g, [])
    with pytest.raises(TypeError):
        compose.add_prefix_graph(g, "p")
    with pytest.raises(compose.SurgeryError, match="Output nope is not present"):
        compose.merge_models(g, _o(_graph().SerializeToString()), [("nope", "x")], prefix2="b")
    with pytest.raises(ValueError, match="rename"):
        compose.merge_graphs(g.graph, g.graph, [], rename="sometimes")


def test_merge_models_converts_with_the_version_converter_when_there_is_one(monkeypatch):
    """With an ``irmodel.version_converter`` (a stand-in here that asks the reference's),
    the model of the lower opset is converted instead of refused."""
    import sys
    import types

    import onnx.version_converter

    calls = []

    def convert_version(model, target):
        calls.append(target)
        ref = onnx.version_converter.convert_version(onnx.ModelProto.FromString(irmodel.dumps(model)), target)
        return irmodel.loads(ref.SerializeToString())

    stand_in = types.ModuleType("irmodel.version_converter")
    stand_in.convert_version = convert_version
    monkeypatch.setitem(sys.modules, "irmodel.version_converter", stand_in)
    a, b = _graph(opset=10, ir=6, op="Clip"), _graph(opset=17, ir=8)
    merged = compose.merge_models(_o(a.SerializeToString()), _o(b.SerializeToString()), [("y", "x")], prefix2="b_")
    assert calls == [17] and [(o.domain, o.version) for o in merged.opset_import] == [("", 17)]
    x = np.array([[-1.0, 2.0, -3.0]], np.float32)
    np.testing.assert_array_equal(run(irmodel.dumps(merged), {"x": x})["b_y"], np.maximum(x, 0))
