"""irmodel.fuzz.reduce: a planted disagreement shrinks to a small reproducer that keeps it."""

from __future__ import annotations

import onnx
import pytest

import irmodel
from irmodel.fuzz.onnx_schema import MODEL_TYPE, model_mutator, onnx_registry
from irmodel.fuzz.reduce import reduce, reduce_disagreement, write_reproducer
from irmodel.fuzz.runner import Runner, Target
from irmodel.fuzz.sample_model import sample_model_bytes
from wirefmt import DecodeError, iter_fields
from wirefmt.rawtext import encode


def ours_rejects(data: bytes) -> str | None:
    try:
        irmodel.to_dict(irmodel.loads(data))
    except DecodeError as exc:
        return exc.reason
    return None


def upb_accepts(data: bytes) -> bool:
    try:
        onnx.ModelProto.FromString(data)
    except Exception:  # noqa: BLE001 - any refusal
        return False
    return True


@pytest.fixture(scope="module")
def planted() -> bytes:
    """The sample model with a group holding field 0 inside a function's node: upb accepts it, we refuse."""
    mutator = model_mutator()
    for seed in range(100):
        m = mutator.mutate(sample_model_bytes(), seed, kind="group_with_field_0")
        if len(m.path) >= 2 and upb_accepts(m.data) and ours_rejects(m.data):
            return m.data
    raise AssertionError("no planted mutant found")  # pragma: no cover


def test_a_planted_disagreement_shrinks_structurally_and_keeps_it(planted):
    def disagreement(data: bytes) -> bool:
        return upb_accepts(data) and ours_rejects(data) is not None

    small = reduce(planted, disagreement, registry=onnx_registry(), root_type=MODEL_TYPE)
    assert disagreement(small)
    assert len(small) <= 16 < len(planted) // 50
    assert "field number 0" in ours_rejects(small)


def test_schemaless_reduction_also_works(planted):
    small = reduce(planted, lambda d: upb_accepts(d) and ours_rejects(d) is not None)
    assert len(small) <= 16


def test_reduction_through_the_runner_keeps_the_outcome_vector_and_writes_a_reproducer(planted, tmp_path):
    targets = [Target("ours", "irmodel.fuzz.targets:ours", reject_types=("DecodeError",)),
               Target("lenient", "fuzz_targets_for_tests:marker_disagreement")]
    with Runner(targets, timeout=20) as runner:
        small, vector = reduce_disagreement(runner, planted, registry=onnx_registry(), root_type=MODEL_TYPE,
                                            max_tests=400)
        assert vector == ("reject", "accept")
        assert tuple(o.outcome for o in runner.run_one(small)) == vector
    assert len(small) < 40
    bin_path, txt_path = write_reproducer(small, str(tmp_path / "repro" / "group0"), note=f"outcomes {vector}")
    assert open(bin_path, "rb").read() == small
    text = open(txt_path, encoding="utf-8").read()
    assert text.startswith("# outcomes ('reject', 'accept')") and "raw:" in text
    assert encode(text) == small


def test_structure_is_kept_where_it_matters(planted):
    """Deleting fields keeps enclosing lengths right: the reproducer's top level still parses."""
    small = reduce(planted, lambda d: ours_rejects(d) is not None and "field number 0" in ours_rejects(d),
                   registry=onnx_registry(), root_type=MODEL_TYPE, max_tests=300)
    assert len(small) <= 16
    assert ours_rejects(small)


def test_the_budget_bounds_the_number_of_tests_and_the_input_must_qualify(planted):
    calls = []

    def counting(data: bytes) -> bool:
        calls.append(data)
        return ours_rejects(data) is not None

    out = reduce(planted, counting, max_tests=25)
    assert len(calls) == 25 and ours_rejects(out) and len(out) <= len(planted)
    assert len(set(calls)) == len(calls)  # never the same candidate twice
    with pytest.raises(ValueError, match="false for the input"):
        reduce(b"\x08\x01", lambda d: False)


def test_a_reduced_valid_field_run_keeps_canonical_lengths():
    data = sample_model_bytes()
    small = reduce(data, lambda d: b"Gemm" in d and upb_accepts(d), registry=onnx_registry(), root_type=MODEL_TYPE)
    assert b"Gemm" in small and len(small) < 20
    assert onnx.ModelProto.FromString(small).SerializeToString() == small  # canonical, as protobuf writes
    (field,) = iter_fields(small)  # hoisted out of graph and node: one string field is left
    assert small[field.start:field.end] == b"Gemm"
