"""Every command, in process, over thousands of hostile inputs (issue 14).

Inputs: seeded mutants of a rich model (sub-graphs, a function, tensors of every element
type, sparse and string tensors, external data beside the model and in a
sub-directory), and the hand-built hostile models of `rich_mutants.hand_built` (one
or more per class of the issue).  For each input, every command runs through
``irmodel.cli.main`` with its output captured, and must:

* exit with 0, 1 or 2, never 3 ("a bug in irmodel");
* print no character that is not printable (but the newlines we write) on stdout or
  stderr: whatever the model holds, no control or format character reaches a terminal;
* finish within `PER_INPUT_SECONDS` (a watchdog against hangs and quadratic blow-ups,
  many times what an input takes; not a performance measurement).
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import signal
import tempfile

import pytest

import irmodel
from irmodel import cli

import rich_mutants as hm
from cli_helpers import run_cli

#: Mutants of the rich model run through every command (seeded, reproducible).
MUTANTS = 1000
SEED = 14
#: The watchdog: an input whose commands together take longer than this is reported.
PER_INPUT_SECONDS = 30.0

#: Each mutant runs every command that reads, in one of its forms (the forms take turns).
COMMAND_FORMS = ((["inspect"], ["inspect", "--json"]), (["dump"], ["dump", "--json"]),
                 (["raw"], ["raw", "--offsets"]), (["check"], ["check", "--json"]),
                 (["infer"], ["infer", "--json"], ["infer", "--strict", "--check-type", "--data-prop"]))
READ_COMMANDS = tuple(form for forms in COMMAND_FORMS for form in forms)
#: And one of the commands that write (``OUT`` stands for the output path).
WRITE_COMMANDS = (["convert", "OUT"], ["convert", "OUT", "--single-file"],
                  ["convert", "OUT", "--external-data", "--size-threshold", "0"],
                  ["convert", "OUT", "--external-data", "--file-per-tensor", "--size-threshold", "0"],
                  ["infer", "-o", "OUT"])


class _TooSlow(BaseException):
    """Raised by the watchdog; a BaseException so that the CLI's last-resort handler
    (``except Exception``) cannot turn it into an exit status."""


def _unprintable(text: str) -> list:
    return sorted({c for c in text if not c.isprintable() and c != "\n"})


@contextlib.contextmanager
def watchdog(seconds: float, what: str):
    def fire(signum, frame):
        raise _TooSlow(f"{what}: still running after {seconds} s")

    old = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def check_every_command(path: str, out_dir: str, write_commands, label: str,
                        read_commands=READ_COMMANDS, statuses: dict | None = None) -> list:
    """Run the read and the write commands on ``path``; the failures.  ``statuses``
    counts the exit statuses of ``inspect``."""
    failures = []
    out = os.path.join(out_dir, "out.onnx")
    runs = [[*c, path] for c in read_commands]
    runs += [[command[0], path, *[out if a == "OUT" else a for a in command[1:]]] for command in write_commands]
    with watchdog(PER_INPUT_SECONDS, label):
        for argv in runs:
            status, out, err = run_cli(argv)
            if statuses is not None and argv[0] == "inspect":
                statuses[status] = statuses.get(status, 0) + 1
            bad = _unprintable(out) + _unprintable(err)
            if status not in (0, 1, 2) or bad:
                failures.append((label, [a for a in argv if a != path], status, bad, err[-300:]))
    return failures


@pytest.fixture(scope="module")
def scratch():
    """A directory for the inputs: tmpfs when there is one (convert fsyncs its output)."""
    base = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    d = tempfile.mkdtemp(prefix="irmodel-hostile-", dir=base)
    yield d
    shutil.rmtree(d, ignore_errors=True)


def _fresh_out(scratch: str) -> str:
    out = os.path.join(scratch, "out")
    shutil.rmtree(out, ignore_errors=True)
    os.mkdir(out)
    return out


@pytest.mark.slow
def test_every_command_on_thousands_of_mutants_of_a_rich_model(scratch):
    model = hm.rich_model(scratch)
    base = irmodel.dumps(model)
    strings = hm.model_strings(model)
    path = os.path.join(scratch, "m.onnx")
    failures, statuses = [], {0: 0, 1: 0, 2: 0}
    for i, data in enumerate(hm.mutants(base, strings, MUTANTS, SEED)):
        with open(path, "wb") as f:
            f.write(data)
        out = _fresh_out(scratch) if i % 50 == 0 else os.path.join(scratch, "out")
        forms = [forms[i % len(forms)] for forms in COMMAND_FORMS]
        write = WRITE_COMMANDS[i % len(WRITE_COMMANDS)]
        failures += check_every_command(path, out, [write], f"mutant {i} (seed {SEED})", forms,
                                        statuses)
        if len(failures) > 20:
            break
    assert not failures, failures[:20]
    # The mutants reach past the decoder: many still decode as models, many do not.
    assert statuses[0] > MUTANTS // 5 and statuses[1] > MUTANTS // 10, statuses


def test_every_command_on_each_hand_built_hostile_model(scratch):
    models = hm.hand_built(scratch)
    failures = []
    for name, data in sorted(models.items()):
        path = os.path.join(scratch, f"{name}.onnx")
        with open(path, "wb") as f:
            f.write(data)
        failures += check_every_command(path, _fresh_out(scratch), WRITE_COMMANDS, name)
    assert not failures, failures


def test_the_checks_catch_what_they_look_for(scratch, monkeypatch):
    """The harness itself: a raw control character and a status 3 are both reported."""
    path = os.path.join(scratch, "control.onnx")
    with open(path, "wb") as f:
        f.write(hm.with_strings(op_type=hm.CONTROL_TEXT.encode()))
    import wirefmt.safetext as safetext

    monkeypatch.setattr(safetext, "_escaped", lambda text, specials="": text)  # escaping off
    failures = check_every_command(path, _fresh_out(scratch), [], "control, escaping off")
    assert any("\x1b" in f[3] for f in failures)
    monkeypatch.undo()
    import irmodel._report.summary as summary

    monkeypatch.setattr(summary, "summarize", lambda *a, **k: 1 / 0)
    failures = check_every_command(path, _fresh_out(scratch), [], "broken inspect")
    assert any(f[2] == 3 for f in failures)
