"""Whole-process measurements for the transformation benchmarks (text, converter, surgery).

Each side of a case runs in a fresh Python process (`transform_cases.py`, or irmodel's
command line).  The parent, not the child, measures it:

* wall: from starting the process to its exit (interpreter start, imports, reading and
  writing files included: what a user waits for);
* peak anonymous memory: the highest ``RssAnon`` of ``/proc/PID/status`` the parent saw,
  reading it every 5 ms while the child runs.  The parent samples from outside, so a
  child holding the GIL in C code for seconds (onnx's printer, parser, converter) is
  sampled as often as a Python one, and the child runs no sampling thread of its own;
* peak RSS (``VmHWM``, read just before the child exits: the parent keeps it alive by
  reading the last line it prints), which also counts the pages of mapped files;
* CPU time (user + system, from ``wait4``): on a machine shared with other work, wall time
  includes the time the child waited for a core, CPU time does not.

Sides run alternately, round after round (the first side of a round alternates too), so
that a change of the machine's load hits both; every run is kept, and the tables give
medians with the runs listed.  `machine()` describes the machine, load average included.
"""

from __future__ import annotations

import ast
import os
import platform
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CASES = os.path.join(ROOT, "benchmarks", "transform_cases.py")
MIB = 1 << 20


def _status_kb(pid: int, keys: tuple) -> dict:
    found = {}
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                k, _, v = line.partition(":")
                if k in keys:
                    found[k] = int(v.split()[0])
    except (OSError, ValueError):
        pass
    return found


def child_env() -> dict:
    """The environment of a child: the checkout first on ``sys.path`` (its irmodel)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def run(argv: list, poll: float = 0.005) -> dict:
    """Run ``argv`` (a Python child), sampling its memory; its report (the last line it
    prints, a Python literal, if it is one) plus ``wall``, ``peak_anon`` and ``hwm`` in bytes.

    The child's stdout is a pipe the parent reads only at the end: the child blocks on
    its last write (transform_cases prints one short line, then waits for stdin to close)
    so that ``VmHWM`` is read while the process is still there."""
    import tempfile

    err = tempfile.TemporaryFile()  # a file, not a pipe: a chatty child never blocks on it
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, *argv], stdout=subprocess.PIPE, stderr=err,
                            stdin=subprocess.PIPE, env=child_env())
    peak, hwm = 0, 0
    got = b""
    fd = proc.stdout.fileno()
    os.set_blocking(fd, False)
    while True:
        mem = _status_kb(proc.pid, ("RssAnon", "VmHWM"))
        peak = max(peak, mem.get("RssAnon", 0))
        hwm = max(hwm, mem.get("VmHWM", 0))
        try:
            chunk = os.read(fd, 1 << 16)
        except BlockingIOError:
            chunk = None
        if chunk:
            got += chunk
            if got.endswith(b"\n#done\n"):
                proc.stdin.close()
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            proc.returncode = os.waitstatus_to_exitcode(status)
            break
        time.sleep(poll)
    wall = time.perf_counter() - start
    os.set_blocking(fd, True)
    got += proc.stdout.read()
    err.seek(0)
    stderr = err.read().decode("utf-8", "replace")
    err.close()
    out = got.decode("utf-8", "replace")
    report: dict = {}
    lines = [ln for ln in out.splitlines() if ln.strip() and ln != "#done"]
    if lines:
        try:
            value = ast.literal_eval(lines[-1])
            report = value if isinstance(value, dict) else {}
        except (ValueError, SyntaxError):
            pass
    if proc.returncode != 0:
        report.setdefault("error", (stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1][:300])
    report.update(wall=wall, cpu=usage.ru_utime + usage.ru_stime, peak_anon=peak * 1024, hwm=hwm * 1024,
                  returncode=proc.returncode)
    return report


def alternate(sides: dict, repeat: int, log=None) -> dict:
    """``{side: [run, ...]}``: ``repeat`` rounds, each running every side once; the order
    of the sides is reversed every other round."""
    names = list(sides)
    runs: dict = {n: [] for n in names}
    for r in range(repeat):
        for n in (names if r % 2 == 0 else names[::-1]):
            res = run(sides[n])
            runs[n].append(res)
            if log is not None:
                log(f"  {n} round {r + 1}: {res['wall']:.2f} s, peak anon {res['peak_anon'] / MIB:.0f} MiB"
                    + (f", error: {res['error']}" if res.get("error") else ""))
    return runs


def median(runs: list, key: str) -> float:
    return statistics.median(r[key] for r in runs)


def cell(runs: list, key: str, scale: float = 1.0, fmt: str = "{:.2f}") -> str:
    """``median (run, run, ...)``."""
    values = [r[key] / scale for r in runs]
    text = fmt.format(statistics.median(values))
    return text if len(values) == 1 else text + " (" + ", ".join(fmt.format(v) for v in values) + ")"


def loadavg() -> str:
    try:
        with open("/proc/loadavg") as fh:
            return " ".join(fh.read().split()[:3])
    except OSError:
        return "?"


def machine() -> str:
    """One line: CPU, cores, memory, OS, Python, onnx, irmodel's commit, load average now."""
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as fh:
            cpu = next((ln.split(":", 1)[1].strip() for ln in fh if ln.startswith("model name")), "?")
    except OSError:
        pass
    total = "?"
    try:
        with open("/proc/meminfo") as fh:
            total = f"{int(fh.readline().split()[1]) / (1 << 20):.0f} GiB"
    except (OSError, ValueError, IndexError):
        pass
    try:
        onnx_version = subprocess.run([sys.executable, "-c", "import onnx; print(onnx.__version__)"],
                                      capture_output=True, text=True, check=False).stdout.strip() or "absent"
    except OSError:
        onnx_version = "?"
    try:
        commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, check=False).stdout.strip()
    except OSError:
        commit = "?"
    return (f"{cpu}, {os.cpu_count()} CPUs, {total} RAM; {platform.platform()}; Python "
            f"{platform.python_version()}; onnx {onnx_version}; irmodel {commit}; load average {loadavg()}")


def case_argv(case: str, side: str, *args: str) -> list:
    return [CASES, case, side, *map(str, args)]


def cli_argv(*args: str) -> list:
    """``irmodel ARGS`` as a child (``python -m irmodel``)."""
    return ["-m", "irmodel", *map(str, args)]
