"""Differential tests of type and shape inference against the reference, over its corpus.

Every model of the reference corpus (node test cases and the wheel's test models), with
its value_info and graph-output types removed, is inferred by us and by
``onnx.shape_inference.infer_shapes(m, data_prop=True)``, strict and not.  For every
model whose operators all have our inference function (`coverage.missing_ops` is
empty: computed from our registry, not a list of models), the two serializations must
be identical -- every type, every generated ``unk__N`` name -- and where the reference
raises we raise `InferenceError`.  The same runs over versions: each operator of the
corpus is re-run with its model's opset lowered to each older version of the operator.
The uncovered models are counted, not compared (tools/inference_coverage.py lists them).
"""

from __future__ import annotations

import collections
import warnings

import pytest

import irmodel
from irmodel.inference import InferenceError, infer_shapes
from irmodel.inference.coverage import missing_ops

onnx = pytest.importorskip("onnx")


def _strip(model_bytes: bytes) -> bytes:
    m = onnx.load_from_string(model_bytes)
    del m.graph.value_info[:]
    for o in m.graph.output:
        o.ClearField("type")
    return m.SerializeToString()


def _reference(data: bytes, strict: bool):
    """The reference's result; strict mode runs with ``check_type`` too (as a full check does)."""
    from onnx import shape_inference
    try:
        m = onnx.load_from_string(data)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return shape_inference.infer_shapes(m, check_type=strict, strict_mode=strict,
                                                data_prop=True).SerializeToString()
    except Exception as exc:  # noqa: BLE001 - any refusal of the reference counts as "raises"
        return exc


def _ours(data: bytes, strict: bool):
    try:
        return irmodel.dumps(infer_shapes(irmodel.loads(data), check_type=strict, strict_mode=strict,
                                          data_prop=True))
    except InferenceError as exc:
        return exc


@pytest.fixture(scope="module")
def stripped(node_corpus, data_corpus) -> list:
    """``[(name, stripped bytes, covered)]`` for every model of the corpus."""
    out = []
    for name, data in list(node_corpus) + [(p, b) for p, t, b in data_corpus if t == "ModelProto"]:
        s = _strip(data)
        out.append((name, s, not missing_ops(irmodel.loads(s))))
    return out


def _version_variants(node_corpus) -> list:
    """Node models re-stamped with older opsets: two models per (operator, older version)."""
    import onnx.defs
    history = collections.defaultdict(list)
    for s in onnx.defs.get_all_schemas_with_history():
        if s.domain == "" and s.has_type_and_shape_inference_function:
            history[s.name].append(s.since_version)
    picked = collections.Counter()
    out = []
    for name, data in node_corpus:
        m = onnx.load_from_string(data)
        imports = [o for o in m.opset_import if o.domain in ("", "ai.onnx")]
        if len(imports) != 1:
            continue
        current = imports[0].version
        for node in m.graph.node:
            for v in history.get(node.op_type, ()):
                if v < current and picked[(node.op_type, v)] < 2:
                    picked[(node.op_type, v)] += 1
                    imports[0].version = v
                    out.append((f"{name}@opset{v}", _strip(m.SerializeToString())))
                    imports[0].version = current
    return out


@pytest.fixture(scope="module")
def lenient_results(stripped) -> dict:
    """``{name: (reference result, our result)}`` without strict mode, computed once."""
    return {name: (_reference(data, False), _ours(data, False)) for name, data, _ in stripped}


def _compare(models, strict: bool, results: dict | None = None):
    """Run both sides; return (counts, differences of covered models)."""
    counts = collections.Counter()
    diffs = []
    for name, data, covered in models:
        if not covered:
            counts["uncovered"] += 1
            continue
        if results is not None:
            ref, ours = results[name]
        else:
            ref = _reference(data, strict)
            ours = _ours(data, strict)
        if isinstance(ref, Exception):
            if isinstance(ours, InferenceError):
                counts["both raise"] += 1
            else:
                diffs.append((name, f"reference raises {type(ref).__name__}: {str(ref)[:200]}; we do not"))
        elif isinstance(ours, InferenceError):
            diffs.append((name, f"we raise {str(ours)[:300]}; the reference does not"))
        elif ours != ref:
            diffs.append((name, "types differ"))
        else:
            counts["equal"] += 1
    return counts, diffs


@pytest.mark.slow
def test_corpus_models_infer_exactly_as_the_reference(stripped, lenient_results):
    counts, diffs = _compare(stripped, False, lenient_results)
    assert not diffs, f"{len(diffs)} covered models differ: {diffs[:10]}"
    assert counts["equal"] > 2000, counts  # the whole corpus is covered; see tools/inference_coverage.py


@pytest.mark.slow
def test_corpus_models_in_strict_mode_with_type_checks_raise_where_the_reference_raises(stripped, fast_paths):
    counts, diffs = _compare(stripped, True)
    assert not diffs, f"{len(diffs)} covered models differ: {diffs[:10]}"
    assert counts["equal"] > 2000, counts


@pytest.mark.slow
@pytest.mark.parametrize("strict", [False, True], ids=["lenient", "strict"])
def test_older_opsets_infer_exactly_as_the_reference(node_corpus, strict):
    variants = [(n, d, not missing_ops(irmodel.loads(d))) for n, d in _version_variants(node_corpus)]
    counts, diffs = _compare(variants, strict=strict)
    assert not diffs, f"{len(diffs)} covered variants differ: {diffs[:10]}"
    assert counts["equal"] + counts["both raise"] > 500, counts


def _type_check(inferred, true) -> str | None:
    """Why an inferred output type contradicts the true one (None when it does not)."""
    if inferred.WhichOneof("value") is None:
        return None
    if inferred.WhichOneof("value") != true.WhichOneof("value"):
        return "kind"
    if inferred.HasField("tensor_type"):
        it, tt = inferred.tensor_type, true.tensor_type
        if it.elem_type and it.elem_type != tt.elem_type:
            return "element type"
        if it.HasField("shape") and tt.HasField("shape"):
            if len(it.shape.dim) != len(tt.shape.dim):
                return "rank"
            for a, b in zip(it.shape.dim, tt.shape.dim):
                if a.WhichOneof("value") == "dim_value" and b.WhichOneof("value") == "dim_value" \
                        and a.dim_value != b.dim_value:
                    return "dim"
    return None


def _exact(inferred, true) -> bool:
    return irmodel.dumps(inferred) == true.SerializeToString()


def test_ground_truth_no_inferred_output_type_is_wrong(node_corpus, stripped, lenient_results):
    """The node tests' declared outputs are their real types: ours never contradict them.

    "Exact" (the whole type equal to the true one) is counted on the covered models, for
    us and for the reference: at least as many of ours.
    """
    by_name = dict(node_corpus)
    wrong = []
    exact = ref_exact = 0
    for name, data, covered in stripped:
        if name not in by_name:
            continue
        truth = onnx.load_from_string(by_name[name]).graph.output
        ref, ours = lenient_results[name]
        if isinstance(ours, InferenceError):
            continue
        inferred = irmodel.loads(ours).graph.output
        for o, t in zip(inferred, truth):
            why = _type_check(o.type, t.type)
            if why:
                wrong.append((name, o.name, why))
            exact += covered and _exact(o.type, t.type)
        if covered and not isinstance(ref, Exception):
            for o, t in zip(onnx.load_from_string(ref).graph.output, truth):
                ref_exact += o.type.SerializeToString() == t.type.SerializeToString()
    assert not wrong, wrong[:20]
    assert exact >= ref_exact > 1000
