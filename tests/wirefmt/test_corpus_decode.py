"""Differential: our dict form equals protobuf's MessageToDict on the whole reference corpus."""

from __future__ import annotations

import os

import pytest

import irmodel
from reference_helpers import reference_dict

#: Every test here runs with the generated scanners and with the generic scan loop.
pytestmark = pytest.mark.usefixtures("scan_path")


def _mismatches(items, decode):
    bad = []
    for name, type_name, data in items:
        if irmodel.to_dict(decode(name, type_name, data)) != reference_dict(type_name, data):
            bad.append(name)
    return bad


def test_to_dict_matches_reference_through_loads(corpus):
    bad = _mismatches(corpus, lambda n, t, d: irmodel.loads(d, t))
    assert bad == [], f"{len(bad)} of {len(corpus)} differ, e.g. {bad[:5]}"


def test_to_dict_matches_reference_through_load_of_node_models(node_corpus, corpus_dir):
    items = [(os.path.join(corpus_dir, f"{n}.onnx"), "ModelProto", d) for n, d in node_corpus]
    bad = _mismatches(items, lambda path, t, d: irmodel.load(path))
    assert bad == [], f"{len(bad)} of {len(items)} differ, e.g. {bad[:5]}"


def test_to_dict_matches_reference_through_load_of_wheel_files(data_corpus):
    bad = _mismatches(data_corpus, lambda path, t, d: irmodel.load(path, type_name=t))
    assert bad == [], f"{len(bad)} differ, e.g. {bad[:5]}"


def test_load_accepts_file_objects_with_and_without_fileno(node_corpus, corpus_dir):
    import io

    name, data = node_corpus[0]
    expected = reference_dict("ModelProto", data)
    with open(os.path.join(corpus_dir, f"{name}.onnx"), "rb") as fh:
        assert irmodel.to_dict(irmodel.load(fh)) == expected
    assert irmodel.to_dict(irmodel.load(io.BytesIO(data))) == expected


def test_loads_accepts_bytearray_and_memoryview(node_corpus):
    name, data = node_corpus[1]
    expected = reference_dict("ModelProto", data)
    assert irmodel.to_dict(irmodel.loads(bytearray(data))) == expected
    assert irmodel.to_dict(irmodel.loads(memoryview(data))) == expected
    padded = b"xx" + data + b"yy"
    assert irmodel.to_dict(irmodel.loads(memoryview(padded)[2:-2])) == expected


def test_bytes_fields_are_zero_copy_views_into_the_mapped_file(tmp_path):
    import mmap

    t = irmodel.TensorProto(name="w", dims=[4], data_type=1, raw_data=bytes(range(16)))
    path = tmp_path / "t.pb"
    irmodel.save(t, str(path))
    loaded = irmodel.load(str(path), type_name="TensorProto")
    raw = loaded.raw_data
    assert isinstance(raw, memoryview) and raw.readonly
    assert isinstance(raw.obj, mmap.mmap)
    assert raw.tobytes() == bytes(range(16))
