"""Differential runner: the same inputs through several parsers, each in worker processes.

A *target* is a Python function given by an importable ``"module:function"`` name (run
in worker processes, see `irmodel.fuzz._worker`), a command line with ``{file}`` where
the input's path goes (``"mytool --check {file}"``), or a built-in name (`BUILTIN`).
Each input is run by every target; the outcome of one run is one of `OUTCOMES`:

- ``accept`` / ``reject``: returned / raised (for ``ours``, raising anything but our
  documented ``DecodeError`` is ``error``: a bug); a command exited 0 / non-zero;
- ``differs``: accepted, but what it decoded differs from what the other accepting
  targets of its group (the parsers) decoded, by digest;
- ``signal``: the process died of a signal (SIGSEGV, SIGABRT...);
- ``timeout``: no answer within the time limit (the worker is killed);
- ``oom``: ``MemoryError`` under the worker's ``RLIMIT_AS`` (or a C++ ``bad_alloc``).

A dead, killed or out-of-memory worker is replaced and the run goes on.  The `Report`
counts outcomes per target and lists the distinct disagreements (outcome vectors that
are not all the same), each with its first input.
"""

from __future__ import annotations

import json
import os
import select
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import IO, Iterable, Sequence

from ._worker import read_frame, write_frame

OUTCOMES = ("accept", "reject", "differs", "signal", "timeout", "oom", "error")
#: The group whose members' decodings are compared (the protobuf parsers).
PARSERS = "parsers"
_MAX_RESULT = 1 << 20  # a result frame is a small JSON object; anything longer is corruption
_OOM_MARKERS = (b"bad_alloc", b"MemoryError", b"out of memory", b"Cannot allocate memory")


@dataclass(frozen=True)
class Target:
    """One thing to run inputs through.

    Exactly one of ``function`` (``"module:function"``) and ``command`` (an argument list
    with ``"{file}"`` in it) is set.  ``env`` is added to the worker's environment;
    ``group`` names the targets whose decodings are compared (None: not compared);
    ``reject_types``: exception class names that count as rejection (empty: any).
    """

    name: str
    function: str | None = None
    command: tuple | None = None
    env: tuple = ()
    group: str | None = None
    reject_types: tuple = ()

    def __post_init__(self):
        if (self.function is None) == (self.command is None):
            raise ValueError(f"target {self.name}: give a function or a command")


_T = "irmodel.fuzz.targets:"
BUILTIN = {
    "ours": Target("ours", _T + "ours", group=PARSERS, reject_types=("DecodeError",)),
    "ours-roundtrip": Target("ours-roundtrip", _T + "ours_roundtrip", reject_types=("DecodeError",)),
    "upb": Target("upb", _T + "protobuf", env=(("PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION", "upb"),),
                  group=PARSERS),
    "protobuf-python": Target("protobuf-python", _T + "protobuf", group=PARSERS,
                              env=(("PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION", "python"),)),
    "onnx-checker": Target("onnx-checker", _T + "onnx_checker"),
    "onnx-full-checker": Target("onnx-full-checker", _T + "onnx_full_checker"),
    "onnx-shape-inference": Target("onnx-shape-inference", _T + "onnx_shape_inference"),
    "onnxruntime": Target("onnxruntime", _T + "onnxruntime_session"),
}


def onnxruntime_available() -> bool:
    import importlib.util  # noqa: PLC0415
    return importlib.util.find_spec("onnxruntime") is not None


def default_targets() -> list:
    """Every built-in target whose packages are installed (onnxruntime is optional)."""
    names = ["ours", "upb", "protobuf-python", "onnx-checker", "onnx-shape-inference"]
    if onnxruntime_available():
        names.append("onnxruntime")
    return [BUILTIN[n] for n in names]


def parse_target(spec: str) -> Target:
    """A built-in name, ``"module:function"``, or a command with ``{file}``."""
    if spec in BUILTIN:
        return BUILTIN[spec]
    if "{file}" in spec:
        argv = tuple(shlex.split(spec))
        return Target(os.path.basename(argv[0]) if argv else spec, command=argv)
    if ":" in spec and " " not in spec:
        return Target(spec.rpartition(":")[2], function=spec)
    raise ValueError(f"unknown target {spec!r}: a built-in name ({', '.join(BUILTIN)}), "
                     f"module:function, or a command with {{file}}")


