"""Running the command line from tests: as a user does (a subprocess) or in process.

One home for these, used by the tests of every command (tests/cli/, tests/checker/,
tests/hostile/).
"""

from __future__ import annotations

import contextlib
import io
import subprocess
import sys

from irmodel import cli
from repo_paths import LENET, REPO as ROOT  # noqa: F401 (LENET: re-exported for the tests)


def run(*args, input: bytes | None = None, timeout: float = 60, **kw) -> subprocess.CompletedProcess:
    """Run the CLI; stdout and stderr as text.  Never a traceback, whatever happened."""
    p = subprocess.run([sys.executable, "-m", "irmodel", *args], input=input, capture_output=True,
                       cwd=ROOT, timeout=timeout, **kw)
    p.stdout = p.stdout.decode("utf-8")
    p.stderr = p.stderr.decode("utf-8")
    assert "Traceback" not in p.stderr, p.stderr
    return p


def assert_fails(p, status: int, *fragments: str) -> None:
    """Exit ``status`` with exactly one line on stderr, prefixed ``irmodel:``, saying ``fragments``."""
    assert p.returncode == status, (p.returncode, p.stderr)
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("irmodel: "), p.stderr
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])


def run_cli(argv: list) -> tuple[int, str, str]:
    """``(status, stdout, stderr)`` of one command, in process."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = cli.main(argv)
    return status, out.getvalue(), err.getvalue()
