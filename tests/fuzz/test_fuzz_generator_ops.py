"""The valid-model generator draws (nearly) every operator, and each recipe's node is valid
for the references: onnx's full check accepts it and onnxruntime loads it.

benchmarks/bench_generator.py measures the same bars over 300 seeds; here the bars are
held on the same 300 seeds (generation is fast), and each recipe is checked alone.
"""

from __future__ import annotations

import collections

import onnx
import pytest

import irmodel
from irmodel.fuzz import builder
from irmodel.fuzz.generate import model_bytes
from irmodel.fuzz.recipes import RECIPES, domain_of
from irmodel.fuzz.rng import FastRandom

SEEDS = range(300)


@pytest.fixture(scope="module")
def models() -> list:
    return [irmodel.loads(model_bytes(seed, "valid")) for seed in SEEDS]


def _nodes(graph):
    for node in graph.node:
        yield node
        for attr in node.attribute:
            for g in ([attr.g] if attr.HasField("g") else []) + list(attr.graphs):
                yield from _nodes(g)


def test_300_seeds_draw_at_least_150_ai_onnx_operators_and_the_ml_ones(models):
    ops = collections.defaultdict(set)
    for m in models:
        for n in _nodes(m.graph):
            ops[n.domain or "ai.onnx"].add(n.op_type)
    assert len(ops["ai.onnx"]) >= 150, sorted(ops["ai.onnx"])
    assert len(ops["ai.onnx.ml"]) >= 10, sorted(ops["ai.onnx.ml"])


def test_the_particular_forms_are_drawn(models):
    """Sub-graphs, sequences, optionals, strings and quantized types all occur."""
    ops = {n.op_type for m in models for n in _nodes(m.graph)}
    assert {"If", "Loop", "Scan", "SequenceMap", "Optional", "OptionalGetElement", "SequenceAt",
            "QLinearConv", "DequantizeLinear", "StringSplit", "TfIdfVectorizer"} <= ops
    elem_types = {t.data_type for m in models for t in m.graph.initializer}
    assert {irmodel.TensorProto.STRING, irmodel.TensorProto.UINT8, irmodel.TensorProto.INT32} <= elem_types
    outputs = {o.type.WhichOneof("value") for m in models for o in m.graph.output}
    assert {"tensor_type", "sequence_type", "optional_type"} <= outputs


def _one_node_model(name: str, opset: int, seed: int):
    b = builder._Builder(FastRandom(seed), opset, 4)
    for shape in ((2, 3), (1, 3, 4), (1, 2, 3, 3)):
        b.add_input(shape)
    if not RECIPES[name](b):
        return None
    h = b.h
    made = {o for n in b.nodes for o in n.output}
    outputs = [h.make_tensor_value_info(v.name, v.elem, list(v.shape)) for v in b.values
               if v.name in made and v.name not in b.consumed]
    outputs += [h.make_value_info(n, tp) for n, tp in b.other_outputs.items()]
    opsets = [h.make_opsetid("", opset)]
    if b.ml_opset:
        opsets.append(h.make_opsetid("ai.onnx.ml", b.ml_opset))
    graph = h.make_graph(b.nodes, name, b.inputs, outputs, initializer=b.initializers)
    return h.make_model(graph, ir_version=h.find_min_ir_version_for(opsets), opset_imports=opsets)


@pytest.mark.slow
@pytest.mark.parametrize("opset", [13, 21])
def test_each_recipe_alone_passes_both_checkers_and_loads_in_onnxruntime(opset):
    ort = pytest.importorskip("onnxruntime")
    ort.set_default_logger_severity(4)
    failures, built = {}, 0
    for name in sorted(RECIPES):
        if name not in builder.operator_names(opset):
            continue
        model = _one_node_model(name, opset, seed=1)
        assert model is not None, f"the recipe of {name} refused a model with float inputs of rank 2 to 4"
        built += 1
        data = irmodel.dumps(model)
        assert any(n.op_type == name and n.domain == domain_of(name) for n in model.graph.node)
        try:
            irmodel.check_model(model, full_check=True)
            onnx.checker.check_model(onnx.load_from_string(data), full_check=True)
            ort.InferenceSession(data, providers=["CPUExecutionProvider"])
        except Exception as exc:  # noqa: BLE001 - any refusal is reported by operator
            failures[name] = str(exc).strip().splitlines()[0][:200]
    assert built >= 80 and failures == {}
