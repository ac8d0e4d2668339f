"""Run onnx's own unit tests with ``onnx`` resolved to irmodel, and judge the outcome.

The pinned onnx's source distribution (the version pinned in ``setup.cfg``'s ``test``
extra) is fetched with pip when first needed and cached outside the checkout, in
``$IRMODEL_TEST_CACHE`` or ``$XDG_CACHE_HOME/irmodel-tests`` or
``~/.cache/irmodel-tests`` (never committed: it is onnx's code).  Each of onnx's test
files in `SUITE_FILES` then runs in its own ``pytest`` subprocess whose ``onnx`` is irmodel
(``shim/onnx.py``; nothing falls back to the real onnx), and a plugin
(``shim/onnx_suite_outcomes.py``) records every test's outcome by its pytest node id.

Which tests may fail is said in one place, ``docs/differences.md``: every table row there
whose first cell is a backticked node id (or a pattern of node ids, ``*`` matching anything) naming
one of onnx's test files is an expected failure.  `judge` holds both directions: a
failure nobody listed, and a listed entry that no longer fails, are both errors, so the
document stays exact as irmodel grows.

Run as a script for the per-file pass counts:
``python tests/onnx_suite/onnx_suite_runner.py [FILE_test.py ...]``.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SHIM_DIR = os.path.join(HERE, "shim")
DIFFERENCES = os.path.join(REPO, "docs", "differences.md")

#: onnx's test files (in the sdist's ``tests/python/``) that run against irmodel.  To add
#: one, add its line; expected failures go to docs/differences.md.
SUITE_FILES = [
    "helper_test.py",
    "numpy_helper_test.py",
    "external_data_test.py",
    "basic_test.py",
    "serialization_test.py",
    "model_container_test.py",
    "checker_test.py",
    "shape_inference_test.py",
    "schema_test.py",
    "printer_test.py",
    "parser_test.py",
    "version_converter_test.py",
    "version_converter/automatic_upgrade_test.py",
    "version_converter/automatic_downgrade_test.py",
    "utils_test.py",
    "inliner_test.py",
    "compose_test.py",
]

#: Modules irmodel does not have yet that a test file imports at its top, so that without
#: them no test of the file could even be collected: the shim gives each a stand-in whose
#: every attribute raises NotImplementedError, so the file's other tests run.  Used only
#: while ``irmodel.<name>`` cannot be imported; docs/differences.md lists the tests that
#: use one.
STAND_INS = {"numpy_helper_test.py": ["reference"], "external_data_test.py": ["parser", "shape_inference"],
             "checker_test.py": ["parser", "shape_inference"], "shape_inference_test.py": ["parser"],
             "schema_test.py": ["parser"]}

#: A test file that runs longer than this has hung (the slowest takes about a minute).
FILE_TIMEOUT = 900


def pinned_onnx_version() -> str:
    """The onnx version of setup.cfg's ``test`` extra: the one reference for everything."""
    with open(os.path.join(REPO, "setup.cfg"), encoding="utf-8") as f:
        match = re.search(r"^\s*onnx==([0-9][0-9A-Za-z.]*)\s*$", f.read(), re.M)
    if match is None:
        raise RuntimeError("setup.cfg pins no onnx==VERSION in its test extra")
    return match.group(1)


def cache_dir() -> str:
    base = os.environ.get("IRMODEL_TEST_CACHE")
    if not base:
        xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        base = os.path.join(xdg, "irmodel-tests")
    return base


