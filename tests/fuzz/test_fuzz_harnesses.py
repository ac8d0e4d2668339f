"""fuzz/: the OSS-Fuzz harnesses run (a smoke campaign in plain-loop mode), their dictionary
is the generated one, the build files are where OSS-Fuzz and ClusterFuzzLite look.

The smoke campaign runs each harness for a few seconds over its seeds and their mutants,
as CI does without atheris; together under a minute.
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import zipfile

import pytest

from repo_paths import REPO as ROOT  # noqa: E402
FUZZ = os.path.join(ROOT, "fuzz")
HARNESSES = ["fuzz_decode", "fuzz_roundtrip", "fuzz_checker", "fuzz_inference", "fuzz_ref_diff"]
SMOKE_SECONDS = 3


@pytest.fixture(scope="module")
def harness_modules():
    """The harness modules, imported in plain mode (no atheris instrumentation)."""
    os.environ["IRMODEL_FUZZ_PLAIN"] = "1"
    sys.path.insert(0, FUZZ)
    try:
        yield {name: importlib.import_module(name) for name in ["_harness", *HARNESSES]}
    finally:
        sys.path.remove(FUZZ)
        os.environ.pop("IRMODEL_FUZZ_PLAIN", None)


def test_the_harness_files_are_the_ones_named():
    found = sorted(n[:-3] for n in os.listdir(FUZZ) if n.startswith("fuzz_") and n.endswith(".py"))
    assert found == sorted(HARNESSES)


@pytest.mark.parametrize("name", HARNESSES)
def test_smoke_campaign_in_plain_loop_mode(name, tmp_path):
    env = dict(os.environ, IRMODEL_FUZZ_PLAIN="1")
    proc = subprocess.run([sys.executable, os.path.join(FUZZ, name + ".py"), "--plain", "--seconds",
                           str(SMOKE_SECONDS), "--artifact-dir", str(tmp_path)],
                          capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = proc.stderr.strip().splitlines()[-1]
    assert line.startswith("plain loop:") and line.endswith("no crash"), proc.stderr[-3000:]
    runs = int(line.split()[2])
    assert runs > 1  # the seeds, then mutants of them
    assert not os.listdir(tmp_path)  # no crash file


def test_a_crash_in_the_plain_loop_writes_its_input_and_propagates(harness_modules, tmp_path):
    h = harness_modules["_harness"]
    seen = []

    def fragile(data: bytes) -> None:
        seen.append(data)
        if len(seen) == 5:
            raise IndexError("a bug")

    with pytest.raises(IndexError):
        h.plain_loop(fragile, [b"\x08\x01", b"\x08\x02"], seconds=None, runs=100, artifact_dir=str(tmp_path),
                     out=open(os.devnull, "w"))
    (crash,) = os.listdir(tmp_path)
    assert crash.startswith("crash-") and (tmp_path / crash).read_bytes() == seen[-1]


def test_the_plain_loop_mutates_deterministically(harness_modules):
    h = harness_modules["_harness"]
    runs = []
    for _ in range(2):
        got = []
        h.plain_loop(got.append, h.seed_inputs()[:1], seconds=None, runs=30, out=open(os.devnull, "w"))
        runs.append(got)
    assert runs[0] == runs[1] and len(set(runs[0])) > 20


def test_ref_diff_passes_the_known_difference_and_raises_on_others(harness_modules, monkeypatch):
    import irmodel
    from irmodel.fuzz.onnx_schema import model_mutator
    from irmodel.fuzz.sample_model import sample_model_bytes
    from wirefmt import encode_varint

    rd = harness_modules["fuzz_ref_diff"]
    sample = sample_model_bytes()
    rd.TestOneInput(sample)  # both accept, same decoding
    rd.TestOneInput(model_mutator().mutate(sample, 0, kind="field_number_0").data)  # both refuse
    group = encode_varint(100 << 3 | 3) + b"\x00\x01" + encode_varint(100 << 3 | 4)
    rd.TestOneInput(sample + group)  # a group holding field 0: the documented difference

    def refuse(data):
        raise irmodel.DecodeError("planted", 0)

    monkeypatch.setattr(rd.irmodel, "loads", refuse)
    with pytest.raises(rd.Disagreement, match="planted"):
        rd.TestOneInput(sample)


def test_our_harnesses_allow_only_our_errors(harness_modules):
    """Each harness swallows the documented errors of what it tests and nothing else."""
    import irmodel
    from wirefmt import DecodeError

    bad = b"\x08"  # truncated: DecodeError everywhere
    for name in ("fuzz_decode", "fuzz_roundtrip", "fuzz_checker", "fuzz_inference"):
        harness_modules[name].TestOneInput(bad)
    with pytest.raises(DecodeError):
        irmodel.to_dict(irmodel.loads(bad))


def test_the_dictionary_is_generated_from_the_schema():
    from generated_files import assert_generated_file_is_current

    assert_generated_file_is_current("gen_fuzz_dict.py")


def test_the_dictionary_has_real_tags_and_op_names():
    from irmodel.proto import REGISTRY
    from wirefmt import encode_varint

    with open(os.path.join(FUZZ, "onnx.dict"), encoding="utf-8") as f:
        entries = dict(line.split("=", 1) for line in f if "=" in line and not line.startswith("#"))
    values = {v.strip()[1:-1].encode().decode("unicode_escape").encode("latin-1") for v in entries.values()}
    graph_node = next(f for f in REGISTRY.messages["GraphProto"].fields if f.name == "node")
    assert encode_varint(graph_node.number << 3 | 2) in values
    assert b"Conv" in values and b"ai.onnx.ml" in values


def test_seed_corpus_zips_and_build_files(tmp_path):
    proc = subprocess.run([sys.executable, os.path.join(FUZZ, "make_seed_corpus.py"), str(tmp_path), "--mutants", "8"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    from irmodel.fuzz.sample_model import sample_model_bytes
    for name in HARNESSES:
        with zipfile.ZipFile(tmp_path / f"{name}_seed_corpus.zip") as z:
            data = [z.read(n) for n in z.namelist()]
        assert sample_model_bytes() in data and len(set(data)) == len(data) > 8
    with open(os.path.join(ROOT, ".clusterfuzzlite", "project.yaml")) as f:
        assert "language: python" in f.read()
    for script in ("fuzz/build.sh", ".clusterfuzzlite/build.sh"):
        assert subprocess.run(["bash", "-n", os.path.join(ROOT, script)]).returncode == 0
    with open(os.path.join(FUZZ, "build.sh")) as f:
        build = f.read()
    assert "compile_python_fuzzer" in build and "make_seed_corpus.py" in build
    assert "$name.dict" in build and "$name.options" in build
