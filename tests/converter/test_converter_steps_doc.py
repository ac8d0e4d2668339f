"""docs/version-converter-steps.md is what tools/gen_converter_steps.py writes today."""

from __future__ import annotations

import os
import subprocess
import sys

from repo_paths import REPO as ROOT  # noqa: E402


def test_step_list_is_regenerated_identically(tmp_path):
    out = tmp_path / "steps.md"
    subprocess.run([sys.executable, os.path.join(ROOT, "tools", "gen_converter_steps.py"),
                    "--output", str(out)], check=True, cwd=ROOT)
    with open(os.path.join(ROOT, "docs", "version-converter-steps.md"), encoding="utf-8") as fh:
        committed = fh.read()
    assert out.read_text(encoding="utf-8") == committed
