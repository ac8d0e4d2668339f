"""fuzz/ under atheris: libFuzzer sees irmodel's code, keeps inputs, and finds nothing.

The instrumentation tests run in a child process (atheris' import hook and its patched
code must not leak into the test process).  The coverage smoke run is CI's short form of
`fuzz/check_coverage.py`: each harness from its seed corpus until it has shown the issue's
edge bar and a growing corpus (the 45 s figures are in fuzz/RESULTS.md).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from repo_paths import REPO as ROOT  # noqa: E402
FUZZ = os.path.join(ROOT, "fuzz")
HARNESSES = ["fuzz_decode", "fuzz_roundtrip", "fuzz_checker", "fuzz_inference", "fuzz_ref_diff"]

try:
    import atheris  # noqa: F401
    ATHERIS = None
except ImportError as exc:  # no wheel for this interpreter: say so in the skip
    ATHERIS = f"atheris is not installed for Python {sys.version.split()[0]} ({exc}); the test extra installs it where a wheel exists (CPython 3.11-3.13 on x86-64 Linux)"

needs_atheris = pytest.mark.skipif(ATHERIS is not None, reason=ATHERIS or "")


def _child(code: str) -> str:
    env = {k: v for k, v in os.environ.items() if k != "IRMODEL_FUZZ_PLAIN"}
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=FUZZ, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def test_import_all_reaches_the_lazily_imported_modules():
    sys.path.insert(0, FUZZ)
    try:
        import _harness
        names = set(_harness.import_all())
    finally:
        sys.path.remove(FUZZ)
    assert {"irmodel.io", "irmodel.checker.model", "wirefmt.scan", "wirefmt.scangen"} <= names
    assert any(n.startswith("irmodel.inference.") for n in names)
    assert not any(n.startswith(("irmodel.cli", "irmodel.fuzz")) for n in names)


@needs_atheris
def test_under_atheris_every_module_and_generated_scanner_is_instrumented():
    out = _child("""
        import json, sys, types
        import _harness
        assert not _harness.PLAIN
        with _harness.instrumented():
            import irmodel
        def instrumented(code):
            return "_trace_branch" in code.co_names
        modules = [m for n, m in sys.modules.items() if n.split(".")[0] in ("irmodel", "wirefmt")
                   and not n.startswith(("irmodel.cli", "irmodel.fuzz")) and getattr(m, "__file__", None)]
        bare = []
        for m in modules:
            funcs = [v for v in vars(m).values() if isinstance(v, types.FunctionType) and v.__module__ == m.__name__]
            if funcs and not any(instrumented(f.__code__) for f in funcs):
                bare.append(m.__name__)
        from irmodel.messages import CLASSES
        scanners = [(name, which) for name, cls in CLASSES.items() for which in ("_make_child", "_scan_into")
                    if not instrumented(cls.__dict__[which].__func__.__code__)]
        print(json.dumps({"modules": len(modules), "bare": bare, "bare_scanners": scanners}))
    """)
    got = json.loads(out.strip().splitlines()[-1])
    assert got["modules"] > 80
    assert got["bare"] == [] and got["bare_scanners"] == []


@needs_atheris
def test_a_harness_prints_nothing_on_the_hot_path():
    out = _child("""
        import contextlib, io, os, sys
        import fuzz_checker, fuzz_inference, fuzz_roundtrip, fuzz_decode, fuzz_ref_diff, _harness
        seeds = _harness.seed_inputs()
        buf_out, buf_err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(buf_out), contextlib.redirect_stderr(buf_err):
            for h in (fuzz_decode, fuzz_roundtrip, fuzz_checker, fuzz_inference, fuzz_ref_diff):
                for data in seeds:
                    h.TestOneInput(data)
                    h.TestOneInput(data[: len(data) // 2])
        print(repr(buf_out.getvalue() + buf_err.getvalue()))
    """)
    assert out.strip().splitlines()[-1] == "''"


@needs_atheris
@pytest.mark.slow
@pytest.mark.parametrize("harness", HARNESSES)
def test_coverage_smoke_run_under_atheris(harness, tmp_path_factory):
    """CI's short form of check_coverage.py: each harness from the seed corpus (built once,
    shared) until it shows the issue's bar (300 edges; 2,000 for the checker and inference)
    and a corpus grown past what libFuzzer kept of the seeds, with no crash; stopped there,
    at most 150 s."""
    work = tmp_path_factory.getbasetemp() / "coverage-smoke"
    proc = subprocess.run([sys.executable, os.path.join(FUZZ, "check_coverage.py"), "--seconds", "150", "--short",
                           "--work", str(work), "--only", harness],
                          capture_output=True, text=True, timeout=600,
                          env={k: v for k, v in os.environ.items() if k != "IRMODEL_FUZZ_PLAIN"})
    verdicts = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    assert verdicts, proc.stdout[-2000:] + proc.stderr[-2000:]
    (v,) = verdicts
    assert v["ok"], v
    assert proc.returncode == 0


def _campaign_module():
    sys.path.insert(0, FUZZ)
    try:
        import campaign_atheris
    finally:
        sys.path.remove(FUZZ)
    return campaign_atheris


def test_the_campaign_section_is_rendered_and_replaced_in_place(tmp_path):
    ca = _campaign_module()
    row = {"harness": "fuzz_decode", "seconds": 60.0, "startup": 7.0, "seeds": 85,
           "inited": {"cov": 900, "corpus": 70, "at": 1.0}, "final": {"cov": 1200, "ft": 4000, "corpus": 200, "at": 60.0},
           "runs": 5000, "exec_per_s": 83, "timeline": [{"t": 15, "cov": 1000, "corpus": 100}, {"t": 30, "cov": 1100,
                                                                                           "corpus": 150}],
           "findings": [{"artifact": "crash-1", "reproducer": "/x/fuzz_decode-ab.bin", "size": 3, "hex": "0a0b0c",
                         "raised": "IndexError: boom"}], "tail": ""}
    report = {"date": "d", "machine": "m", "seconds": 60.0, "nice": 10, "note": "Shorter than asked.",
              "harnesses": [row]}
    section = ca.render(report)
    assert section.startswith(ca.BEGIN) and section.endswith(ca.END)
    assert "| `fuzz_decode` | 60 | 900 | 1200 | 85 / 70 / 200 | 5,000 | 83 | 1 |" in section
    assert "`0a0b0c`: IndexError: boom" in section and "1100 (150)" in section
    results = tmp_path / "RESULTS.md"
    results.write_text("# Results\n\nearlier text\n")
    ca.write_results(section, str(results))
    ca.write_results(section.replace("Shorter", "Longer"), str(results))
    text = results.read_text()
    assert text.count(ca.BEGIN) == 1 and "Longer than asked" in text and "earlier text" in text


def test_the_short_form_judges_a_run_it_stopped_by_its_bar_and_corpus():
    sys.path.insert(0, FUZZ)
    try:
        import check_coverage
        import libfuzzer
    finally:
        sys.path.remove(FUZZ)
    inited = libfuzzer.Status(86, "INITED", 1650, 5000, 66, 20)
    last = libfuzzer.Status(1400, "NEW", 2001, 7000, 244, 20)
    stopped = libfuzzer.Run("fuzz_checker", 72, 60.0, [inited, last], [], "", 5.0, stopped=True)
    assert check_coverage.judge(stopped, 86, short=True).ok  # libFuzzer's exit code 72: interrupted by us
    crashed = libfuzzer.Run("fuzz_checker", 1, 60.0, [inited, last], ["crash-1"], "", 5.0)
    assert not check_coverage.judge(crashed, 86, short=True).ok
    low = libfuzzer.Run("fuzz_checker", 0, 150.0, [inited, libfuzzer.Status(9000, "NEW", 1999, 7000, 300, 60)],
                        [], "", 5.0)
    assert "cov 1999 < 2000" in check_coverage.judge(low, 86, short=True).why
