"""Real-export shapes (benchmarks/exports.py): GPT-2 at opset 14 and ResNet-50 at 17, made
small, converted down and up; the results must compute what the originals compute in
onnxruntime.  onnx's converter takes neither below its opset ("No Adapter From Version 14
for Relu", "... for Reshape")."""

from __future__ import annotations

import importlib.util
import os

import numpy as np
import pytest

import irmodel
from irmodel import version_converter as vc

from repo_paths import REPO as _ROOT  # noqa: E402


def _exports():
    spec = importlib.util.spec_from_file_location(
        "_bench_exports", os.path.join(_ROOT, "benchmarks", "exports.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def models():
    ex = _exports()
    gpt2, _ = ex.gpt2(layers=2, d=64, heads=4, vocab=100, positions=32)
    resnet, _ = ex.resnet50(width=8, classes=10)
    return {"gpt2": irmodel.dumps(gpt2), "resnet": irmodel.dumps(resnet)}


def _run(data: bytes, feeds=None):
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.log_severity_level = 4
    s = ort.InferenceSession(data, so, providers=["CPUExecutionProvider"])
    if feeds is None:
        rng = np.random.default_rng(0)
        feeds = {}
        for i in s.get_inputs():
            shape = [d if isinstance(d, int) else (1 if k == 0 else 16) for k, d in enumerate(i.shape)]
            if "int64" in i.type:  # token ids below the vocabulary; a mask of ones (a random one overflows)
                feeds[i.name] = (np.ones(shape, np.int64) if "mask" in i.name
                                 else rng.integers(0, 50, shape).astype(np.int64))
            else:
                feeds[i.name] = rng.standard_normal(shape).astype(np.float32)
    return s.run(None, feeds), feeds


@pytest.mark.parametrize("name,target", [("gpt2", 11), ("gpt2", 13), ("gpt2", 21),
                                         ("resnet", 7), ("resnet", 13), ("resnet", 21)])
def test_export_converts_and_computes_the_same(models, name, target):
    data = models[name]
    expected, feeds = _run(data)
    assert all(np.isfinite(e).all() for e in expected), "the original computes NaN or inf: nothing to compare"
    out = vc.convert_version(irmodel.loads(data, "ModelProto"), target)
    got, _ = _run(irmodel.dumps(out), feeds)
    for e, g in zip(expected, got):
        np.testing.assert_allclose(g, e, rtol=1e-3, atol=1e-4)


def test_gpt2_below_10_reports_each_computed_slice_bound(models):
    """Slice-1 takes its bounds as attributes; the exporter computes them (Shape chains)."""
    with pytest.raises(vc.ConversionError) as info:
        vc.convert_version(irmodel.loads(models["gpt2"], "ModelProto"), 9)
    problems = info.value.problems
    assert problems and {p.op_type for p in problems} == {"Slice"}
    assert all(p.code == "V002" for p in problems)
