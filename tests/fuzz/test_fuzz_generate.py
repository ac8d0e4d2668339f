"""irmodel.fuzz.generate: valid models from the schemas, near-valid models with one defect.

The pass rates are measured against the references on a sample (onnx's checker with
full_check, onnxruntime's session creation); benchmarks/bench_generator.py measures them
on a larger one.
"""

from __future__ import annotations

import subprocess
import sys

import onnx
import pytest

import irmodel
from irmodel.fuzz.generate import DEFECTS, OPSETS, model_bytes, near_valid_model, random_model

SAMPLE = range(200)


@pytest.fixture(scope="module")
def sample() -> list:
    return [model_bytes(seed, "valid") for seed in SAMPLE]


def onnx_accepts(data: bytes) -> bool:
    try:
        onnx.checker.check_model(onnx.load_from_string(data), full_check=True)
    except (onnx.checker.ValidationError, onnx.shape_inference.InferenceError):
        return False
    return True


def test_at_least_95_percent_pass_onnx_full_check(sample):
    passed = sum(onnx_accepts(b) for b in sample)
    assert passed >= 0.95 * len(sample), f"{passed} of {len(sample)}"


def test_at_least_90_percent_load_in_onnxruntime(sample):
    ort = pytest.importorskip("onnxruntime")
    ort.set_default_logger_severity(4)
    loaded = 0
    for data in sample:
        try:
            ort.InferenceSession(data, providers=["CPUExecutionProvider"])
            loaded += 1
        except Exception:  # noqa: BLE001, S112 - any refusal counts as not loaded
            continue
    assert loaded >= 0.9 * len(sample), f"{loaded} of {len(sample)}"


def test_our_checker_and_inference_accept_every_generated_model(sample):
    for data in sample:
        irmodel.check_model(data, full_check=True)
        inferred = irmodel.infer_shapes(data, check_type=True, strict_mode=True)
        assert len(inferred.graph.node) == len(irmodel.loads(data).graph.node)


def test_the_sample_has_every_structure_the_generator_promises(sample):
    models = [irmodel.loads(b) for b in sample]
    ops = {n.op_type for m in models for n in m.graph.node}
    assert {"If", "Loop"} <= ops
    assert sum(1 for m in models if len(m.functions)) >= 10
    assert sum(1 for m in models if len(m.graph.initializer)) >= 100
    assert len(ops) >= 60  # the schema pool, not a handful of operators
    assert {m.opset_import[0].version for m in models} == set(OPSETS)
    sizes = [len(m.graph.node) for m in models]
    assert min(sizes) >= 1 and max(sizes) <= 12


def test_a_seed_always_names_the_same_model():
    assert model_bytes(7, "valid") == model_bytes(7, "valid")
    assert model_bytes(7, "near-valid") == model_bytes(7, "near-valid")
    assert model_bytes(7, "valid") != model_bytes(8, "valid")
    code = "from irmodel.fuzz.generate import model_bytes; import sys; sys.stdout.buffer.write(model_bytes(7, 'valid'))"
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, check=True).stdout
    assert other == model_bytes(7, "valid")  # no dependence on hash seeds or process state


def test_options_bound_the_model():
    for seed in range(10):
        m = random_model(seed, max_nodes=3, opset=17)
        assert len(m.graph.node) <= 3
        assert [(o.domain, o.version) for o in m.opset_import][0] == ("", 17)
        irmodel.check_model(m, full_check=True)


def test_an_unknown_kind_is_a_value_error():
    with pytest.raises(ValueError, match="unknown model kind"):
        model_bytes(0, "hostile")


@pytest.mark.parametrize("defect", sorted(DEFECTS))
def test_each_defect_is_rejected_by_both_checkers_and_decoded_by_both_readers(defect):
    tried = 0
    for seed in range(12):
        try:
            model = near_valid_model(seed, defect)
        except ValueError:
            continue
        tried += 1
        data = irmodel.dumps(model)
        assert model.doc_string == f"near-valid: {defect}"
        onnx.load_from_string(data)  # decodes
        assert not onnx_accepts(data)
        with pytest.raises(irmodel.ValidationError):
            irmodel.check_model(data, full_check=True)
    assert tried >= 3


def test_near_valid_models_differ_from_their_valid_model_in_one_place():
    for seed in range(20):
        valid = onnx.load_from_string(model_bytes(seed, "valid"))
        near = onnx.load_from_string(model_bytes(seed, "near-valid"))
        near.doc_string = valid.doc_string
        changed = [f.name for f in near.DESCRIPTOR.fields if getattr(near, f.name) != getattr(valid, f.name)]
        assert len(changed) == 1, changed
