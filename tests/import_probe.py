"""The modules a piece of code leaves imported, run in a fresh interpreter without site
(one home for the tests that pin what a path imports: no message class for a summary
from the bytes, no argparse for the bare ``irmodel inspect PATH``)."""

from __future__ import annotations

import subprocess
import sys

from repo_paths import REPO


def modules_after(code: str, *args: object) -> set:
    """The names in ``sys.modules`` after ``python -S -c code args...`` (run in the
    checkout, which must exit 0)."""
    proc = subprocess.run([sys.executable, "-S", "-c", code + "\nprint(sorted(sys.modules))", *map(str, args)],
                          capture_output=True, text=True, cwd=REPO, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return set(eval(proc.stdout.splitlines()[-1]))  # noqa: S307 - our own repr of a list of names