@dataclass
class Outcome:
    target: str
    outcome: str
    detail: str = ""
    digest: str | None = None
    seconds: float = 0.0


# -- workers -----------------------------------------------------------------------------

class _Worker:
    """One worker process for a function target; restarted when it dies."""

    def __init__(self, target: Target, memory_limit: int):
        self.target = target
        self.memory_limit = memory_limit
        self.proc: subprocess.Popen[bytes] | None = None
        self.stderr: IO[bytes] | None = None

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def spawn(self) -> None:
        """Start the process (without waiting for it: workers start in parallel)."""
        assert self.target.function is not None  # Runner makes workers for function targets only
        env = dict(os.environ)
        env.update(dict(self.target.env))
        env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
        env.pop("PYTHONFAULTHANDLER", None)  # a crash is reported by its signal, not a dump
        self.stderr = tempfile.TemporaryFile()
        argv = [sys.executable, "-m", "irmodel.fuzz._worker", self.target.function,
                str(self.memory_limit), ",".join(self.target.reject_types)]
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.stderr, env=env)

    def wait_ready(self, timeout: float = 120.0) -> None:
        ready = self._read(timeout)
        if ready is None or not json.loads(ready).get("ready"):
            detail = json.loads(ready).get("detail") if ready else self._stderr_tail().decode("utf-8", "replace")
            self.stop()
            raise RuntimeError(f"target {self.target.name} could not start: {detail}")

    def _read(self, timeout: float) -> bytes | None:
        # called by wait_ready, after spawn opened the pipes
        assert self.proc is not None and self.proc.stdout is not None
        r, _, _ = select.select([self.proc.stdout], [], [], timeout)
        return read_frame(self.proc.stdout) if r else None

    def _stderr_tail(self) -> bytes:
        if self.stderr is None:
            return b""
        self.stderr.seek(0, os.SEEK_END)
        size = self.stderr.tell()
        self.stderr.seek(max(0, size - 4096))
        return self.stderr.read()

    def send(self, data: bytes) -> None:
        if not self.alive():
            self.stop()
            self.spawn()
            self.wait_ready()
        assert self.proc is not None and self.proc.stdin is not None  # alive, or spawned just now
        try:
            write_frame(self.proc.stdin, data)
        except BrokenPipeError:  # died between inputs: its result will say so
            pass

    def fileno(self) -> int:
        # select() asks only workers that were sent an input, so are running
        assert self.proc is not None and self.proc.stdout is not None
        return self.proc.stdout.fileno()

    def collect(self) -> Outcome:
        """The result of the input sent (call when readable, or after the process died)."""
        assert self.proc is not None and self.proc.stdout is not None  # as in fileno
        try:
            body = read_frame(self.proc.stdout, _MAX_RESULT)
        except (OSError, ValueError) as exc:  # a frame no worker writes: give up on this one
            self.kill()
            return Outcome(self.target.name, "error", f"worker protocol broken: {exc}")
        if body is None:
            rc = self.proc.wait()
            tail = self._stderr_tail()
            self.stop()
            if any(m in tail for m in _OOM_MARKERS):
                return Outcome(self.target.name, "oom", f"exit {rc}; out of memory in native code")
            if rc < 0:
                return Outcome(self.target.name, "signal", signal.Signals(-rc).name)
            return Outcome(self.target.name, "error", f"worker exited with status {rc}")
        result = json.loads(body)
        if result["outcome"] == "oom":
            self.stop()
        return Outcome(self.target.name, result["outcome"], result.get("detail", ""), result.get("digest"),
                       result.get("seconds", 0.0))

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
        self.stop()

    def stop(self) -> None:
        if self.proc is not None:
            for f in (self.proc.stdin, self.proc.stdout):
                assert f is not None  # spawn opens both as pipes
                try:
                    f.close()
                except OSError:
                    pass
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.stderr is not None:
            self.stderr.close()
        self.proc = None
        self.stderr = None


