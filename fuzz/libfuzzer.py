"""Running a harness under atheris (libFuzzer) and reading what libFuzzer reports.

Shared by `check_coverage.py` (the coverage bars), `campaign_atheris.py` (the long
campaign) and `oss_fuzz_local.py` (the OSS-Fuzz build run from ``$OUT``).  libFuzzer
writes a status line per event to stderr (``#runs EVENT cov: E ft: F corp: N/size ...
exec/s: R rss: M``); `run_harness` reads them as they come, with the time each arrived,
so a run's edges over time are known without a second process watching it.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field

HERE = os.path.dirname(os.path.abspath(__file__))
HARNESSES = ("fuzz_decode", "fuzz_roundtrip", "fuzz_checker", "fuzz_inference", "fuzz_ref_diff")

_STATUS = re.compile(r"^#(\d+)\s+(\w+)\s+cov: (\d+) ft: (\d+) corp: (\d+)/\S+.*?exec/s: (\d+)")


@dataclass
class Status:
    """One libFuzzer status line: after ``runs`` inputs, ``cov`` edges, ``corpus`` inputs kept."""

    runs: int
    event: str
    cov: int
    features: int
    corpus: int
    exec_per_s: int
    at: float = 0.0  # seconds since libFuzzer started (``INFO: Seed:``; before it, since the process started)


def parse_status(line: str) -> Status | None:
    """The status in one line of libFuzzer's output, or None if it is not a status line."""
    m = _STATUS.match(line)
    if m is None:
        return None
    runs, event, cov, ft, corp, rate = m.groups()
    return Status(int(runs), event, int(cov), int(ft), int(corp), int(rate))


@dataclass
class Run:
    """What one run of a harness under libFuzzer reported."""

    harness: str
    returncode: int
    seconds: float
    statuses: list = field(default_factory=list)
    artifacts: list = field(default_factory=list)
    tail: str = ""
    startup: float = 0.0  # seconds from the process's start to libFuzzer's (instrumenting, mostly)
    stopped: bool = False  # ended by ``stop`` (SIGTERM) before its time was up

    @property
    def inited(self) -> Status | None:
        """The status once the seed corpus was read (``INITED``)."""
        return next((s for s in self.statuses if s.event == "INITED"), None)

    @property
    def last(self) -> Status | None:
        return self.statuses[-1] if self.statuses else None

    @property
    def total_runs(self) -> int:
        done = re.search(r"^Done (\d+) runs", self.tail, re.M)
        return int(done.group(1)) if done else (self.last.runs if self.last else 0)


def harness_command(harness: str, python: str = sys.executable) -> list:
    """The command that runs ``fuzz/<harness>.py`` under atheris with this interpreter."""
    return [python, os.path.join(HERE, harness + ".py")]


def run_harness(command: list, harness: str, corpus_dirs: list, seconds: float, *, artifact_dir: str,
                flags: list | None = None, nice: int = 0, env: dict | None = None, cwd: str | None = None,
                log=None, stop=None) -> Run:
    """Run ``command`` (a harness or a built fuzzer) under libFuzzer for ``seconds``.

    ``corpus_dirs``: the first is where libFuzzer writes the inputs it keeps; the others
    are read only (seeds).  Crashes go to ``artifact_dir``.  ``log``, when given, gets
    every line of libFuzzer's output.  ``stop``, when given, is asked with every status
    line and the ``INITED`` one (or None before it); once it says yes the fuzzer is sent
    SIGTERM (libFuzzer's "run interrupted"), so a check that has seen what it needs ends
    there rather than at ``seconds``.
    """
    os.makedirs(artifact_dir, exist_ok=True)
    before = set(os.listdir(artifact_dir))
    env = dict(os.environ if env is None else env)
    env.pop("IRMODEL_FUZZ_PLAIN", None)
    cmd = ([*("nice", "-n", str(nice))] if nice else []) + list(command) + [
        f"-max_total_time={max(1, round(seconds))}", f"-artifact_prefix={artifact_dir.rstrip('/')}/",
        "-print_final_stats=1", *(flags or []), *corpus_dirs]
    start = fuzz_start = time.monotonic()
    statuses, lines = [], []
    inited = None
    stopped = False
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, cwd=cwd, text=True,
                          errors="replace") as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            s = parse_status(line)
            if line.startswith("INFO: Seed:"):
                fuzz_start = time.monotonic()
            if s is not None:
                s.at = round(time.monotonic() - fuzz_start, 1)
                statuses.append(s)
                inited = s if s.event == "INITED" else inited
                if stop is not None and not stopped and stop(s, inited):
                    stopped = True
                    proc.terminate()
            elif not line.startswith("INFO: Instrumenting"):
                lines.append(line.rstrip("\n"))
                del lines[:-40]
            if log is not None:
                log.write(line)
        returncode = proc.wait()
    artifacts = sorted(set(os.listdir(artifact_dir)) - before)
    return Run(harness, returncode, round(time.monotonic() - fuzz_start, 1), statuses,
               [os.path.join(artifact_dir, a) for a in artifacts], "\n".join(lines), round(fuzz_start - start, 1),
               stopped)


def unzip_seeds(zip_path: str, into: str) -> int:
    """Unzip a ``<target>_seed_corpus.zip`` into a fresh directory; the number of seeds."""
    import shutil  # noqa: PLC0415
    import zipfile  # noqa: PLC0415

    shutil.rmtree(into, ignore_errors=True)
    os.makedirs(into)
    with zipfile.ZipFile(zip_path) as z:
        z.extractall(into)
        return len(z.namelist())
