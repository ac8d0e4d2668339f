"""irmodel.fuzz.runner: crash isolation, outcome classification, and the built-in targets.

The misbehaving targets live in tests/fuzz_targets_for_tests.py; workers import them
through the test session's ``sys.path``, which the runner passes on.
"""

from __future__ import annotations

import shlex
import sys

import onnx
import pytest

from irmodel.fuzz.onnx_schema import model_mutator
from irmodel.fuzz.runner import BUILTIN, OUTCOMES, Report, Runner, Target, default_targets, parse_target
from irmodel.fuzz.sample_model import sample_model_bytes

T = "fuzz_targets_for_tests:"


def outcomes(report_or_tuple) -> list:
    return [o.outcome for o in report_or_tuple]


@pytest.fixture(scope="module")
def misbehaving():
    with Runner([Target("crashy", T + "crashy"), Target("hang", T + "hang"), Target("hog", T + "hog"),
                 Target("echo", T + "echo")], timeout=1.5, memory_limit=256 << 20) as runner:
        yield runner


def test_a_crashing_target_is_classified_by_its_signal_and_the_run_goes_on(misbehaving):
    results = [misbehaving.run_one(d) for d in (b"ok", b"abort", b"ok2", b"segv", b"raise", b"exit", b"ok3")]
    crashy = [r[0] for r in results]
    assert [o.outcome for o in crashy] == ["accept", "signal", "accept", "signal", "reject", "error", "accept"]
    assert crashy[1].detail == "SIGABRT" and crashy[3].detail == "SIGSEGV"
    assert "rejected on purpose" in crashy[4].detail and "status 3" in crashy[5].detail
    assert all(r[3].outcome == "accept" for r in results)  # the other targets never noticed


def test_a_hanging_target_times_out_and_its_worker_is_replaced(misbehaving):
    hung = misbehaving.run_one(b"hang")
    assert outcomes(hung) == ["accept", "timeout", "accept", "accept"]
    assert outcomes(misbehaving.run_one(b"fine")) == ["accept"] * 4


def test_a_memory_hog_is_out_of_memory_not_a_crash(misbehaving):
    for data in (b"hog", b"huge"):
        result = misbehaving.run_one(data)
        assert outcomes(result) == ["accept", "accept", "oom", "accept"], result
    assert outcomes(misbehaving.run_one(b"after")) == ["accept"] * 4


def test_the_report_counts_outcomes_per_target_and_lists_distinct_disagreements(misbehaving):
    report = misbehaving.run([b"a", b"abort", b"b", b"abort", b"raise"])
    assert report.inputs == 5
    assert report.counts["crashy"] == {"accept": 2, "signal": 2, "reject": 1}
    assert report.counts["echo"] == {"accept": 5}
    vectors = {d.vector: d for d in report.disagreements.values()}
    assert set(vectors) == {("signal", "accept", "accept", "accept"), ("reject", "accept", "accept", "accept")}
    assert vectors[("signal", "accept", "accept", "accept")].count == 2
    assert vectors[("signal", "accept", "accept", "accept")].example == b"abort"
    text = report.format()
    assert "2 distinct disagreements" in text and "crashy=signal" in text
    assert all(o in text for o in OUTCOMES)


def test_two_jobs_give_the_same_outcomes_as_one():
    inputs = [b"ok", b"raise", b"abort", b"x", b"segv", b"y"]
    with Runner([Target("crashy", T + "crashy")], jobs=2, timeout=5) as runner:
        report = runner.run(inputs)
    assert report.counts["crashy"] == {"accept": 3, "reject": 1, "signal": 2}


def test_command_targets_read_a_file_and_are_classified_by_exit_status():
    script = ("import os, signal, sys; d = open(sys.argv[1], 'rb').read(); "
              "os.kill(os.getpid(), signal.SIGSEGV) if d == b'segv' else sys.exit(d == b'bad')")
    spec = f"{shlex.quote(sys.executable)} -c {shlex.quote(script)} {{file}}"
    target = parse_target(spec)
    assert target.command is not None
    with Runner([target], timeout=10) as runner:
        assert [runner.run_one(d)[0].outcome for d in (b"good", b"bad", b"segv")] == ["accept", "reject", "signal"]


def test_a_target_printing_to_standard_output_does_not_break_the_protocol():
    with Runner([Target("noisy", T + "noisy")], timeout=10) as runner:
        assert [runner.run_one(d)[0].outcome for d in (b"a", b"b")] == ["accept", "accept"]


def test_target_specs():
    assert parse_target("ours") is BUILTIN["ours"]
    assert parse_target("mod.sub:fn") == Target("fn", function="mod.sub:fn")
    with pytest.raises(ValueError, match="unknown target"):
        parse_target("no such thing")
    with pytest.raises(ValueError, match="same name"):
        Runner(["ours", "ours"])
    with pytest.raises(RuntimeError, match="could not start"):
        with Runner([Target("missing", "no_such_module_anywhere:f")]) as runner:
            runner.run_one(b"")


def test_content_differs_is_decided_by_the_majority_of_a_group():
    targets = [Target("a", T + "echo", group="g"), Target("b", T + "echo", group="g"),
               Target("c", T + "shout", group="g"), Target("d", T + "marker_disagreement", group="g"),
               Target("e", T + "shout")]  # no group: never compared
    with Runner(targets) as runner:
        differs = runner.run_one(b"same")
        assert outcomes(differs) == ["accept", "accept", "differs", "accept", "accept"]
        assert differs[2].digest != differs[0].digest and "decoded content" in differs[2].detail
        assert outcomes(runner.run_one(b"123")) == ["accept"] * 5  # upper-case changes nothing


def test_builtin_targets_agree_on_a_valid_model_and_on_field_number_0():
    targets = [t for t in default_targets() if t.name != "onnxruntime"]
    data = sample_model_bytes()
    bad = model_mutator().mutate(data, 1, kind="field_number_0").data
    with Runner(targets, jobs=1, timeout=60) as runner:
        good = runner.run_one(data)
        assert outcomes(good) == ["accept"] * len(targets)
        parsers = [o for o in good if BUILTIN[o.target].group]
        assert len({o.digest for o in parsers}) == 1 and parsers[0].digest
        rejected = runner.run_one(bad)
    assert outcomes(rejected) == ["reject"] * len(targets)
    with pytest.raises(Exception):
        onnx.ModelProto.FromString(bad)  # the same as the reference in this process


def test_an_empty_report_formats():
    assert "0 inputs" in Report(("a",)).format()
