"""One check for every file a script in tools/ generates: the script, run with
``--check`` (see tools/generated_file.py), finds the committed file current."""

from __future__ import annotations

import os
import subprocess
import sys

from repo_paths import REPO


def assert_generated_file_is_current(script: str) -> None:
    """``script`` is the generator's file name in tools/, e.g. ``gen_opschemas.py``."""
    done = subprocess.run([sys.executable, os.path.join(REPO, "tools", script), "--check"],
                          capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 0, done.stderr or done.stdout
