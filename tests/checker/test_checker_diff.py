"""Differential tests: irmodel's checker and onnx.checker give the same verdict.

On every model of the reference corpus (node test cases and the models under
onnx/backend/test/data), on semantic mutants built from them (tests/checker_mutants.py,
deterministic seeds, every kind on many models), on external-data files, and for the
other public checks (check_node, check_graph, check_tensor, ...).  The verdict is
always asked of the reference, never written down here.
"""

from __future__ import annotations

import os
import random

import pytest

import irmodel
from checker_mutants import HARMLESS, MUTATORS

# Mutants per kind: every kind on this many models (sampled with a seed per kind).
PER_KIND = 120


def reference_verdict(data, **kwargs) -> str | None:
    """onnx's error message, or None when it accepts the model (bytes or path)."""
    import onnx

    try:
        onnx.checker.check_model(data, **kwargs)
    except Exception as exc:  # noqa: BLE001 - the reference's errors have several types
        return str(exc)
    return None


def our_verdict(data, **kwargs) -> list | None:
    try:
        irmodel.check_model(data, **kwargs)
    except irmodel.ValidationError as exc:
        return [str(p) for p in exc.problems]
    return None


def assert_same_verdict(data, what: str, **kwargs) -> bool:
    """Same verdict from both; returns whether the model is valid."""
    ref = reference_verdict(data, **kwargs)
    ours = our_verdict(data, **kwargs)
    assert (ref is None) == (ours is None), f"{what} {kwargs}: onnx says {ref!r}, we say {ours!r}"
    return ref is None


@pytest.fixture(scope="session")
def reference_models(node_corpus, data_corpus) -> list:
    """``[(name, onnx.ModelProto)]``: the node cases and the wheel's data models."""
    import onnx

    models = [(name, onnx.ModelProto.FromString(data)) for name, data in node_corpus]
    models += [(path, onnx.ModelProto.FromString(data)) for path, type_name, data in data_corpus
               if type_name == "ModelProto"]
    return models


@pytest.mark.slow
def test_whole_corpus_same_verdict(node_corpus, data_corpus, fast_paths):
    count = 0
    for name, data in node_corpus:
        assert_same_verdict(data, name)
        count += 1
    for path, type_name, data in data_corpus:
        if type_name == "ModelProto":
            assert_same_verdict(data, path)
            assert_same_verdict(path, path)  # by path: model_dir is the file's directory
            count += 1
    assert count > 2000


@pytest.mark.parametrize("kind", sorted(MUTATORS))
def test_mutants_same_verdict(kind, reference_models):
    rng = random.Random(kind)
    sample = rng.sample(reference_models, min(PER_KIND, len(reference_models)))
    mutate = MUTATORS[kind]
    verdicts = []
    for name, model in sample:
        mutant = mutate(rng, model)
        if mutant is None:
            continue
        data = mutant.SerializeToString()
        verdicts.append(assert_same_verdict(data, f"{kind} of {name}"))
        if kind in ("custom_domain_unknown_op", "unknown_op"):
            assert_same_verdict(data, f"{kind} of {name}", check_custom_domain=True)
        if kind.endswith("function") or kind.startswith("function"):
            assert_same_verdict(data, f"{kind} of {name}", skip_opset_compatibility_check=True)
    assert len(verdicts) >= 8, f"{kind} applied to too few models"
    if kind in HARMLESS:
        assert all(verdicts), f"{kind} must keep models valid"


def test_mutants_cover_both_verdicts_where_expected(reference_models):
    """The mutants that depend on the model (unknown attribute names, function opsets,
    subgraphs) produce valid and invalid cases: both sides of the rule are exercised."""
    for kind in ("unknown_attribute", "function_opset_mismatch", "subgraph_problem", "bad_sparse"):
        rng = random.Random(kind)
        seen = set()
        for _name, model in rng.sample(reference_models, PER_KIND):
            mutant = MUTATORS[kind](rng, model)
            if mutant is not None:
                seen.add(reference_verdict(mutant.SerializeToString()) is None)
        assert seen == {True, False}, kind


# -- external data, checked through files -----------------------------------------------------

def _external_variants(tmp_path, model) -> list:
    """Files of ``model`` with its first initializer moved to external data, one per kind of
    location, each in its own directory."""
    import onnx

    out = []
    for i, location in enumerate(["w.bin", "sub/w.bin", "../w.bin", "/tmp/w.bin", "", "missing.bin",
                                  "link.bin", "a..b", "./w.bin"]):
        d = tmp_path / f"v{i}"
        (d / "sub").mkdir(parents=True)
        m = onnx.ModelProto()
        m.CopyFrom(model)
        t = m.graph.initializer[0]
        data = t.raw_data or onnx.numpy_helper.to_array(t).tobytes()
        t.ClearField("raw_data")
        for f in ("float_data", "int32_data", "int64_data", "double_data", "uint64_data", "string_data"):
            t.ClearField(f)
        t.data_location = onnx.TensorProto.EXTERNAL
        t.external_data.add(key="location", value=location)
        for name in ("w.bin", "sub/w.bin", "a..b"):
            (d / name).write_bytes(data)
        (tmp_path / "w.bin").write_bytes(data)
        os.symlink(d / "w.bin", d / "link.bin")
        path = d / "m.onnx"
        path.write_bytes(m.SerializeToString())
        out.append(str(path))
    return out


