"""``irmodel fuzz corpus|diff|reduce``: what each subcommand writes and prints.

Expected outcomes are decided by the reference in this process (protobuf's upb backend
parsing the same bytes) and by our decoder, never pasted from a run.  The generator's
kinds (``valid``, ``near-valid``) are tested in tests/fuzz/test_fuzz_cli_generated.py.
"""

from __future__ import annotations

import os
import shlex
import sys

import onnx
import pytest

import irmodel
from irmodel.cli import main
from irmodel.cli import fuzz as fuzz_cli
from irmodel.fuzz.onnx_schema import model_mutator
from irmodel.fuzz.sample_model import sample_model_bytes
from wirefmt import DecodeError
from wirefmt.rawtext import encode


def upb_accepts(data: bytes) -> bool:
    try:
        onnx.ModelProto.FromString(data)
    except Exception:  # noqa: BLE001 - any refusal
        return False
    return True


def ours_accepts(data: bytes) -> bool:
    try:
        irmodel.to_dict(irmodel.loads(data))
    except DecodeError:
        return False
    return True


@pytest.fixture(scope="module")
def planted() -> bytes:
    """A model that upb accepts and we refuse: a group holding field 0 in a nested message."""
    mutator = model_mutator()
    for seed in range(200):
        m = mutator.mutate(sample_model_bytes(), seed, kind="group_with_field_0")
        if len(m.path) >= 2 and upb_accepts(m.data) and not ours_accepts(m.data):
            return m.data
    raise AssertionError("no planted mutant found")  # pragma: no cover


@pytest.fixture
def no_generator(monkeypatch):
    """The commands as on an installation without `irmodel.fuzz.generate`."""
    monkeypatch.setattr(fuzz_cli, "_generator", lambda: None)


# -- corpus ------------------------------------------------------------------------------

def test_hostile_corpus_is_made_of_mutants_and_depends_on_the_seed_only(tmp_path, capsys, no_generator):
    for out, seed in (("a", 5), ("b", 5), ("c", 6)):
        assert main(["fuzz", "corpus", str(tmp_path / out), "--count", "30", "--kind", "hostile",
                     "--seed", str(seed)]) == 0
    assert "30 hostile files" in capsys.readouterr().out

    def files(d):
        return {name: (tmp_path / d / name).read_bytes() for name in sorted(os.listdir(tmp_path / d))}

    a, b, c = files("a"), files("b"), files("c")
    assert len(a) == 30 and all(n.startswith("hostile-") and n.endswith(".onnx") for n in a)
    assert a == b and a != c
    sample = sample_model_bytes()
    assert sample not in a.values()
    # hostile: the reference refuses some of them and takes others (mutants, not garbage)
    verdicts = [upb_accepts(d) for d in a.values()]
    assert 0 < sum(verdicts) < len(verdicts)


def test_valid_kinds_without_the_generator_are_a_usage_error(tmp_path, capsys, no_generator):
    assert main(["fuzz", "corpus", str(tmp_path), "--count", "1", "--kind", "valid"]) == 2
    assert "needs the model generator" in capsys.readouterr().err
    assert main(["fuzz", "corpus", str(tmp_path), "--count", "0", "--kind", "hostile"]) == 2
    assert main(["fuzz", "corpus", str(tmp_path), "--count", "1", "--kind", "weird"]) == 2


# -- diff --------------------------------------------------------------------------------

