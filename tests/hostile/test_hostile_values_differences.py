"""Issue 31, item 3: where our inference and onnx's differ on hostile numbers and ours is
right (docs/differences.md has the rows).

* Range from INT64_MAX to INT64_MIN by INT64_MIN has two elements (INT64_MAX, then -1):
  ours computes ``limit - start`` exactly; onnx computes it in int64, where it overflows
  to 1, and says 0.  Python's ``range`` is the oracle: exact integers.
* GatherND whose indices have the dims [-1, -7] (a negative last dim, which no tensor can
  have): ours infers without reading outside the data's dims; onnx indexes the data's
  dims at -7 and dies of a segmentation fault.
"""

from __future__ import annotations

import subprocess
import sys

import onnx
import pytest

import irmodel
from irmodel import helper as h

from cli_helpers import ROOT, run_cli

INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1


def _range_model(start: int, limit: int, delta: int) -> irmodel.ModelProto:
    inits = [h.make_tensor(n, 7, [], [v]) for n, v in (("s", start), ("l", limit), ("d", delta))]
    g = h.make_graph([h.make_node("Range", ["s", "l", "d"], ["y"])], "g", [],
                     [h.make_tensor_value_info("y", 7, None)], initializer=inits)
    return h.make_model(g, opset_imports=[h.make_opsetid("", 18)])


def _first_dim(model) -> int:
    return model.graph.output[0].type.tensor_type.shape.dim[0].dim_value


# (start, limit, delta) whose limit - start overflows int64 and whose length the double
# arithmetic of the rule gives exactly (the quotient is a small exact double)
OVERFLOWING = [(INT64_MAX, INT64_MIN, INT64_MIN), (INT64_MIN, INT64_MAX, 1 << 62),
               (INT64_MAX, INT64_MIN, -(1 << 62)), (-(1 << 62) - 1, INT64_MAX, 1 << 61)]


@pytest.mark.parametrize("start, limit, delta", OVERFLOWING)
def test_a_range_whose_span_overflows_int64_has_the_exact_length(start, limit, delta):
    model = _range_model(start, limit, delta)
    ours = _first_dim(irmodel.infer_shapes(model, strict_mode=True))
    assert ours == len(range(start, limit, delta)) > 0
    theirs = _first_dim(onnx.shape_inference.infer_shapes(onnx.load_from_string(irmodel.dumps(model))))
    assert theirs != ours  # (onnx wraps limit - start: the difference documented)


def test_the_range_of_the_issue_is_two_elements():
    model = _range_model(INT64_MAX, INT64_MIN, INT64_MIN)
    assert list(range(INT64_MAX, INT64_MIN, INT64_MIN)) == [INT64_MAX, -1]
    assert _first_dim(irmodel.infer_shapes(model)) == 2
    assert _first_dim(irmodel.infer_shapes(model, symbolic=True)) == 2


def _gather_nd_model() -> irmodel.ModelProto:
    g = h.make_graph([h.make_node("GatherND", ["d", "i"], ["y"])], "g",
                     [h.make_tensor_value_info("d", 1, [2, 3]), h.make_tensor_value_info("i", 7, [-1, -7])],
                     [h.make_tensor_value_info("y", 1, None)])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 18)])


def test_gather_nd_with_a_negative_last_index_dim_is_inferred_inside_the_data_dims(tmp_path):
    """The rule takes no index dims from a negative count (it never reads a dim outside
    the data's) and keeps the indices' leading dim as declared: every mode, no error."""
    model = _gather_nd_model()
    for options in ({}, {"strict_mode": True, "check_type": True}, {"data_prop": True}, {"symbolic": True}):
        out = irmodel.infer_shapes(model, **options).graph.output[0].type.tensor_type
        assert [d.dim_value for d in out.shape.dim] == [-1, 2, 3], options
    path = str(tmp_path / "g.onnx")
    irmodel.save(model, path)
    for argv in (["infer", path], ["infer", path, "--strict", "--check-type"], ["infer", path, "--explain"]):
        status, _out, err = run_cli(argv)
        assert status == 0, err


def test_onnx_does_not_survive_the_same_gather_nd(tmp_path):
    """The documented difference: onnx's inference reads the data's dim -7 (a child process:
    it crashes)."""
    path = str(tmp_path / "g.onnx")
    irmodel.save(_gather_nd_model(), path)
    script = f"import onnx; onnx.shape_inference.infer_shapes(onnx.load({path!r}), strict_mode=True); print('ok')"
    p = subprocess.run([sys.executable, "-c", script], capture_output=True, cwd=ROOT, timeout=120)
    assert p.returncode != 0 and b"ok" not in p.stdout
