"""Print how much of the reference's type and shape inference we cover.

1. Operator schemas that have an inference function in the reference (``onnx.defs``)
   and whether our registry implements each (by domain).
2. The reference corpus (node test cases and the wheel's test models, value_info and
   output types removed): how many models infer exactly as the reference does, with
   ``data_prop=True``, lenient and strict (strict with ``check_type``).

Usage: ``python tools/inference_coverage.py [--list]`` (needs the ``onnx`` package).
"""

from __future__ import annotations

import collections
import glob
import os
import sys
import time
import warnings


def schema_coverage(show: bool) -> None:
    import onnx.defs
    from irmodel import defs
    from irmodel.inference.coverage import schema_covered
    by_domain = collections.defaultdict(lambda: [0, 0])
    missing = []
    for ref in onnx.defs.get_all_schemas_with_history():
        if not ref.has_type_and_shape_inference_function:
            continue
        ours = defs.get_schema(ref.name, ref.since_version, ref.domain)
        row = by_domain[ref.domain or "ai.onnx"]
        row[0] += 1
        if schema_covered(ours):
            row[1] += 1
        else:
            missing.append(f"{ref.domain or 'ai.onnx'}::{ref.name}-{ref.since_version}")
    total = sum(r[0] for r in by_domain.values())
    done = sum(r[1] for r in by_domain.values())
    print(f"schemas with an inference function: ours {done} / reference {total}")
    for domain, (n, k) in sorted(by_domain.items()):
        print(f"  {domain:28} {k:4} / {n}")
    if missing and show:
        print("missing:", ", ".join(missing))


def corpus() -> list:
    import onnx
    from onnx.backend.test.case import node
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        models = [(c.name, c.model.SerializeToString()) for c in node.collect_testcases(None)]
    root = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data")
    for path in sorted(glob.glob(os.path.join(root, "**", "*.onnx"), recursive=True)):
        with open(path, "rb") as f:
            models.append((os.path.relpath(path, root), f.read()))
    out = []
    for name, data in models:
        m = onnx.load_from_string(data)
        del m.graph.value_info[:]
        for o in m.graph.output:
            o.ClearField("type")
        out.append((name, m.SerializeToString()))
    return out


def corpus_coverage(show: bool) -> None:
    import onnx
    from onnx import shape_inference
    import irmodel
    from irmodel.inference import InferenceError, infer_shapes
    from irmodel.inference.coverage import missing_ops
    models = corpus()
    for strict in (False, True):
        counts = collections.Counter()
        differ = []
        t_ref = t_ours = 0.0
        for name, data in models:
            t = time.perf_counter()
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    ref = shape_inference.infer_shapes(onnx.load_from_string(data), check_type=strict,
                                                       strict_mode=strict, data_prop=True).SerializeToString()
            except Exception:  # noqa: BLE001
                ref = None
            t_ref += time.perf_counter() - t
            t = time.perf_counter()
            try:
                ours = irmodel.dumps(infer_shapes(irmodel.loads(data), check_type=strict, strict_mode=strict,
                                                  data_prop=True))
            except InferenceError:
                ours = None
            t_ours += time.perf_counter() - t
            covered = not missing_ops(irmodel.loads(data))
            if ref == ours:
                counts["same (both raise)" if ref is None else "same"] += 1
            else:
                counts["differ" if covered else "differ (operator not covered)"] += 1
                differ.append(name)
        mode = "strict+check_type" if strict else "lenient"
        print(f"corpus ({len(models)} models, data_prop, {mode}): {dict(counts)}  "
              f"[time: ours {t_ours:.1f} s, reference {t_ref:.1f} s]")
        if differ and show:
            print("  differ:", ", ".join(differ[:50]))


if __name__ == "__main__":
    show = "--list" in sys.argv
    schema_coverage(show)
    corpus_coverage(show)