def test_diff_reports_outcomes_and_saves_each_disagreement(tmp_path, capsys, planted, no_generator):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    bad_tag = model_mutator().mutate(sample_model_bytes(), 1, kind="field_number_0").data
    inputs = {"1-good.onnx": sample_model_bytes(), "2-planted.onnx": planted, "3-tag0.onnx": bad_tag}
    for name, data in inputs.items():
        (corpus / name).write_bytes(data)
    script = "import sys; sys.exit(b'\\x07\\x07' in open(sys.argv[1], 'rb').read())"
    command = f"cmd:{shlex.quote(sys.executable)} -c {shlex.quote(script)}"
    save = tmp_path / "save"
    assert main(["fuzz", "diff", "--target", "ours,upb", "--target", command, "--corpus", str(corpus),
                 "--no-mutate", "--save", str(save), "--timeout", "60"]) == 0
    out, err = capsys.readouterr()
    assert "fuzz diff: 3 inputs" in err  # the progress line's last state
    assert "3 inputs in" in out and "execs/s" in out
    names = ["ours", "upb", "cmd:" + os.path.basename(sys.executable)]
    expected = [tuple("accept" if ok else "reject" for ok in (ours_accepts(d), upb_accepts(d),
                                                             b"\x07\x07" not in d)) for d in inputs.values()]
    disagreements = {v for v in expected if len(set(v)) > 1}
    assert disagreements  # the planted input at least
    assert f"{len(disagreements)} distinct disagreements" in out
    for v in disagreements:
        assert ", ".join(f"{n}={o}" for n, o in zip(names, v)) in out
    saved = sorted(p for p in os.listdir(save) if p.endswith(".bin"))
    assert len(saved) == len(disagreements) and "report.txt" in os.listdir(save)
    for name in saved:
        data = (save / name).read_bytes()
        assert data in inputs.values()
        assert encode((save / name.replace(".bin", ".txt")).read_text(encoding="utf-8")) == data


def test_diff_mutates_the_seeds_until_its_count(capsys, no_generator):
    assert main(["fuzz", "diff", "--target", "ours", "--count", "25", "--seed", "3", "--timeout", "60"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("25 inputs in")
    counts = [line.split() for line in out.splitlines() if line.startswith("ours ")][0]
    accept, reject, error = int(counts[1]), int(counts[2]), int(counts[7])
    assert accept + reject == 25 and reject > 0 and error == 0  # mutants: many refused, no bug of ours


@pytest.mark.parametrize("argv, message", [
    (["--target", "nonsense"], "unknown target"),
    (["--target", "ours,ours"], "given twice"),
    (["--target", "cmd:"], "no command"),
    (["--target", "ours", "--corpus", "/nonexistent/dir"], "not a directory"),
])
def test_diff_usage_errors(argv, message, capsys):
    assert main(["fuzz", "diff", *argv, "--count", "1"]) == 2
    assert message in capsys.readouterr().err


def test_a_target_that_cannot_start_is_a_usage_error(capsys):
    assert main(["fuzz", "diff", "--target", "no_such_module_anywhere:f", "--count", "1"]) == 2
    assert "could not start" in capsys.readouterr().err


# -- reduce ------------------------------------------------------------------------------

def test_reduce_keeps_the_outcomes_and_writes_bytes_and_raw_text(tmp_path, capsys, planted):
    src = tmp_path / "in.onnx"
    src.write_bytes(planted)
    out = tmp_path / "small.bin"
    assert main(["fuzz", "reduce", str(src), "--target", "ours", "--target", "upb", "-o", str(out),
                 "--max-tests", "400", "--timeout", "60"]) == 0
    printed = capsys.readouterr().out
    small = out.read_bytes()
    assert len(small) < len(planted) // 20
    assert not ours_accepts(small) and upb_accepts(small)  # the disagreement is kept
    assert "ours=reject, upb=accept" in printed and f"-> {len(small)} bytes" in printed
    text = (tmp_path / "small.bin.txt").read_text(encoding="utf-8")
    assert "ours=reject, upb=accept" in text and encode(text) == small


def test_reduce_of_a_missing_file_is_an_io_error(tmp_path, capsys):
    assert main(["fuzz", "reduce", str(tmp_path / "none"), "--target", "ours", "-o", str(tmp_path / "o")]) == 2
    assert "No such file" in capsys.readouterr().err


def test_fuzz_help_lists_the_subcommands(capsys):
    assert main(["fuzz", "--help"]) == 0
    out = capsys.readouterr().out
    assert all(name in out for name in ("corpus", "diff", "reduce"))
