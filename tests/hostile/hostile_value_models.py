"""Models for tests/hostile/test_hostile_values_*.py (issue 31, items 1 and 2), at any size.

Each builder gives a `ModelProto` whose size is set by its arguments: the small versions
run in CI in milliseconds, the full ones are the issue's cases (`FULL_SIZE`).  They are
made with `irmodel.helper` only (no onnx), so that they can be built in a child process
under a memory limit too.  `run_forms` runs every command form on a model, in process.
"""

from __future__ import annotations

import math
import re

import irmodel
from irmodel import helper as h
from wirefmt.safetext import MAX_INT_DIGITS

from cli_helpers import run_cli

INT64 = 7
FLOAT = 1


def _model(nodes, inputs, outputs, initializers=(), sparse=(), opset: int = 18) -> irmodel.ModelProto:
    g = h.make_graph(nodes, "g", inputs, outputs, initializer=list(initializers),
                     sparse_initializer=list(sparse))
    return h.make_model(g, opset_imports=[h.make_opsetid("", opset)])


def _shape_of(rank: int, dim: int = 2) -> tuple[list, list]:
    """``x`` of ``rank`` dims of ``dim`` and the node ``s = Shape(x)``."""
    return [h.make_tensor_value_info("x", FLOAT, [dim] * rank)], [h.make_node("Shape", ["x"], ["s"])]


def concat_chain(n: int, rank: int) -> irmodel.ModelProto:
    """``c_k = Concat(c_{k-1}, s)`` for k < n (``c_{-1}`` = s = Shape(x), x of rank ``rank``),
    then ``out = ConstantOfShape(c_{n-1})``: value k has (k+2) * rank elements, and all of them
    are held at once (the issue's 3,000-node chain of rank 100: 124 KB, 3.7 GiB before)."""
    inputs, nodes = _shape_of(rank)
    prev = "s"
    for k in range(n):
        nodes.append(h.make_node("Concat", [prev, "s"], [f"c{k}"], axis=0))
        prev = f"c{k}"
    nodes.append(h.make_node("ConstantOfShape", [prev], ["out"]))
    return _model(nodes, inputs, [h.make_tensor_value_info("out", FLOAT, None)])


def concat_wide(n: int, rank: int) -> irmodel.ModelProto:
    """One Concat of ``n`` copies of ``s = Shape(x)`` (x of rank ``rank``), then
    ConstantOfShape: a value of n * rank elements (the issue's 20,000 inputs: 3.0 GiB)."""
    inputs, nodes = _shape_of(rank, 1)
    nodes.append(h.make_node("Concat", ["s"] * n, ["c"], axis=0))
    nodes.append(h.make_node("ConstantOfShape", ["c"], ["out"]))
    return _model(nodes, inputs, [h.make_tensor_value_info("out", FLOAT, None)])


def add_repeat(n: int, rank: int) -> irmodel.ModelProto:
    """``a_k = Add(s, s)`` ``n`` times over ``s = Shape(x)`` of ``rank`` elements, then
    ConstantOfShape of the last: n values of ``rank`` elements each (the issue's rank
    100,000 repeated 2,000 times ran past 10 s)."""
    inputs, nodes = _shape_of(rank, 1)
    for k in range(n):
        nodes.append(h.make_node("Add", ["s", "s"], [f"a{k}"]))
    nodes.append(h.make_node("ConstantOfShape", [f"a{n - 1}"], ["out"]))
    return _model(nodes, inputs, [h.make_tensor_value_info("out", FLOAT, None)])


def huge_sparse(ndims: int, index: int, coordinates: bool = False) -> irmodel.ModelProto:
    """A sparse initializer of ``ndims`` dense dims of 2**62 (their product has ndims * 18.7
    digits: 300 of them make the issue's 5,600-digit number) with one value at ``index``
    (linear, or the same index on every axis with ``coordinates``)."""
    values = h.make_tensor("v", FLOAT, [1], [1.0])
    if coordinates:
        indices = h.make_tensor("i", INT64, [1, ndims], [index] * ndims)
    else:
        indices = h.make_tensor("i", INT64, [1], [index])
    sparse = h.make_sparse_tensor(values, indices, [1 << 62] * ndims)
    return _model([h.make_node("Identity", ["v"], ["o"])], [], [h.make_tensor_value_info("o", FLOAT, [1])],
                  sparse=[sparse])