def onnx_tests_dir(version: str | None = None) -> str:
    """The directory of the pinned onnx's ``tests/python`` files, fetched on first use.

    pip fetches the sdist from the index it is configured with.  ``--no-binary onnx``
    rather than ``:all:``: pip prepares the sdist's metadata, and ``:all:`` would make it
    build onnx's build backend's own dependencies (cmake) from source, which takes many
    minutes.  A lock file keeps two concurrent runs from fetching at once; the unpacked
    directory appears by a rename, so it is complete whenever it exists.
    """
    version = version or pinned_onnx_version()
    root = os.path.join(cache_dir(), f"onnx-{version}")
    tests = os.path.join(root, "tests", "python")
    if os.path.isdir(tests):
        return tests
    os.makedirs(root, exist_ok=True)
    with open(os.path.join(root, ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if os.path.isdir(tests):
            return tests
        sdist = os.path.join(root, f"onnx-{version}.tar.gz")
        if not os.path.exists(sdist):
            download = tempfile.mkdtemp(dir=root)
            proc = subprocess.run(
                [sys.executable, "-m", "pip", "download", f"onnx=={version}", "--no-deps",
                 "--no-binary", "onnx", "--disable-pip-version-check", "-d", download],
                capture_output=True, text=True, timeout=900)
            if proc.returncode != 0 or not os.path.exists(os.path.join(download, os.path.basename(sdist))):
                raise RuntimeError(f"pip could not fetch onnx=={version}'s source distribution "
                                   f"(exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
            os.replace(os.path.join(download, os.path.basename(sdist)), sdist)
            shutil.rmtree(download)
        staging = tempfile.mkdtemp(dir=root)
        prefix = f"onnx-{version}/tests/python/"
        with tarfile.open(sdist) as tar:
            members = [m for m in tar.getmembers() if m.name.startswith(prefix) and m.isfile()]
            for member in members:
                member.name = member.name[len(prefix):]
            tar.extractall(staging, members=members, filter="data")
        os.makedirs(os.path.dirname(tests), exist_ok=True)
        os.replace(staging, tests)
    return tests


# -- the expected failures ----------------------------------------------------------------

_ROW = re.compile(r"^\|\s*`([^`]+_test\.py[^`]*)`\s*\|")


def expected_failures(path: str = DIFFERENCES) -> list[str]:
    """The node ids and patterns of docs/differences.md's table rows, in document order."""
    with open(path, encoding="utf-8") as f:
        return [m.group(1) for line in f if (m := _ROW.match(line))]


@dataclasses.dataclass
class Verdict:
    """One test file's outcomes judged against the expected failures."""
    file: str
    outcomes: dict[str, str]
    messages: dict[str, str]
    unexpected_failures: list[str]
    unexpected_passes: list[str]  # listed ids (or patterns' matches) that passed
    stale_entries: list[str]  # listed entries that match no test that failed

    def count(self, outcome: str) -> int:
        return sum(1 for o in self.outcomes.values() if o == outcome)

    @property
    def ok(self) -> bool:
        return not (self.unexpected_failures or self.unexpected_passes or self.stale_entries)

    def explain(self) -> str:
        lines = [f"{self.file}: {self.count('passed')} passed, {self.count('failed')} failed, "
                 f"{self.count('error')} errors, {self.count('skipped')} skipped"]
        for title, ids in (("failing but not listed in docs/differences.md", self.unexpected_failures),
                           ("listed in docs/differences.md but passing now (remove the row)", self.unexpected_passes),
                           ("rows of docs/differences.md that match no failing test", self.stale_entries)):
            if ids:
                lines.append(f"  {title}:")
                lines.extend(f"    {i}  [{self.messages[i]}]" if i in self.messages else f"    {i}"
                             for i in ids)
        return "\n".join(lines)


@dataclasses.dataclass
class FileRun:
    """What one test file's run recorded: outcomes and failure messages by node id."""
    outcomes: dict[str, str]
    messages: dict[str, str]


def _pattern(entry: str) -> re.Pattern:
    """An entry as a pattern: ``*`` matches anything, every other character itself (so the
    brackets of a parametrized id are literal, unlike in fnmatch)."""
    return re.compile(".*".join(re.escape(part) for part in entry.split("*")) + r"\Z")


def judge(file: str, run: FileRun, entries: list[str]) -> Verdict:
    name = os.path.basename(file)  # tests are named by the file's name (`run_file`)
    mine = [e for e in entries if e == name or e.startswith(name + "::")]
    patterns = {e: _pattern(e) for e in mine}
    failing = sorted(i for i, o in run.outcomes.items() if o in ("failed", "error"))
    passing = sorted(i for i, o in run.outcomes.items() if o == "passed")
    return Verdict(
        file, run.outcomes, run.messages,
        unexpected_failures=[i for i in failing if not any(patterns[e].match(i) for e in mine)],
        unexpected_passes=[i for i in passing if any(i == e for e in mine)],
        stale_entries=[e for e in mine if not any(patterns[e].match(i) for i in failing)])


# -- running ------------------------------------------------------------------------------

def run_file(file: str, tests_dir: str, work_dir: str, python: str = sys.executable) -> FileRun:
    """The outcomes of one of onnx's test files run against irmodel.  ``file`` may name a
    file in a sub-directory of ``tests/python`` (``version_converter/..._test.py``): it
    runs beside the modules of its own directory, and its tests are named by its file name."""
    run_dir = os.path.join(work_dir, file.removesuffix(".py"))
    os.makedirs(run_dir, exist_ok=True)
    source_dir = os.path.join(tests_dir, os.path.dirname(file))
    for name in os.listdir(source_dir):  # the file and any helper module beside it
        if name.endswith(".py"):
            shutil.copy(os.path.join(source_dir, name), run_dir)
    file = os.path.basename(file)
    with open(os.path.join(run_dir, "pytest.ini"), "w", encoding="utf-8") as f:
        f.write("[pytest]\n")  # onnx's own pytest options are not ours
    out = os.path.join(run_dir, "outcomes.json")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONHOME",)}
    env["PYTHONPATH"] = os.pathsep.join([SHIM_DIR, REPO])
    env["ONNX_SUITE_OUTCOMES"] = out
    env["ONNX_SUITE_STAND_INS"] = ",".join(STAND_INS.get(file, []))
    proc = subprocess.run(
        [python, "-m", "pytest", file, "-q", "-p", "onnx_suite_outcomes", "-p", "no:cacheprovider",
         "--rootdir", run_dir, "-c", os.path.join(run_dir, "pytest.ini"), "--tb=line", "--color=no"],
        cwd=run_dir, env=env, capture_output=True, text=True, timeout=FILE_TIMEOUT)
    if not os.path.exists(out):
        raise RuntimeError(f"pytest wrote no outcomes for {file} (exit {proc.returncode}):\n"
                           f"{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}")
    with open(out, encoding="utf-8") as f:
        recorded = json.load(f)
    return FileRun(recorded["outcomes"], recorded["messages"])


def run_files(files: list[str], work_dir: str, workers: int | None = None) -> dict[str, FileRun]:
    """Every file's outcomes; files run side by side, one subprocess per core (at most 2)."""
    tests_dir = onnx_tests_dir()
    workers = workers or max(1, min(2, os.cpu_count() or 1))
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        futures = {f: pool.submit(run_file, f, tests_dir, work_dir) for f in files}
        return {f: fut.result() for f, fut in futures.items()}


def main(argv: list[str]) -> int:
    files = argv or SUITE_FILES
    entries = expected_failures()
    with tempfile.TemporaryDirectory() as work:
        results = run_files(files, work)
    ok = True
    print(f"{'file':32} {'passed':>7} {'failed':>7} {'errors':>7} {'skipped':>8}")
    for file in files:
        verdict = judge(file, results[file], entries)
        print(f"{file:32} {verdict.count('passed'):7} {verdict.count('failed'):7} "
              f"{verdict.count('error'):7} {verdict.count('skipped'):8}")
        ok &= verdict.ok
    for file in files:
        verdict = judge(file, results[file], entries)
        if not verdict.ok:
            print(verdict.explain())
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
