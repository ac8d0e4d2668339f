"""Every hostile case of issue 31 through every command and its API, each under limits.

For each case of ``tests/hostile/hostile_models.py`` (built at its full size, or its
small one with ``--small``) in a temporary directory, each *run* below goes in a child
process of its own, under ``RLIMIT_AS`` 2 GiB and ``RLIMIT_CPU`` 10 s (the promise of
the issue: "exit 0, 1 or 2, within 10 s and 2 GiB, only irmodel's documented errors"):

* the command line: ``check``, ``check --json``, ``infer`` (plain, ``--data-prop``,
  ``--strict --check-type``, ``--symbolic``, ``--explain``, ``-o OUT``) and ``convert IN
  OUT`` into another directory;
* the API, in the same nine shapes: ``check_model(path)`` (and ``full_check=True``),
  ``infer_shapes`` (plain, ``data_prop``, ``strict_mode`` + ``check_type``,
  ``symbolic``), ``explain``, ``infer_shapes_path`` to another file, and ``load`` +
  ``save`` into another directory.  An API child exits 0 when the call returns, 1 on
  irmodel's documented errors (`irmodel.ValidationError` and what subclasses it:
  `InferenceError`, `ExternalDataError`, ...; `wirefmt.DecodeError`), 2 on an OSError,
  and 3 on anything else (its traceback on stderr).

Recorded per run: the exit status (or the signal: SIGXCPU is the CPU limit), the CPU
seconds and the peak RSS of the child (``wait4``), whether its output holds a raw
control character (a character that is not printable, but the newline), a Python
traceback, the words "internal error" (a bug reported as one: status 3, or wrapped in
an InferenceError), or running out of memory (a MemoryError, or status 2 "out of memory":
the 2 GiB were reached).  A run *passes* with status 0, 1 or 2, under both limits,
clean output.

Prints a markdown table (a row per case, a cell per run: status, CPU s, peak MiB;
failures in bold) and the list of failures; ``--write`` puts both in
benchmarks/RESULTS.md between the sweep's markers (a hand-written section, outside the
generated block).  The whole sweep at full size is about 400 child processes: minutes.

    python benchmarks/hostile_sweep.py [--small] [--cases a,b] [--runs check,api-infer] [--write]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from dataclasses import dataclass

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "hostile"))
RESULTS = os.path.join(ROOT, "benchmarks", "RESULTS.md")
BEGIN, END = "<!-- hostile-sweep:start -->", "<!-- hostile-sweep:end -->"

#: The issue's limits.
ADDRESS_SPACE = 2 << 30
CPU_SECONDS = 10
#: A child still running after this many seconds of wall time is killed (the machine is
#: shared: wall time is not the measure, but a hang must end).
WALL_SECONDS = 300

#: name -> command-line arguments ({m}: the model, {o}: an output file in another directory).
CLI_RUNS = {
    "check": ["check", "{m}"],
    "check --json": ["check", "--json", "{m}"],
    "infer": ["infer", "{m}"],
    "infer --data-prop": ["infer", "--data-prop", "{m}"],
    "infer --strict --check-type": ["infer", "--strict", "--check-type", "{m}"],
    "infer --symbolic": ["infer", "--symbolic", "{m}"],
    "infer --explain": ["infer", "--explain", "{m}"],
    "infer -o": ["infer", "-o", "{o}", "{m}"],
    "convert": ["convert", "{m}", "{o}"],
}
#: name -> the API call a child makes (``path``, ``out``: as above; ``irmodel`` imported).
API_RUNS = {
    "api check_model": "irmodel.checker.check_model(path)",
    "api check_model full": "irmodel.checker.check_model(path, full_check=True)",
    "api infer_shapes": "irmodel.shape_inference.infer_shapes(irmodel.load(path))",
    "api data_prop": "irmodel.shape_inference.infer_shapes(irmodel.load(path), data_prop=True)",
    "api strict check_type": "irmodel.shape_inference.infer_shapes(irmodel.load(path), check_type=True, "
                             "strict_mode=True)",
    "api symbolic": "irmodel.inference.infer_shapes(irmodel.load(path), symbolic=True)",
    "api explain": "irmodel.inference.explain(irmodel.load(path)).as_dict()",
    "api infer_shapes_path": "irmodel.shape_inference.infer_shapes_path(path, out)",
    "api load + save": "irmodel.save(irmodel.load(path), out)",
}
RUNS = [*CLI_RUNS, *API_RUNS]

_CHILD = """\
import sys, traceback
path, out = sys.argv[1], sys.argv[2]
import irmodel, irmodel.checker, irmodel.inference, irmodel.shape_inference
from irmodel.errors import ValidationError
from wirefmt.errors import DecodeError
try:
    {call}
