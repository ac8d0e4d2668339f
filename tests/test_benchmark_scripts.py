"""The benchmark scripts run end to end at a tiny size (no timing is asserted)."""

from __future__ import annotations

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _table_rows(stdout: str) -> list:
    lines = [ln for ln in stdout.splitlines() if ln.startswith("|")]
    return [[c.strip() for c in ln.strip("|").split("|")] for ln in lines]


def test_external_data_benchmark_runs_tiny(tmp_path):
    out = tmp_path / "bench"
    proc = subprocess.run(
        [sys.executable, os.path.join(ROOT, "benchmarks", "bench_external_data.py"),
         "--size-gb", "0.001", "--out", str(out), "--repeat", "1"],
        capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    rows = _table_rows(proc.stdout)
    header, rule, body = rows[0], rows[1], rows[2:]
    assert header[:4] == ["side", "what", "wall (s)", "peak RSS (MiB)"]
    assert set(rule) <= {"---", "---:"}
    assert [r[0] for r in body] == ["irmodel", "onnx", "onnx-lazy"]
    for r in body:
        wall, peak, above = float(r[2]), float(r[3]), float(r[4])
        assert wall > 0 and peak > 0 and above >= 0
        assert r[5].endswith("x") and r[6].endswith("x")
    # every side read the same tensor (the script also checks it against the generator)
    assert len({r[7] for r in body}) == 1
    assert body[0][5] == "1.0x" and body[0][6] == "1.00x"
    assert "machine:" in proc.stdout and "onnx 1." in proc.stdout
    assert not out.exists()  # the generated files are removed unless --keep
