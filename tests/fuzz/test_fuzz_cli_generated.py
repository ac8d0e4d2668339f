"""``irmodel fuzz`` and the harnesses with the model generator and the structure mutator
(`irmodel.fuzz.generate`, `irmodel.fuzz.structure`, from the fuzzgen branch).

These pass once that branch is merged; on a branch without it they fail at the import
below (on purpose: no skip, so a merge that loses the generator shows up red).
"""

from __future__ import annotations

import os
import sys

import onnx

import irmodel
from irmodel.cli import main
from irmodel.cli import fuzz as fuzz_cli
from irmodel.fuzz import generate, structure  # noqa: F401  (the modules these tests are about)
from irmodel.fuzz.sample_model import sample_model_bytes

from repo_paths import REPO as ROOT  # noqa: E402


def _files(directory) -> dict:
    return {n: (directory / n).read_bytes() for n in sorted(os.listdir(directory))}


def test_valid_corpus_is_the_generator_output_and_passes_the_reference_checker(tmp_path, capsys):
    assert main(["fuzz", "corpus", str(tmp_path / "v"), "--count", "10", "--kind", "valid", "--seed", "7"]) == 0
    files = _files(tmp_path / "v")
    assert list(files.values()) == [generate.model_bytes(7 + i, "valid") for i in range(10)]
    passed = 0
    for data in files.values():
        irmodel.to_dict(irmodel.loads(data))  # ours decodes every one
        try:
            onnx.checker.check_model(onnx.ModelProto.FromString(data), full_check=True)
            passed += 1
        except Exception:  # noqa: BLE001 - counted
            pass
    assert passed >= 9, passed  # the bar is 95%; a sample of 10 may miss one


def test_near_valid_corpus_decodes_everywhere(tmp_path):
    assert main(["fuzz", "corpus", str(tmp_path / "n"), "--count", "6", "--kind", "near-valid"]) == 0
    files = _files(tmp_path / "n")
    assert list(files.values()) == [generate.model_bytes(i, "near-valid") for i in range(6)]
    for data in files.values():  # near-valid: well-formed bytes, one rule broken
        assert irmodel.to_dict(irmodel.loads(data)) is not None
        onnx.ModelProto.FromString(data)


def test_hostile_corpus_mutates_generated_models_too():
    seeds = fuzz_cli.seed_models(0)
    assert seeds[0] == sample_model_bytes() and len(seeds) == 5
    assert seeds[1] == generate.model_bytes(0, "valid") and seeds[2] == generate.model_bytes(1, "near-valid")


def test_the_harness_mutator_uses_the_structure_mutator():
    os.environ["IRMODEL_FUZZ_PLAIN"] = "1"
    sys.path.insert(0, os.path.join(ROOT, "fuzz"))
    try:
        import _harness
    finally:
        sys.path.remove(os.path.join(ROOT, "fuzz"))
    data = generate.model_bytes(3, "valid")
    assert _harness.custom_mutator(data, 1 << 20, 3) == structure.custom_mutator(data, 1 << 20, 3)
    other = generate.model_bytes(4, "valid")
    assert _harness.custom_crossover(data, other, 1 << 20, 5) == structure.custom_crossover(data, other, 1 << 20, 5)
    assert len(_harness.seed_inputs()) >= 7