class _CommandRun:
    """One run of a command target on one input file."""

    def __init__(self, target: Target, data: bytes, memory_limit: int, workdir: str):
        fd, self.path = tempfile.mkstemp(dir=workdir, suffix=".bin")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        assert target.command is not None  # a target without a function has a command
        argv = [a.replace("{file}", self.path) for a in target.command]
        self.target = target
        self.started = time.perf_counter()

        def limit():  # in the child, before exec
            if memory_limit > 0:
                import resource  # noqa: PLC0415
                resource.setrlimit(resource.RLIMIT_AS, (memory_limit, memory_limit))

        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, preexec_fn=limit)

    def done(self) -> bool:
        return self.proc.poll() is not None

    def collect(self) -> Outcome:
        rc = self.proc.wait()
        os.unlink(self.path)
        seconds = time.perf_counter() - self.started
        if rc < 0:
            return Outcome(self.target.name, "signal", signal.Signals(-rc).name, seconds=seconds)
        return Outcome(self.target.name, "accept" if rc == 0 else "reject", f"exit {rc}" if rc else "",
                       seconds=seconds)

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait()
        os.unlink(self.path)


# -- the runner --------------------------------------------------------------------------

def _mark_differences(outcomes: list, targets: Sequence[Target]) -> None:
    """Accepting members of a group whose digest is not the majority's become ``differs``."""
    groups: dict = {}
    for o, t in zip(outcomes, targets):
        if t.group and o.outcome == "accept" and o.digest is not None:
            groups.setdefault(t.group, []).append(o)
    for members in groups.values():
        counts = Counter(o.digest for o in members)
        if len(counts) < 2:
            continue
        # the majority wins; on a tie, the first target's digest
        best = max(counts.values())
        majority = next(o.digest for o in members if counts[o.digest] == best)
        for o in members:
            if o.digest != majority:
                o.outcome = "differs"
                o.detail = f"decoded content {o.digest} vs {majority}"


@dataclass
class Disagreement:
    vector: tuple  # one outcome per target
    count: int
    example: bytes  # the first input that gave it
    details: tuple  # each target's detail for that input


@dataclass
class Report:
    targets: tuple
    inputs: int = 0
    seconds: float = 0.0
    counts: dict = field(default_factory=dict)  # target -> Counter of outcomes
    target_seconds: dict = field(default_factory=dict)
    disagreements: dict = field(default_factory=dict)  # vector -> Disagreement

    def add(self, data: bytes, outcomes: Sequence[Outcome]) -> None:
        self.inputs += 1
        for o in outcomes:
            self.counts.setdefault(o.target, Counter())[o.outcome] += 1
            self.target_seconds[o.target] = self.target_seconds.get(o.target, 0.0) + o.seconds
        vector = tuple(o.outcome for o in outcomes)
        if len(set(vector)) > 1:
            d = self.disagreements.get(vector)
            if d is None:
                self.disagreements[vector] = Disagreement(vector, 1, data, tuple(o.detail for o in outcomes))
            else:
                d.count += 1

    def format(self) -> str:
        """A plain-text report: a table of outcomes per target, then the disagreements."""
        names = list(self.targets)
        width = max([len(n) for n in names] + [8])
        lines = [f"{self.inputs} inputs in {self.seconds:.1f} s",
                 f"{'target':<{width}} " + " ".join(f"{o:>8}" for o in OUTCOMES) + "  execs/s"]
        for n in names:
            c = self.counts.get(n, Counter())
            busy = self.target_seconds.get(n, 0.0)
            rate = f"{self.inputs / busy:8.0f}" if busy > 0 else "       -"
            lines.append(f"{n:<{width}} " + " ".join(f"{c.get(o, 0):>8}" for o in OUTCOMES) + " " + rate)
        lines.append(f"{len(self.disagreements)} distinct disagreements")
        for d in sorted(self.disagreements.values(), key=lambda d: -d.count):
            lines.append(f"- {d.count} inputs: " + ", ".join(f"{n}={o}" for n, o in zip(names, d.vector)))
            lines.append(f"  first ({len(d.example)} bytes): {d.example[:48].hex()}"
                         + ("..." if len(d.example) > 48 else ""))
            for n, detail in zip(names, d.details):
                if detail:
                    lines.append(f"    {n}: {detail[:160]}")
        return "\n".join(lines)


