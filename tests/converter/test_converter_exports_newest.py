"""The three real-export shapes of issue 28 (benchmarks/exports.py: ResNet-50 and BERT at opset 17,
GPT-2 at 14), made small, converted up to the newest opset and down to 13 and 11: each result
runs in onnxruntime and computes what the original computes on the same inputs.

onnx's converter takes none of them down ("No Adapter From Version 14 for Relu",
"... for Reshape", "No Previous Version of LayerNormalization"); BERT is the one with
LayerNormalization nodes, which opsets below 17 lack and which are decomposed going down.
The GPT-2 and ResNet-50 steps to 11, 13 and 21 are in test_converter_exports.py.
"""

from __future__ import annotations

import numpy as np
import pytest

import irmodel
from irmodel import version_converter as vc
from irmodel.defs import onnx_opset_version

from test_converter_exports import _exports, _run

NEWEST = onnx_opset_version()
#: The newest opset onnxruntime 1.23 accepts ("official support for domain ai.onnx is till
#: opset 23"); the newest (28) is checked with onnx's reference evaluator instead.
ORT_NEWEST = 23


@pytest.fixture(scope="module")
def models():
    ex = _exports()
    bert, _ = ex.bert(layers=2, d=64, heads=4, vocab=100, positions=32)
    gpt2, _ = ex.gpt2(layers=2, d=64, heads=4, vocab=100, positions=32)
    resnet, _ = ex.resnet50(width=8, classes=10)
    return {"bert": irmodel.dumps(bert), "gpt2": irmodel.dumps(gpt2), "resnet": irmodel.dumps(resnet)}


def _feeds(name: str):
    """Token ids within the vocabulary, a 0/1 attention mask with padding (other values
    overflow the exporter's ``(1 - mask) * finfo.min`` to NaN everywhere), token types 0
    and 1; an image for ResNet (None: `_run` makes it)."""
    if name == "resnet":
        return None
    rng = np.random.default_rng(0)
    mask = np.ones((2, 16), np.int64)
    mask[1, 11:] = 0
    feeds = {"input_ids": rng.integers(0, 100, (2, 16)).astype(np.int64), "attention_mask": mask}
    if name == "bert":
        types = np.zeros((2, 16), np.int64)
        types[:, 8:] = 1
        feeds["token_type_ids"] = types
    return feeds


def _same(expected: list, got: list) -> None:
    assert len(got) == len(expected)
    for e, g in zip(expected, got):
        assert np.isfinite(e).all()  # a comparison of NaNs would pass whatever the converter did
        assert g.shape == e.shape
        np.testing.assert_allclose(g, e, rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("name,target", [("bert", ORT_NEWEST), ("bert", 13), ("bert", 11),
                                         ("gpt2", ORT_NEWEST), ("resnet", ORT_NEWEST)])
def test_export_converted_computes_the_same(models, name, target):
    data = models[name]
    expected, feeds = _run(data, _feeds(name))
    out = vc.convert_version(irmodel.loads(data, "ModelProto"), target)
    assert [o.version for o in out.opset_import if o.domain in ("", "ai.onnx")] == [target]
    got, _ = _run(irmodel.dumps(out), feeds)
    _same(expected, got)


@pytest.mark.parametrize("name", ["bert", "gpt2", "resnet"])
def test_export_converted_to_the_newest_opset_evaluates_the_same(models, name):
    """Opset 28, which onnxruntime refuses: onnx's checker (full) and its reference
    evaluator on the converted model, against onnxruntime on the original."""
    onnx = pytest.importorskip("onnx")
    from onnx.reference import ReferenceEvaluator

    data = models[name]
    expected, feeds = _run(data, _feeds(name))
    out = irmodel.dumps(vc.convert_version(irmodel.loads(data, "ModelProto"), NEWEST))
    ref = onnx.load_from_string(out)
    assert [o.version for o in ref.opset_import if o.domain in ("", "ai.onnx")] == [NEWEST]
    onnx.checker.check_model(ref, full_check=True)
    _same(expected, ReferenceEvaluator(ref).run(None, feeds))


def test_bert_down_decomposes_every_layer_normalization(models):
    """Below 17 no node is LayerNormalization, and the weights are the original's, untouched."""
    original = irmodel.loads(models["bert"], "ModelProto")
    assert sum(n.op_type == "LayerNormalization" for n in original.graph.node) == 5  # 1 + 2 per layer
    for target in (13, 11):
        out = vc.convert_version(irmodel.loads(models["bert"], "ModelProto"), target)
        assert not [n for n in out.graph.node if n.op_type == "LayerNormalization"]
        before = {t.name: bytes(t.raw_data) for t in original.graph.initializer}
        after = {t.name: bytes(t.raw_data) for t in out.graph.initializer}
        assert {k: after[k] for k in before} == before
