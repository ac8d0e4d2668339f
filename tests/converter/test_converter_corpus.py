"""Differential: our converter against onnx's on the reference's node tests, in onnxruntime.

For (node test, target opset) pairs, both converters' results are run in onnxruntime on the
test's inputs and compared with its expected outputs (`converter_sweep`).  What must hold:
ours is never wrong (a model it returns computes the expected outputs, or is one onnx's
full check accepts and onnxruntime has no kernel for: Max-6 on double), and where onnx's
result is right ours is right too, except where the target version cannot express the node
and onnx keeps an attribute the target schema does not have (`DELIBERATE`).  Where onnx
raises, ours converts or reports.  The default run takes a seeded sample of the pairs; the
full sweep (every pair, about 15 minutes on one core) runs with ``IRMODEL_SLOW=1``.
"""

from __future__ import annotations

import collections
import os

import pytest

import converter_sweep as cs

#: Reasons ours reports where onnx's result runs: the node is not valid at the target
#: (onnxruntime's kernels accept more than the schema they are registered for).
DELIBERATE = (
    "is new in version 19",  # Resize coordinate_transformation_mode='half_pixel_symmetric' at 18
)


@pytest.fixture(scope="module")
def node_data():
    return cs.node_data()


def _sweep(node_corpus, node_data, every: int, seed: int):
    counts: collections.Counter = collections.Counter()
    bad = []
    usable: dict = {}
    for name, data, src, target in cs.pairs(node_corpus, every, seed):
        if name not in usable:
            d = node_data.get(name)
            usable[name] = d if d is not None and cs.baseline_ok(data, d) else None
        d = usable[name]
        if d is None:
            continue
        theirs, _ = cs.outcome(cs.onnx_convert, data, target, d, cs.onnx_errors())
        ours, why = cs.outcome(cs.our_convert, data, target, d, cs.our_errors())
        direction = "up" if target > src else "down"
        counts[(direction, theirs, ours)] += 1
        if ours == "wrong" or (theirs == "right" and ours not in ("right", "unrunnable")
                               and not any(r in why for r in DELIBERATE)):
            bad.append((name, src, target, theirs, ours, why))
    return counts, bad


@pytest.mark.slow
def test_sample_of_node_tests_converts_right_or_reports(node_corpus, node_data):
    counts, bad = _sweep(node_corpus, node_data, every=131, seed=3)
    assert sum(counts.values()) > 50
    assert bad == []


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("IRMODEL_SLOW"), reason="the full sweep: IRMODEL_SLOW=1")
def test_every_pair_of_node_tests_converts_right_or_reports(node_corpus, node_data):
    counts, bad = _sweep(node_corpus, node_data, every=1, seed=0)
    for key, n in sorted(counts.items()):
        print(key, n)
    assert bad == []
