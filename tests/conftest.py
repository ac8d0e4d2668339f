"""Shared fixtures: the reference corpus, built in memory once per session.

The corpus is every node test model of the reference (`onnx.backend.test.case.node`,
about 1,900 models) plus the models and `.pb` tensors shipped under
`onnx/backend/test/data/`.  Nothing of it is committed.
"""

from __future__ import annotations

import glob
import os
import sys
import warnings

import pytest


@pytest.fixture(scope="module", params=["generated scan", "generic scan"])
def scan_path(request):
    """Run a module twice: with the scanners generated per message type (the default) and
    with the generic scan loop alone, so that both decode paths are held to protobuf."""
    from wirefmt import use_generated_scanners

    use_generated_scanners(request.param == "generated scan")
    yield request.param
    use_generated_scanners(True)


@pytest.fixture(params=["fast paths", "message paths"])
def fast_paths(request):
    """Run a test twice: with every byte-level fast path on for every graph (threshold 1)
    and with all of them off (`irmodel._wireview.fastpath.use_fast_paths`), so that both
    ways of reading a graph's items are held to the reference."""
    from irmodel._wireview.fastpath import use_fast_paths

    fast = request.param == "fast paths"
    use_fast_paths(fast, threshold=1)
    yield fast
    use_fast_paths(True)


@pytest.fixture(autouse=True)
def _fast_paths_restored():
    """Whatever a test switched (`use_fast_paths`), the next one starts with the defaults."""
    yield
    switch = sys.modules.get("irmodel._wireview.fastpath")  # (not imported for a test that never used it)
    if switch is not None:
        switch.use_fast_paths(True)


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
