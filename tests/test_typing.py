"""The packages type-check: mypy (pinned in the ``test`` extra) over wirefmt and irmodel.

Users' type checkers read our hints (both packages ship ``py.typed``), so a hint that
contradicts the code is a defect like any other.  The settings are in setup.cfg's
``[mypy]`` section; the cache (.mypy_cache/) makes re-runs fast.
"""

from __future__ import annotations

import os
import subprocess
import sys

from repo_paths import REPO as ROOT  # noqa: E402


def test_mypy_reports_no_errors() -> None:
    # No skip when mypy is missing: it is a pinned test dependency, and its absence fails here.
    proc = subprocess.run([sys.executable, "-m", "mypy", "-p", "wirefmt", "-p", "irmodel"],
                          cwd=ROOT, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, f"mypy found problems:\n{proc.stdout}{proc.stderr}"
    assert "Success" in proc.stdout, proc.stdout


def test_both_packages_ship_py_typed() -> None:
    for package in ("wirefmt", "irmodel"):
        assert os.path.isfile(os.path.join(ROOT, package, "py.typed")), package