def float_input_model(op: str, value: float) -> irmodel.ModelProto:
    """A node of ``op`` whose size-like input comes from a float constant holding ``value``
    (a scale, a window size, a depth, a DFT or frame length, a step)."""
    x4 = [h.make_tensor_value_info("x", FLOAT, [1, 1, 4, 4])]
    sig = [h.make_tensor_value_info("x", FLOAT, [1, 64, 1])]
    out = [h.make_tensor_value_info("y", FLOAT, None)]
    scalar = h.make_tensor("n", FLOAT, [], [value])
    if op == "Resize":
        return _model([h.make_node("Resize", ["x", "", "sc"], ["y"])], x4, out,
                      [h.make_tensor("sc", FLOAT, [4], [1.0, 1.0, value, 2.0])])
    if op == "HannWindow":
        return _model([h.make_node("HannWindow", ["n"], ["y"])], [], out, [scalar], opset=17)
    if op == "OneHot":
        return _model([h.make_node("OneHot", ["i", "n", "vals"], ["y"])],
                      [h.make_tensor_value_info("i", INT64, [3]), h.make_tensor_value_info("vals", FLOAT, [2])],
                      out, [scalar])
    if op == "DFT":
        return _model([h.make_node("DFT", ["x", "n"], ["y"])], [h.make_tensor_value_info("x", FLOAT, [1, 8, 1])],
                      out, [scalar], opset=17)
    if op == "STFT":  # frame_length
        return _model([h.make_node("STFT", ["x", "st", "", "n"], ["y"])], sig, out,
                      [h.make_tensor("st", FLOAT, [], [4.0]), scalar], opset=17)
    if op == "STFT-step":
        return _model([h.make_node("STFT", ["x", "n", "", "fl"], ["y"])], sig, out,
                      [scalar, h.make_tensor("fl", FLOAT, [], [16.0])], opset=17)
    raise ValueError(op)


FLOAT_OPS = ("Resize", "HannWindow", "OneHot", "DFT", "STFT", "STFT-step")
HOSTILE_FLOATS = (math.inf, -math.inf, math.nan, 1e300, -1e300, 3e38, 9.3e18, 0.0)

#: The issue's cases at full size: (builder, arguments).
FULL_SIZE = {
    "concat-chain": (concat_chain, (3000, 100)),
    "concat-wide": (concat_wide, (20000, 20000)),
    "add-rank-100000": (add_repeat, (2000, 100000)),
    "add-in-flight": (add_repeat, (2000, 4096)),
}


# -- every command on a model ------------------------------------------------------------------

#: Each command form run on the hostile files (``OUT`` stands for an output path).
FORMS = (["check"], ["check", "--json"], ["infer"], ["infer", "--data-prop"],
         ["infer", "--strict", "--check-type"], ["infer", "--symbolic"], ["infer", "--explain"],
         ["infer", "--explain", "--data-prop"], ["infer", "-o", "OUT"])
#: A run of more digits than any message may hold.
LONG_DIGITS = re.compile(r"\d{%d,}" % (MAX_INT_DIGITS + 1))


def unprintable(text: str) -> list:
    return sorted({c for c in text if not c.isprintable() and c != "\n"})


def run_forms(tmp_path, model, forms=FORMS) -> dict:
    """Every command form on ``model`` in process: exit 0, 1 or 2, printable output, no
    digit run longer than `MAX_INT_DIGITS`.  Returns the statuses by form."""
    path = str(tmp_path / "m.onnx")
    irmodel.save(model, path)
    statuses = {}
    for form in forms:
        argv = [form[0], path, *[str(tmp_path / "out.onnx") if a == "OUT" else a for a in form[1:]]]
        status, out, err = run_cli(argv)
        assert status in (0, 1, 2), (form, status, err[-500:])
        assert "Traceback" not in err and "internal error" not in err, (form, err[-500:])
        assert not unprintable(out) and not unprintable(err), form
        assert not LONG_DIGITS.search(out + err), (form, (out + err)[:300])
        statuses[" ".join(form)] = status
    return statuses
