"""The OSS-Fuzz build of fuzz/, run here (fuzz/oss_fuzz_local.py): PyInstaller with atheris'
hooks builds every harness into $OUT as the base-builder image does, with its seed corpus,
dictionary and options; then each built fuzzer starts from $OUT as ``run_fuzzer`` starts it.

The build is slow (PyInstaller analyses and compresses numpy, atheris and Python, and onnx
for fuzz_ref_diff, about 40 s of CPU per fuzzer; build.sh compiles one per core): it runs
once per session, and each fuzzer then runs for 3 s.  atheris and PyInstaller are pinned
in the ``test`` extra, so CI runs this; skipped, with the reason, where they are not
installed (their wheels exist for CPython 3.11-3.13 on x86-64 Linux only).
"""

from __future__ import annotations

import importlib.util
import os
import stat
import subprocess
import sys
import zipfile

import pytest

from repo_paths import REPO as ROOT  # noqa: E402
FUZZ = os.path.join(ROOT, "fuzz")
HARNESSES = ["fuzz_checker", "fuzz_decode", "fuzz_inference", "fuzz_ref_diff", "fuzz_roundtrip"]
MISSING = [m for m in ("atheris", "PyInstaller") if importlib.util.find_spec(m) is None]
REASON = (f"{' and '.join(MISSING)} not installed for Python {sys.version.split()[0]} "
          "(the test extra installs them where a wheel exists: CPython 3.11-3.13 on x86-64 Linux)") if MISSING else ""

sys.path.insert(0, FUZZ)
import libfuzzer  # noqa: E402
import oss_fuzz_local  # noqa: E402

sys.path.remove(FUZZ)


@pytest.fixture(scope="session")
def built(tmp_path_factory):
    if MISSING:
        pytest.skip(REASON)
    work = tmp_path_factory.mktemp("oss-fuzz")
    env = oss_fuzz_local.environment(str(work))
    with open(work / "build.log", "w") as log:
        try:
            fuzzers = oss_fuzz_local.build(env, log=log)
        except subprocess.CalledProcessError:
            pytest.fail("fuzz/build.sh failed:\n" + (work / "build.log").read_text()[-4000:])
    return env, fuzzers


def test_the_options_file_becomes_libfuzzer_flags(tmp_path):
    path = tmp_path / "x.options"
    path.write_text("[libfuzzer]\n# a comment\ndict = x.dict\nmax_len = 262144\n")
    assert oss_fuzz_local.options_flags(str(path)) == ["-dict=x.dict", "-max_len=262144"]
    assert oss_fuzz_local.options_flags(str(tmp_path / "none.options")) == []


def test_the_local_compile_python_fuzzer_is_valid_bash(tmp_path):
    env = oss_fuzz_local.environment(str(tmp_path))
    script = os.path.join(str(tmp_path), "bin", "compile_python_fuzzer")
    assert subprocess.run(["bash", "-n", script]).returncode == 0
    assert env["PATH"].startswith(os.path.join(str(tmp_path), "bin"))
    assert os.path.realpath(os.path.join(str(tmp_path), "bin", "python3")) == os.path.realpath(sys.executable)


def test_libfuzzer_status_lines_are_read():
    s = libfuzzer.parse_status("#86\tINITED cov: 994 ft: 3461 corp: 69/291Kb exec/s: 86 rss: 75Mb\n")
    assert (s.runs, s.event, s.cov, s.features, s.corpus, s.exec_per_s) == (86, "INITED", 994, 3461, 69, 86)
    assert libfuzzer.parse_status("INFO: Seed: 1046830869") is None


@pytest.mark.slow
def test_out_holds_what_oss_fuzz_expects(built):
    env, fuzzers = built
    out = env["OUT"]
    assert fuzzers == HARNESSES  # the executables in $OUT are the fuzzers, nothing else
    for name in HARNESSES:
        assert not os.stat(os.path.join(out, name + ".pkg")).st_mode & stat.S_IXUSR
        with open(os.path.join(out, name + ".options")) as f:
            assert f"dict = {name}.dict" in f.read()
        assert os.path.getsize(os.path.join(out, name + ".dict")) > 1000
        with zipfile.ZipFile(os.path.join(out, name + "_seed_corpus.zip")) as z:
            assert len(z.namelist()) > 50


@pytest.mark.slow
@pytest.mark.parametrize("name", HARNESSES)
def test_each_built_fuzzer_runs_from_out(built, name):
    env, _ = built
    run = oss_fuzz_local.run_fuzzer(env, name, 3)
    assert run.returncode == 0 and run.artifacts == [], run.tail
    # The seed corpus was read (INITED) and libFuzzer saw irmodel's code inside the bundle.
    assert run.inited is not None and run.inited.runs >= 50 and run.inited.cov > 300, run.tail
