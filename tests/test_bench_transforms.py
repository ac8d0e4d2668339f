"""benchmarks/bench_transforms.py at its quick size, and the models it derives (no timing is asserted)."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import irmodel

from repo_paths import REPO as ROOT  # noqa: E402

BENCH = os.path.join(ROOT, "benchmarks")


def _bench(name: str):
    sys.path.insert(0, BENCH)
    try:
        return __import__(name)
    finally:
        sys.path.remove(BENCH)


def _run(data: bytes, feeds: dict) -> list:
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.log_severity_level = 4
    return ort.InferenceSession(data, so, providers=["CPUExecutionProvider"]).run(None, feeds)


def _decoder_feeds() -> dict:
    """16 tokens: the generated decoder slices its causal mask with the key's dim -2 after
    the transpose (the head size, 16 here), so it runs only where the two agree."""
    rng = np.random.default_rng(0)
    mask = np.ones((2, 16), np.int64)
    mask[1, 11:] = 0
    return {"input_ids": rng.integers(0, 100, (2, 16)).astype(np.int64), "attention_mask": mask}


def test_functionized_decoder_computes_what_the_original_computes():
    """The inline benchmark's model: every block one call of one local function."""
    exports, tm = _bench("exports"), _bench("transform_models")
    model, _ = exports.gpt2(layers=3, d=64, heads=4, vocab=100, positions=32)
    fm = tm.functionize(model, [f"/transformer/h.{i}/" for i in range(3)], "GPT2Block")
    calls = [n for n in fm.graph.node if n.op_type == "GPT2Block"]
    assert len(calls) == 3 and len(fm.functions) == 1
    assert len(fm.graph.node) == len(model.graph.node) - 3 * len(fm.functions[0].node) + 3
    assert not any(n.name.startswith("/transformer/h.") and n.op_type != "GPT2Block" for n in fm.graph.node)
    feeds = _decoder_feeds()
    expected = _run(irmodel.dumps(model), feeds)
    got = _run(irmodel.dumps(fm), feeds)
    assert np.isfinite(expected[0]).all()
    np.testing.assert_allclose(got[0], expected[0], rtol=1e-5, atol=1e-6)


def test_cut_names_the_block_interface():
    exports, tm = _bench("exports"), _bench("transform_models")
    model, _ = exports.resnet50(width=8, classes=10)
    c = tm.cut(model, "/layer2/")
    assert c["inputs"] == ["/layer1/layer1.2/relu_2/Relu_output_0"]
    assert c["outputs"] == ["/layer2/layer2.3/relu_2/Relu_output_0"]
    assert c["nodes"] == 4 * 7 + 1  # 4 bottlenecks of 3 convs, 3 relus, 1 add; one downsample


@pytest.mark.slow
def test_bench_transforms_quick_runs_every_case(tmp_path):
    proc = subprocess.run([sys.executable, os.path.join(BENCH, "bench_transforms.py"), "--out", str(tmp_path),
                           "--quick", "--repeat", "1", "--json", str(tmp_path / "runs.json")],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "machine (before):" in proc.stdout and "load average" in proc.stdout
    rows = [[c.strip() for c in ln.strip().strip("|").split("|")] for ln in proc.stdout.splitlines()
            if ln.startswith("|")]
    header, body = rows[0], rows[2:]
    assert header[:4] == ["section", "case", "model", "side"]
    cases = [r for r in body if r[0]]
    assert {r[0] for r in cases} == {"text", "convert", "surgery"}
    assert len(cases) == 8 + 6 + 7
    section = None
    for r in body:
        section = r[0] or section
        side, wall, cpu, anon = r[3], r[4], r[5], r[6]
        assert float(wall.split()[0]) > 0 and float(cpu.split()[0]) > 0 and float(anon.split()[0]) > 0, r
        if side == "ours":
            assert "raised" not in wall, r
        elif "raised" in wall:  # onnx raises only where its converter has no adapter going down
            assert section == "convert" and "No Adapter" in wall, r
    import json

    runs = json.loads((tmp_path / "runs.json").read_text())
    assert len(runs["rows"]) == len(cases)
    assert not [p for p in os.listdir(tmp_path / "scratch") if not p.endswith(".txt")]
