"""benchmarks/bench_symbolic.py runs end to end at a tiny size (no timing is asserted).

It checks what the benchmark reports besides times: both sides infer the same values,
the unknown dims are counted by one counter on the saved models (every dim known on our
side, the reference leaving the concatenated lengths unknown), and the inferred models
are removed unless ``--keep``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from repo_paths import REPO as ROOT  # noqa: E402


def test_symbolic_benchmark_runs_tiny(tmp_path):
    proc = subprocess.run(
        [sys.executable, os.path.join(ROOT, "benchmarks", "bench_symbolic.py"), "--nodes", "150",
         "--out", str(tmp_path), "--json"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    ours, ref = report["sides"]["irmodel symbolic"], report["sides"]["onnx data_prop"]
    for side in (ours, ref):
        assert set(side["phases"]) == {"import", "load", "infer", "save"}
        assert all(wall >= 0 and cpu >= 0 for wall, cpu in side["phases"].values())
        assert side["wall"] > 0 and side["cpu"] > 0
    assert ours["dims"] == ref["dims"] > 0 and ours["values"] == ref["values"] > 0
    assert ours["unknown"] == 0 < ref["unknown"]
    assert sorted(os.listdir(tmp_path)) == ["decoder_150.onnx"]  # inferred models removed
