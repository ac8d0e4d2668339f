"""The printer and parser against onnx's on the reference corpus (~2,000 models).

Four differential properties, each over every model:
- where onnx's parser rebuilds a model exactly from onnx's text, our text is onnx's,
  character for character;
- our parser reads onnx's text to the message onnx's parser makes;
- ``parse_model(to_text(m))`` serializes to ``m``'s bytes (onnx manages 209 of them);
- onnx's parser reads our text as it reads its own, or rejects it (never a third
  reading: nothing of ours is dropped silently).
"""

from __future__ import annotations

import glob
import os

import pytest

import irmodel
from irmodel.parser import parse_model
from irmodel.printer import to_text

onnx = pytest.importorskip("onnx")
from onnx import parser as onnx_parser, printer as onnx_printer  # noqa: E402


@pytest.fixture(scope="module")
def models(node_corpus) -> list:
    """``[(name, bytes, onnx's text, onnx's reading of it or None)]``."""
    root = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data")
    pairs = list(node_corpus)
    pairs += [(p, open(p, "rb").read()) for p in sorted(glob.glob(os.path.join(root, "**", "*.onnx"), recursive=True))]
    out = []
    for name, data in pairs:
        text = onnx_printer.to_text(onnx.load_from_string(data))
        try:
            back = onnx_parser.parse_model(text).SerializeToString()
        except Exception:  # noqa: BLE001 - onnx cannot read its own text of this model
            back = None
        out.append((name, data, text, back))
    return out


@pytest.mark.slow
def test_text_is_onnx_text_where_onnx_is_exact(models):
    exact = [(n, d, t) for n, d, t, back in models if back == d]
    assert len(exact) >= 200
    wrong = [n for n, d, t in exact if to_text(irmodel.loads(d)) != t]
    assert wrong == []


@pytest.mark.slow
def test_parser_reads_onnx_text_as_onnx_does(models):
    wrong = [n for n, d, t, back in models if back is not None and irmodel.dumps(parse_model(t)) != back]
    assert wrong == []


@pytest.mark.slow
def test_print_then_parse_is_byte_identical(models):
    wrong = [n for n, d, t, back in models if irmodel.dumps(parse_model(to_text(irmodel.loads(d)))) != d]
    assert wrong == []
    assert len(models) > 2000


@pytest.mark.slow
def test_onnx_reads_our_text_as_its_own_or_rejects_it(models):
    read = rejected = 0
    for name, data, text, back in models:
        ours = to_text(irmodel.loads(data))
        try:
            got = onnx_parser.parse_model(ours).SerializeToString()
        except Exception:  # noqa: BLE001 - onnx's ParseError (or its C++ error)
            rejected += 1
            continue
        assert got == back, name
        read += 1
    assert read > 1800  # most of the corpus stays readable by onnx
