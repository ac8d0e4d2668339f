"""Helpers shared by the surgery tests: running models in onnxruntime, random inputs.

A plain module, not a ``conftest.py``: a second conftest would take the module name
``conftest`` from tests/conftest.py, whose helpers other tests import by that name.
"""

from __future__ import annotations

import numpy as np
import onnxruntime as ort

_NP = {1: np.float32, 2: np.uint8, 3: np.int8, 5: np.int16, 6: np.int32, 7: np.int64, 9: np.bool_,
       10: np.float16, 11: np.float64, 12: np.uint32, 13: np.uint64}


def random_inputs(model_bytes: bytes, seed: int = 0) -> dict | None:
    """Random feeds for the graph inputs of a serialized model (None if a type is unusual)."""
    import onnx

    m = onnx.ModelProto.FromString(model_bytes)
    init = {t.name for t in m.graph.initializer}
    rng = np.random.default_rng(seed)
    feeds = {}
    for vi in m.graph.input:
        if vi.name in init:
            continue
        tt = vi.type.tensor_type
        if not vi.type.HasField("tensor_type") or tt.elem_type not in _NP:
            return None
        shape = [d.dim_value if d.HasField("dim_value") else 2 for d in tt.shape.dim]
        dtype = _NP[tt.elem_type]
        if dtype == np.bool_:
            feeds[vi.name] = rng.integers(0, 2, shape).astype(bool)
        elif np.issubdtype(dtype, np.integer):
            feeds[vi.name] = rng.integers(0, 3, shape).astype(dtype)
        else:
            feeds[vi.name] = rng.standard_normal(shape).astype(dtype)
    return feeds


def run(model: bytes | str, feeds: dict) -> dict:
    """onnxruntime's outputs by name (``model``: serialized bytes or a path)."""
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.log_severity_level = 3
    sess = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    wanted = {i.name for i in sess.get_inputs()}
    return dict(zip(names, sess.run(None, {k: v for k, v in feeds.items() if k in wanted})))


def _assert_same_value(x, y, name: str) -> None:
    """One output: a tensor, or a sequence of them (onnxruntime gives a list), or None (an
    empty optional)."""
    if isinstance(x, list) or isinstance(y, list):
        assert isinstance(x, list) and isinstance(y, list) and len(x) == len(y), name
        for i, (u, v) in enumerate(zip(x, y)):
            _assert_same_value(u, v, f"{name}[{i}]")
        return
    if x is None or y is None:
        assert x is None and y is None, name
        return
    x, y = np.asarray(x), np.asarray(y)
    if x.dtype == object or y.dtype == object:
        np.testing.assert_array_equal(x, y, err_msg=name)
    else:
        np.testing.assert_allclose(x.astype(np.float64), y.astype(np.float64), rtol=1e-5, atol=1e-6, err_msg=name)


def assert_same_results(a: dict, b: dict, names=None) -> None:
    for name in names if names is not None else a:
        _assert_same_value(a[name], b[name], name)