except (ValidationError, DecodeError) as exc:
    print("irmodel error:", type(exc).__name__, ascii(str(exc)[:2000]), file=sys.stderr)
    sys.exit(1)
except OSError as exc:
    print("OSError:", exc.errno, file=sys.stderr)
    sys.exit(2)
except BaseException:
    traceback.print_exc()
    sys.exit(3)
"""


@dataclass
class Outcome:
    """One run of one case."""

    status: int | None  # exit status, None when killed by a signal
    signal: int | None
    cpu: float
    rss_mib: float
    control: bool  # a raw control character in stdout or stderr
    traceback: bool
    internal: bool  # "internal error" in the output: a bug reported as one (exit 3, or inside an error)
    oom: bool  # out of memory (MemoryError, or the CLI's "out of memory"): the 2 GiB were not enough
    note: str = ""  # the last line of stderr, shortened, for a failure

    @property
    def passed(self) -> bool:
        return (self.status in (0, 1, 2) and self.cpu <= CPU_SECONDS and self.rss_mib <= ADDRESS_SPACE / 2**20
                and not self.control and not self.traceback and not self.internal and not self.oom)

    def cell(self) -> str:
        what = str(self.status) if self.signal is None else signal.Signals(self.signal).name
        text = f"{what} {self.cpu:.1f}s {self.rss_mib:.0f}M"
        if self.control:
            text += " ctl"
        if self.traceback:
            text += " tb"
        if self.internal:
            text += " int"
        if self.oom:
            text += " oom"
        return text if self.passed else f"**{text}**"


def _limits() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))
    resource.setrlimit(resource.RLIMIT_CPU, (CPU_SECONDS, CPU_SECONDS + 1))


def _raw_control(data: bytes) -> bool:
    text = data.decode("utf-8", errors="replace")
    return "\ufffd" in text or any(not ch.isprintable() and ch != "\n" for ch in text)


def run_child(argv: list, scratch: str, logs: str | None = None) -> Outcome:
    """Run ``argv`` under the limits; its `Outcome`.  ``scratch``: the directory whose
    paths the error note shows relative; ``logs``: where its output is kept (``scratch``)."""
    logs = scratch if logs is None else logs
    out_path, err_path = os.path.join(logs, "stdout"), os.path.join(logs, "stderr")
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("IRMODEL_DEBUG", None)
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        p = subprocess.Popen(argv, stdout=out, stderr=err, stdin=subprocess.DEVNULL, cwd=ROOT, env=env,
                             preexec_fn=_limits)
        timer = threading.Timer(WALL_SECONDS, lambda: p.kill())
        timer.start()
        try:
            _, wstatus, usage = os.wait4(p.pid, 0)
        finally:
            timer.cancel()
        p.returncode = 0  # (reaped here: keep Popen from waiting again)
    with open(out_path, "rb") as f:
        stdout = f.read()
    with open(err_path, "rb") as f:
        stderr = f.read()
    sig = os.WTERMSIG(wstatus) if os.WIFSIGNALED(wstatus) else None
    status = os.WEXITSTATUS(wstatus) if os.WIFEXITED(wstatus) else None
    last = stderr.decode("utf-8", errors="replace").replace(scratch + os.sep, "").strip().splitlines()[-1:] or [""]
    return Outcome(status, sig, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024,
                   _raw_control(stdout) or _raw_control(stderr), b"Traceback (most recent call last)" in stderr,
                   b"internal error" in stdout.lower() or b"internal error" in stderr.lower(),
                   b"out of memory" in stderr.lower() or b"MemoryError" in stderr, last[0][:160])


def _argv(run: str, model: str, out: str) -> list:
    if run in CLI_RUNS:
        return [sys.executable, "-m", "irmodel", *(a.format(m=model, o=out) for a in CLI_RUNS[run])]
    return [sys.executable, "-c", _CHILD.format(call=API_RUNS[run]), model, out]


def sweep(cases: list, runs: list, small: bool, log=print, jobs: int = 1) -> dict:
    """``{case name: {run: Outcome}}`` for ``cases`` (`hostile_models.Case`) and ``runs``.

    ``jobs``: children run at once (each in a scratch directory of its own).  The limits
    are per child and CPU time is the child's own, so two children on two cores measure
    what one does (the tests run two; the recorded sweep runs one, to be comparable)."""
    from concurrent.futures import ThreadPoolExecutor  # noqa: PLC0415

    results: dict = {}
    with tempfile.TemporaryDirectory(prefix="hostile-sweep-") as tmp:
        for case in cases:
            cdir = os.path.join(tmp, case.name)
            os.mkdir(cdir)
            size = case.small if small else case.full
            started = time.perf_counter()
            data = case.bytes_at(size, cdir)
            model = os.path.join(cdir, "model.onnx")
            with open(model, "wb") as f:
                f.write(data)
            log(f"{case.name}: {len(data):,} bytes (size {size:,}), built in {time.perf_counter() - started:.1f} s")

            def one(numbered: tuple) -> Outcome:
                k, run = numbered
                rdir = os.path.join(tmp, f"run{k}")
                odir = os.path.join(rdir, "out")
                os.makedirs(odir)
                try:
                    return run_child(_argv(run, model, os.path.join(odir, "model.onnx")), tmp, rdir)
                finally:
                    shutil.rmtree(rdir, ignore_errors=True)

            with ThreadPoolExecutor(max(1, jobs)) as pool:
                outcomes = list(pool.map(one, enumerate(runs)))
            results[case.name] = {}
            for run, outcome in zip(runs, outcomes):
                results[case.name][run] = outcome
                log(f"  {run:<28} {outcome.cell()}" + ("" if outcome.passed else f"  {outcome.note}"))
            shutil.rmtree(cdir, ignore_errors=True)
    return results


def table(results: dict, runs: list) -> str:
    """The markdown table: a row per case, a column per run."""
    lines = ["| case | " + " | ".join(runs) + " |", "|---|" + "---|" * len(runs)]
    for name, outcomes in results.items():
        lines.append(f"| {name} | " + " | ".join(outcomes[r].cell() if r in outcomes else "" for r in runs) + " |")
    return "\n".join(lines)


def failures(results: dict) -> list:
    return [(name, run, o) for name, outcomes in results.items() for run, o in outcomes.items() if not o.passed]


def report(results: dict, runs: list, small: bool) -> str:
    failed = failures(results)
    total = sum(len(o) for o in results.values())
    head = (f"{len(results)} cases x {len(runs)} runs ({'small' if small else 'full'} sizes), "
            f"{total - len(failed)} of {total} runs pass (exit 0/1/2, <= {CPU_SECONDS} s CPU, "
            f"<= {ADDRESS_SPACE >> 30} GiB, clean output).  A cell: exit status (or signal), CPU seconds, "
            "peak RSS in MiB; `ctl`: a raw control character in the output, `tb`: a traceback, "
            "`int`: \"internal error\" in the output, `oom`: out of memory (the limit was reached).")
    body = [head, "", table(results, runs)]
    if failed:
        body += ["", "Failures:", ""]
        body += [f"- {name}, `{run}`: {o.cell().strip('*')} - {o.note or '(no message)'}" for name, run, o in failed]
    return "\n".join(body)


def write_results(text: str, when: str) -> None:
    """Put ``text`` into RESULTS.md between the sweep's markers (appended the first time)."""
    with open(RESULTS, encoding="utf-8") as f:
        doc = f.read()
    section = (f"{BEGIN}\n## Hostile models under limits (issue 31)\n\n"
               f"`python benchmarks/hostile_sweep.py --write` ({when}); every case of "
               "`tests/hostile/hostile_models.py` through every command and its API, each in a child "
               f"process under RLIMIT_AS {ADDRESS_SPACE >> 30} GiB and RLIMIT_CPU {CPU_SECONDS} s.  A child's peak "
               "RSS includes the pages it shared with the sweep when forked (up to about 40 MiB by the last "
               "case): a floor under small numbers, not the command's own.\n\n"
               f"{text}\n{END}")
    if BEGIN in doc and END in doc:
        doc = doc[:doc.index(BEGIN)] + section + doc[doc.index(END) + len(END):]
    else:
        doc = doc.rstrip("\n") + "\n\n" + section + "\n"
    with open(RESULTS, "w", encoding="utf-8") as f:
        f.write(doc)


def main(argv: list | None = None) -> int:
    import hostile_models as hm  # noqa: PLC0415 (tests/hostile, put on the path above)

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--small", action="store_true", help="the cases' small sizes (as CI builds them)")
    p.add_argument("--cases", help="comma-separated case names (default: all)")
    p.add_argument("--runs", help="comma-separated run names (default: all 18)")
    p.add_argument("--write", action="store_true", help="write the table into benchmarks/RESULTS.md")
    p.add_argument("--jobs", type=int, default=1, help="children run at once (default 1)")
    args = p.parse_args(argv)
    cases = hm.CASES if not args.cases else [hm.CASES_BY_NAME[n] for n in args.cases.split(",")]
    runs = RUNS if not args.runs else args.runs.split(",")
    unknown = [r for r in runs if r not in CLI_RUNS and r not in API_RUNS]
    if unknown:
        p.error(f"unknown runs {unknown}; known: {RUNS}")
    results = sweep(cases, runs, args.small, log=lambda s: print(s, file=sys.stderr, flush=True), jobs=args.jobs)
    text = report(results, runs, args.small)
    print(text)
    if args.write:
        write_results(text, time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        traceback.print_exc()
        sys.exit(130)