class Runner:
    """Runs inputs through targets in worker processes; see the module docstring.

    ``jobs`` inputs are in flight at once (each target has ``jobs`` workers).
    ``timeout`` (seconds) and ``memory_limit`` (bytes a target may allocate beyond what
    its worker had after its imports; for commands, the whole address space) apply to
    every run.  Use as a context manager, or call `close`.
    """

    def __init__(self, targets: Iterable[Target | str], *, jobs: int = 1, timeout: float = 10.0,
                 memory_limit: int = 2 << 30):
        self.targets = tuple(t if isinstance(t, Target) else parse_target(t) for t in targets)
        if not self.targets:
            raise ValueError("no targets")
        if len({t.name for t in self.targets}) != len(self.targets):
            raise ValueError("two targets have the same name")
        self.jobs = max(1, jobs)
        self.timeout = timeout
        self.memory_limit = memory_limit
        self._workers = {t.name: [_Worker(t, memory_limit) for _ in range(self.jobs)]
                         for t in self.targets if t.function is not None}
        self._workdir = tempfile.mkdtemp(prefix="irmodel-fuzz-")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self) -> None:
        for workers in self._workers.values():
            for w in workers:
                w.kill()
        try:
            os.rmdir(self._workdir)
        except OSError:
            pass

    def run_one(self, data: bytes) -> tuple:
        """The outcomes of one input, one per target."""
        return self._run_batch([data])[0]

    def run(self, inputs: Iterable[bytes], report: Report | None = None, progress=None) -> Report:
        """Run every input; ``progress(report)`` is called after each batch."""
        report = report or Report(tuple(t.name for t in self.targets))
        start = time.perf_counter()
        batch: list = []
        for data in inputs:
            batch.append(bytes(data))
            if len(batch) == self.jobs:
                self._add(report, batch, start, progress)
                batch = []
        if batch:
            self._add(report, batch, start, progress)
        return report

    def _add(self, report: Report, batch: list, start: float, progress) -> None:
        for data, outcomes in zip(batch, self._run_batch(batch)):
            report.add(data, outcomes)
        report.seconds = time.perf_counter() - start
        if progress is not None:
            progress(report)

    def _run_batch(self, batch: list) -> list:
        results: list[list[Outcome | None]] = [[None] * len(self.targets) for _ in batch]
        starting = [w for workers in self._workers.values() for w in workers[:len(batch)] if not w.alive()]
        for w in starting:  # start every missing worker, then wait for them together
            w.stop()
            w.spawn()
        for w in starting:
            w.wait_ready()
        pending = {}  # worker -> (input index, target index)
        commands = []  # (run, input index, target index)
        for i, data in enumerate(batch):
            for j, t in enumerate(self.targets):
                if t.function is not None:
                    w = self._workers[t.name][i]
                    w.send(data)
                    pending[w] = (i, j)
                else:
                    commands.append((_CommandRun(t, data, self.memory_limit, self._workdir), i, j))
        deadline = time.monotonic() + self.timeout
        while pending or commands:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            if pending:
                ready, _, _ = select.select(list(pending), [], [], min(left, 0.01 if commands else left))
                for w in ready:
                    i, j = pending.pop(w)
                    results[i][j] = w.collect()
            else:
                time.sleep(min(left, 0.005))
            for entry in [c for c in commands if c[0].done()]:
                commands.remove(entry)
                results[entry[1]][entry[2]] = entry[0].collect()
        for w, (i, j) in pending.items():
            w.kill()
            results[i][j] = Outcome(self.targets[j].name, "timeout", f"no answer in {self.timeout:g} s",
                                    seconds=self.timeout)
        for run, i, j in commands:
            run.kill()
            results[i][j] = Outcome(self.targets[j].name, "timeout", f"no answer in {self.timeout:g} s",
                                    seconds=self.timeout)
        for outcomes in results:
            _mark_differences(outcomes, self.targets)
        return [tuple(o) for o in results]


__all__ = ["Runner", "Report", "Target", "Outcome", "Disagreement", "BUILTIN", "OUTCOMES", "PARSERS",
           "parse_target", "default_targets", "onnxruntime_available"]
