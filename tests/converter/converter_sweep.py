"""Differential runs of the version converter on the reference's node tests.

For a node test (its model, inputs and expected outputs) and a target opset, `run_pair` converts
the model with onnx's converter and with ours, runs each result in onnxruntime on the
test's inputs and compares with the expected outputs.  Each side's outcome is one of
``right`` (converted, computes the expected outputs), ``reported`` (raised its conversion
error), ``unrunnable`` (converted to a model onnx's full check accepts, for which
onnxruntime has no kernel: Max-6 on double), ``wrong`` (converted, but does not load, run
or compute the expected outputs).
"""

from __future__ import annotations

import warnings

import numpy as np

ORT_MAX_OPSET = 23  # the highest ai.onnx opset onnxruntime 1.23.2 runs
ORT_MIN_OPSET = 7


def node_data() -> dict:
    """name -> (inputs, expected outputs) of every node test whose values are all tensors.

    The reference's node tests carry their data (``data_sets``, made by the same case
    generators that wrote the wheel's ``test_data_set_0/*.pb``)."""
    from onnx.backend.test.case import node

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cases = node.collect_testcases(None)
    out = {}
    for c in cases:
        if not c.data_sets:
            continue
        ins, outs = c.data_sets[0]
        if all(isinstance(x, np.ndarray) for x in list(ins) + list(outs)):
            out[c.name] = (list(ins), list(outs))
    return out


def run(model_bytes: bytes, inputs) -> list | None:
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.log_severity_level = 4
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(model_bytes, so, providers=["CPUExecutionProvider"])
    feed = {i.name: x for i, x in zip(sess.get_inputs(), inputs)}
    return sess.run(None, feed)


def matches(got, expected) -> bool:
    if len(got) != len(expected):
        return False
    for g, e in zip(got, expected):
        g, e = np.asarray(g), np.asarray(e)
        if g.shape != e.shape:
            return False
        if e.dtype.kind in "fc":
            if not np.allclose(g.astype(np.float64), e.astype(np.float64), rtol=1e-3, atol=1e-4,
                               equal_nan=True):
                return False
        elif not np.array_equal(g, e):
            return False
    return True


def source_opset(model) -> int | None:
    for o in model.opset_import:
        if o.domain in ("", "ai.onnx"):
            return o.version
    return None


def baseline_ok(model_bytes: bytes, data) -> bool:
    """Does the unconverted model compute the expected outputs in onnxruntime?"""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return matches(run(model_bytes, data[0]), data[1])
    except Exception:  # noqa: BLE001 - onnxruntime cannot run it: not a usable case
        return False


def outcome(convert, model_bytes: bytes, target: int, data, reported_types) -> tuple[str, str]:
    """(right|reported|wrong, detail) for one converter."""
    try:
        out = convert(model_bytes, target)
    except reported_types as e:
        return "reported", str(e).splitlines()[0][:200]
    except Exception as e:  # noqa: BLE001 - anything else is a wrong answer
        return "wrong", f"raised {type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}"
    try:
        got = run(out, data[0])
    except Exception as e:  # noqa: BLE001
        text = str(e).splitlines()[0][:200]
        if "NOT_IMPLEMENTED" in text and _valid(out):
            # a valid model onnxruntime has no kernel for (Max-6 on double): not a wrong answer
            return "unrunnable", f"onnxruntime: {text}"
        return "wrong", f"onnxruntime: {text}"
    return ("right", "") if matches(got, data[1]) else ("wrong", "outputs differ")


def _valid(model_bytes: bytes) -> bool:
    """Does onnx's checker (full check: inference with its types) accept the model?"""
    import onnx

    try:
        onnx.checker.check_model(onnx.load_from_string(model_bytes), full_check=True)
    except Exception:  # noqa: BLE001 - any rejection
        return False
    return True


def onnx_convert(model_bytes: bytes, target: int) -> bytes:
    import onnx
    from onnx import version_converter

    m = onnx.load_from_string(model_bytes)
    return version_converter.convert_version(m, target).SerializeToString()


def our_convert(model_bytes: bytes, target: int) -> bytes:
    import irmodel
    from irmodel import version_converter

    m = irmodel.loads(model_bytes, "ModelProto")
    return irmodel.dumps(version_converter.convert_version(m, target))


def onnx_errors():
    from onnx import version_converter
    return (version_converter.ConvertError, RuntimeError)


def our_errors():
    from irmodel.version_converter import ConversionError
    return (ConversionError,)


def pairs(node_corpus, every: int = 1, seed: int = 0):
    """(name, bytes, source, target) for the usable cases, every ``every``-th pair."""
    import onnx

    k = 0
    for name, data in node_corpus:
        m = onnx.load_from_string(data)
        src = source_opset(m)
        if src is None:
            continue
        for t in range(ORT_MIN_OPSET, ORT_MAX_OPSET + 1):
            if t == src:
                continue
            k += 1
            if (k + seed) % every == 0:
                yield name, data, src, t
