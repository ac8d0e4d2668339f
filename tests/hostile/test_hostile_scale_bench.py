"""benchmarks/bench_hostile_scale.py runs end to end at a tiny size (no timing is asserted)."""

from __future__ import annotations

import os
import subprocess
import sys

from repo_paths import REPO


def test_hostile_scale_benchmark_runs_tiny():
    proc = subprocess.run(
        [sys.executable, os.path.join(REPO, "benchmarks", "bench_hostile_scale.py"), "--quick",
         "--shapes", "empty_nodes", "--calls", "ours check,onnx check"],
        capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    rows = [[c.strip() for c in ln.strip("|").split("|")] for ln in proc.stdout.splitlines() if ln.startswith("|")]
    assert rows[0] == ["shape", "items", "ours check", "onnx check"]
    assert [r[:2] for r in rows[2:]] == [["empty_nodes", "2,000 nodes"], ["empty_nodes", "20,000 nodes"]]
    for r in rows[2:]:
        # both refuse the model: ours lists its problems, onnx stops at the first
        assert r[2].endswith("(ValidationError)") and r[3].endswith("(ValidationError)") and " µs, " in r[2]
    assert "load average" in proc.stdout