def test_external_data_locations_same_verdict(tmp_path, data_corpus):
    import onnx

    models = [onnx.ModelProto.FromString(data) for _, type_name, data in data_corpus
              if type_name == "ModelProto"]
    models = [m for m in models if m.graph.initializer and m.graph.initializer[0].data_type == 1
              and m.ByteSize() < 1 << 16][:3]
    assert models
    verdicts = []
    for k, model in enumerate(models):
        for path in _external_variants(tmp_path / f"m{k}", model):
            verdicts.append(assert_same_verdict(path, path))
    assert True in verdicts and False in verdicts


# -- schema facts the table does not carry ---------------------------------------------------

def _one_node_model(node, opset: int, inputs=("x",), outputs=("y",)):
    from onnx import TensorProto, helper as oh

    graph = oh.make_graph([node], "g", [oh.make_tensor_value_info(n, TensorProto.FLOAT, [2]) for n in inputs],
                          [oh.make_tensor_value_info(n, TensorProto.FLOAT, [2]) for n in outputs if n])
    return oh.make_model(graph, opset_imports=[oh.make_opsetid("", opset)]).SerializeToString()


@pytest.mark.parametrize("opset", [1, 6, 7, 9, 14, 15, 21])
@pytest.mark.parametrize("n_outputs", [1, 2, 3, 4, 5, 6])
def test_batch_normalization_output_counts(opset, n_outputs):
    from onnx import helper as oh

    outs = ["y"] + [f"o{i}" for i in range(1, n_outputs)]
    node = oh.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], outs)
    if opset < 7:
        node.attribute.append(oh.make_attribute("consumed_inputs", [0, 0, 0, 1, 1]))
    data = _one_node_model(node, opset, ("x", "s", "b", "m", "v"), outs)
    assert_same_verdict(data, f"BatchNormalization-{opset} with {n_outputs} outputs")


@pytest.mark.parametrize("attribute", ["anything", "__internal", "axis"])
@pytest.mark.parametrize("op, opset", [("LayerNormalization", 17), ("Relu", 14)])
def test_undeclared_attributes(op, opset, attribute):
    from onnx import helper as oh

    inputs = ["x", "s"] if op == "LayerNormalization" else ["x"]
    node = oh.make_node(op, inputs, ["y"], **{attribute: 1})
    assert_same_verdict(_one_node_model(node, opset, inputs), f"{op} with {attribute}")


@pytest.mark.parametrize("op", ["Scale", "ATen", "Crop", "ImageScaler"])
def test_experimental_ops_have_no_schema_check(op):
    from onnx import helper as oh

    node = oh.make_node(op, ["x"], ["y"], anything=1.0)
    assert_same_verdict(_one_node_model(node, 9), op)
    node = oh.make_node(op, ["x"], ["y"])
    node.attribute.append(oh.make_attribute("a", 1.0))
    node.attribute.append(oh.make_attribute("a", 1.0))  # attributes are still checked
    assert_same_verdict(_one_node_model(node, 9), op)


@pytest.mark.parametrize("where", ["main", "function", "subgraph", "function-subgraph"])
@pytest.mark.parametrize("with_value", [False, True])
def test_attribute_references(where, with_value):
    """ref_attr_name: allowed with a value in a main graph or at a function's top level,
    not inside a nested graph (the reference's rule)."""
    import onnx
    from onnx import TensorProto, helper as oh

    attr = oh.make_attribute_ref("alpha", onnx.AttributeProto.FLOAT)
    attr.ref_attr_name = "al"
    if with_value:
        attr.f = 0.5
    leaky = oh.make_node("LeakyRelu", ["x"], ["y"])
    leaky.attribute.append(attr)
    x = oh.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    y = oh.make_tensor_value_info("y", TensorProto.FLOAT, [2])

    def in_if(node, outer_input):
        node.input[0] = outer_input
        branch = oh.make_graph([node], "b", [], [oh.make_tensor_value_info("y", TensorProto.FLOAT, None)])
        cond = oh.make_node("Constant", [], ["c"], value=oh.make_tensor("c", TensorProto.BOOL, [], [True]))
        return [cond, oh.make_node("If", ["c"], ["out"], then_branch=branch, else_branch=branch)]

    opsets = [oh.make_opsetid("", 18), oh.make_opsetid("local", 1)]
    functions = []
    if where == "main":
        nodes, outputs = [leaky], [y]
    elif where == "subgraph":
        nodes, outputs = in_if(leaky, "x"), [oh.make_tensor_value_info("out", TensorProto.FLOAT, [2])]
    else:
        body = [leaky] if where == "function" else in_if(leaky, "x")
        out = "y" if where == "function" else "out"
        functions = [oh.make_function("local", "F", ["x"], [out], body, [oh.make_opsetid("", 18)], ["al"])]
        nodes, outputs = [oh.make_node("F", ["x"], ["y"], domain="local", al=0.2)], [y]
    m = oh.make_model(oh.make_graph(nodes, "g", [x], outputs), opset_imports=opsets, functions=functions)
    assert_same_verdict(m.SerializeToString(), f"ref_attr_name in {where}")


