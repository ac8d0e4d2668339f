"""Shared fixtures: the reference corpus, built in memory once per session.

The corpus is every node test model of the reference (`onnx.backend.test.case.node`,
about 1,900 models) plus the models and `.pb` tensors shipped under
`onnx/backend/test/data/`.  Nothing of it is committed.
"""

from __future__ import annotations

import glob
import os
import warnings

import pytest


@pytest.fixture(scope="session")
def node_corpus() -> list:
    """``[(name, serialized ModelProto bytes)]`` for every reference node test case."""
    from onnx.backend.test.case import node

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the case generators compute with overflowing numpy
        cases = node.collect_testcases(None)
    return [(c.name, c.model.SerializeToString()) for c in cases]


@pytest.fixture(scope="session")
def data_corpus() -> list:
    """``[(path, type_name, bytes)]`` for the wheel's test models and `.pb` tensor files."""
    import onnx

    root = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data")
    out = []
    for path in sorted(glob.glob(os.path.join(root, "**", "*.onnx"), recursive=True)):
        out.append((path, "ModelProto", open(path, "rb").read()))
    for path in sorted(glob.glob(os.path.join(root, "**", "*.pb"), recursive=True)):
        out.append((path, "TensorProto", open(path, "rb").read()))
    return out


@pytest.fixture(scope="session")
def corpus(node_corpus, data_corpus) -> list:
    """Everything: ``[(name, type_name, bytes)]``."""
    return [(n, "ModelProto", b) for n, b in node_corpus] + list(data_corpus)


@pytest.fixture(scope="session")
def corpus_dir(tmp_path_factory, node_corpus) -> str:
    """The node corpus written to files, for the `load` (mmap) path."""
    d = tmp_path_factory.mktemp("node_corpus")
    for name, data in node_corpus:
        (d / f"{name}.onnx").write_bytes(data)
    return str(d)


def reference_message(type_name: str):
    import onnx

    return getattr(onnx, type_name.split(".")[0])()


def reference_dict(type_name: str, data: bytes) -> dict:
    from google.protobuf import json_format

    ref = reference_message(type_name)
    ref.ParseFromString(data)
    return json_format.MessageToDict(ref, preserving_proto_field_name=True)
