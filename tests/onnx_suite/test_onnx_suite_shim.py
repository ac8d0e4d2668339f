"""The shim that makes ``onnx`` irmodel in the suite's subprocesses, and the runner's judge."""

from __future__ import annotations

import os
import subprocess
import sys

import onnx_suite_runner as runner

PROBE = r"""
import importlib, sys
import onnx
import irmodel
assert onnx is irmodel and sys.modules["onnx"] is irmodel
import onnx.helper
assert onnx.helper is sys.modules["irmodel.helper"] is sys.modules["onnx.helper"]
assert onnx.helper.__spec__.name == "irmodel.helper"
from onnx import helper as h
assert h is irmodel.helper
for name in ("onnx.no_such_module", "onnx.onnx_cpp2py_export"):
    try:
        importlib.import_module(name)
    except ModuleNotFoundError as exc:
        assert exc.name == "irmodel." + name[5:], exc.name
    else:
        raise AssertionError(name + " was imported")
try:
    from onnx import no_such_name
except ImportError:
    pass
else:
    raise AssertionError("a missing name was imported")
assert not any(m.split(".")[0] == "onnx" and sys.modules[m] is not None
               and not getattr(sys.modules[m], "__name__", "").startswith(("irmodel", "onnx."))
               for m in sys.modules)
import onnx.stand_in_probe
try:
    onnx.stand_in_probe.ReferenceEvaluator
except NotImplementedError as exc:
    assert "irmodel.stand_in_probe" in str(exc)
else:
    raise AssertionError("a stand-in answered")
print("ok")
"""


def _probe(code: str, stand_ins: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([runner.SHIM_DIR, runner.REPO]),
           "ONNX_SUITE_STAND_INS": stand_ins}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          cwd=runner.SHIM_DIR, timeout=120)


def test_onnx_is_irmodel_and_a_missing_name_never_reaches_the_real_onnx():
    proc = _probe(PROBE, "stand_in_probe")
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr


def test_a_stand_in_is_given_only_where_the_runner_declares_one():
    proc = _probe("import onnx.stand_in_probe", "")
    assert proc.returncode != 0 and "No module named 'irmodel.stand_in_probe'" in proc.stderr


def test_the_runner_names_only_files_that_the_sdist_has():
    tests_dir = runner.onnx_tests_dir()
    for file in runner.SUITE_FILES:
        assert os.path.isfile(os.path.join(tests_dir, file)), file


def test_the_judge_holds_both_directions():
    run = runner.FileRun({"a_test.py::t1": "passed", "a_test.py::t2": "failed", "a_test.py::T::u[1]": "error",
                          "a_test.py::t3": "passed", "a_test.py::t4": "skipped"}, {"a_test.py::t2": "boom"})
    clean = runner.judge("a_test.py", run, ["a_test.py::t2", "a_test.py::T::*", "b_test.py::t1"])
    assert clean.ok and clean.count("passed") == 2 and clean.count("skipped") == 1
    unlisted = runner.judge("a_test.py", run, ["a_test.py::t2"])
    assert unlisted.unexpected_failures == ["a_test.py::T::u[1]"] and not unlisted.ok
    stale = runner.judge("a_test.py", run, ["a_test.py::t2", "a_test.py::T::*", "a_test.py::t1", "a_test.py::gone*"])
    assert stale.unexpected_passes == ["a_test.py::t1"]
    assert stale.stale_entries == ["a_test.py::t1", "a_test.py::gone*"]
    assert "a_test.py::t2" not in stale.explain() and "gone" in stale.explain()


def test_the_expected_failures_are_read_from_the_table_rows(tmp_path):
    doc = tmp_path / "d.md"
    doc.write_text("| test | what |\n|---|---|\n| `x_test.py::A::b[1-2]` | why |\n"
                   "| `x_test.py` | whole file |\n| `not a test` | - |\ntext `y_test.py::c`\n")
    assert runner.expected_failures(str(doc)) == ["x_test.py::A::b[1-2]", "x_test.py"]
    run = runner.FileRun({"x_test.py::A::b[1-2]": "failed", "x_test.py::A::b1": "failed"}, {})
    assert runner.judge("x_test.py", run, ["x_test.py::A::b[1-2]"]).unexpected_failures == ["x_test.py::A::b1"]


def test_the_version_fetched_is_the_one_setup_cfg_pins():
    import onnx

    assert runner.pinned_onnx_version() == onnx.__version__