# -- the other public checks against onnx's ------------------------------------------------------

def _reference_context(model):
    import onnx

    ctx = onnx.checker.C.CheckerContext()
    ctx.ir_version = model.ir_version
    ctx.opset_imports = {o.domain: o.version for o in model.opset_import}
    return ctx


def _our_context(model):
    return irmodel.CheckerContext(model.ir_version, {o.domain: o.version for o in model.opset_import})


def _same(ours, theirs, msg, ctx, ref_ctx, what: str) -> bool:
    """``ours(msg, ctx)`` and ``theirs(msg, ref_ctx)`` (onnx's) give the same verdict."""
    try:
        theirs(msg, ref_ctx)
        ref = None
    except Exception as exc:  # noqa: BLE001
        ref = str(exc)
    try:
        ours(msg, ctx)
        mine = None
    except irmodel.ValidationError as exc:
        mine = [str(p) for p in exc.problems]
    assert (ref is None) == (mine is None), f"{what}: onnx says {ref!r}, we say {mine!r}"
    return ref is None


@pytest.mark.parametrize("kind", ["undefined_input", "too_many_inputs", "unknown_attribute",
                                  "wrong_attribute_type", "empty_required_input", "subgraph_problem",
                                  "harmless_metadata_and_names", "missing_required_attribute"])
def test_check_node_and_check_graph_same_verdict(kind, reference_models):
    import onnx

    rng = random.Random("node-" + kind)
    checked = 0
    for name, model in rng.sample(reference_models, 60):
        mutant = MUTATORS[kind](rng, model)
        if mutant is None:
            continue
        ref_ctx, ctx = _reference_context(mutant), _our_context(mutant)
        for node in mutant.graph.node:
            _same(irmodel.check_node, onnx.checker.check_node, node, ctx, ref_ctx,
                  f"check_node {kind} {name} {node.op_type}")
        _same(irmodel.check_graph, onnx.checker.check_graph, mutant.graph, ctx, ref_ctx,
              f"check_graph {kind} {name}")
        checked += 1
    assert checked >= 8


def test_check_tensor_attribute_value_info_same_verdict(reference_models):
    import onnx

    rng = random.Random("pieces")
    for name, model in rng.sample(reference_models, 80):
        for kind in ("bad_initializer", "bad_sparse", "good_sparse", "value_info_incomplete",
                     "attribute_without_type", "type_field_mismatch", "duplicate_attribute"):
            mutant = MUTATORS[kind](rng, model)
            if mutant is None:
                continue
            ref_ctx, ctx = _reference_context(mutant), _our_context(mutant)
            g = mutant.graph
            for t in g.initializer:
                _same(irmodel.check_tensor, onnx.checker.check_tensor, t, ctx, ref_ctx,
                      f"check_tensor {kind} {name}")
            for sp in g.sparse_initializer:
                _same(irmodel.check_sparse_tensor, onnx.checker.check_sparse_tensor, sp, ctx, ref_ctx,
                      f"check_sparse_tensor {kind} {name}")
            for vi in list(g.input) + list(g.output):
                _same(irmodel.check_value_info, onnx.checker.check_value_info, vi, ctx, ref_ctx,
                      f"check_value_info {kind} {name}")
            for node in g.node:
                for a in node.attribute:
                    _same(irmodel.check_attribute, onnx.checker.check_attribute, a, ctx, ref_ctx,
                      f"check_attribute {kind} {name}")


@pytest.mark.parametrize("kind", ["bad_function_body", "recursive_function", "function_opset_mismatch",
                                  "harmless_valid_function", "duplicate_function"])
def test_check_function_same_verdict(kind, reference_models):
    import onnx

    rng = random.Random("function-" + kind)
    for name, model in rng.sample(reference_models, 30):
        mutant = MUTATORS[kind](rng, model)
        if mutant is None:
            continue
        for f in mutant.functions:
            _same(irmodel.check_function, onnx.checker.check_function, f, None, None,
                  f"check_function {kind} {name}")


def test_default_context_is_the_newest_opset():
    import onnx
    from onnx import helper as oh

    node = oh.make_node("Relu", ["x"], ["y"])
    irmodel.check_node(node)
    onnx.checker.check_node(node)
    with pytest.raises(TypeError, match="NodeProto"):
        irmodel.check_node(oh.make_tensor("t", 1, [1], [1.0]))
