"""Benchmark: the valid-model generator's pass rates and speed, and the structure mutator's speed.

For seeds ``--first .. --first + --count - 1`` the script builds `random_model(seed)`
(`irmodel.fuzz.generate`) and counts how many pass onnx's ``check_model(full_check=True)``
and how many onnxruntime loads (an ``InferenceSession`` created on the CPU provider), and
how many distinct operators of ai.onnx and ai.onnx.ml the models use (sub-graphs included);
the ten most frequent refusals of each are listed, so a drop in a rate says which
operator to look at.  Also reported: models per CPU second of the generator (our
checker's full check of each model included) and structure mutants per CPU second
(`irmodel.fuzz.structure.custom_mutator` on the sample model).  Nothing is written;
RESULTS.md is edited by hand or by run_all.py.

    python benchmarks/bench_generator.py [--count 2000] [--first 0] [--mutants 2000]

The issue's bars, for ``--count 300``: at least 150 distinct ai.onnx operators, at least
95% pass onnx's full check, at least 90% load in onnxruntime.
"""

from __future__ import annotations

import argparse
import collections
import os
import platform
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from irmodel.fuzz.generate import model_bytes  # noqa: E402
from irmodel.fuzz.sample_model import sample_model_bytes  # noqa: E402
from irmodel.fuzz.structure import custom_mutator  # noqa: E402


def _reason(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text[:120]


def distinct_operators(models: list) -> dict:
    """``{domain: {op_type}}`` over every node of the models, sub-graphs included."""
    import irmodel  # noqa: PLC0415

    found: dict = collections.defaultdict(set)

    def visit(graph) -> None:
        for node in graph.node:
            found[node.domain or "ai.onnx"].add(node.op_type)
            for attr in node.attribute:
                for g in ([attr.g] if attr.HasField("g") else []) + list(attr.graphs):
                    visit(g)

    for data in models:
        visit(irmodel.loads(data).graph)
    return dict(found)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--count", type=int, default=2000, help="models generated (default 2000)")
    p.add_argument("--first", type=int, default=0, help="first seed (default 0)")
    p.add_argument("--mutants", type=int, default=2000, help="structure mutants timed (default 2000)")
    args = p.parse_args(argv)

    import onnx  # noqa: PLC0415
    try:
        import onnxruntime as ort  # noqa: PLC0415
        ort.set_default_logger_severity(4)
    except ImportError:
        ort = None

    start = time.process_time()
    models = [model_bytes(seed, "valid") for seed in range(args.first, args.first + args.count)]
    generated_per_s = len(models) / max(time.process_time() - start, 1e-9)

    ops = distinct_operators(models)
    checked, loaded = 0, 0
    check_refusals: collections.Counter = collections.Counter()
    load_refusals: collections.Counter = collections.Counter()
    for data in models:
        try:
            onnx.checker.check_model(onnx.load_from_string(data), full_check=True)
            checked += 1
        except Exception as exc:  # noqa: BLE001 - every refusal is counted by its message
            check_refusals[_reason(exc)] += 1
        if ort is not None:
            try:
                ort.InferenceSession(data, providers=["CPUExecutionProvider"])
                loaded += 1
            except Exception as exc:  # noqa: BLE001
                load_refusals[_reason(exc)] += 1

    data = sample_model_bytes()
    start = time.process_time()
    for seed in range(args.mutants):
        custom_mutator(data, 1 << 16, seed)
    mutants_per_s = args.mutants / max(time.process_time() - start, 1e-9)

    n = len(models)
    print(f"python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} cores; "
          f"onnx {onnx.__version__}" + (f", onnxruntime {ort.__version__}" if ort else ", no onnxruntime"))
    print(f"seeds {args.first}..{args.first + n - 1}")
    print("| measure | value |")
    print("|---|---:|")
    print(f"| onnx check_model(full_check=True) passes | {checked}/{n} ({100 * checked / n:.1f}%) |")
    if ort is not None:
        print(f"| onnxruntime InferenceSession created | {loaded}/{n} ({100 * loaded / n:.1f}%) |")
    for domain in ("ai.onnx", "ai.onnx.ml"):
        print(f"| distinct {domain} operators | {len(ops.get(domain, ()))} |")
    print(f"| models generated per CPU second | {generated_per_s:.1f} |")
    print(f"| structure mutants per CPU second (sample model) | {mutants_per_s:.1f} |")
    for title, refusals in (("onnx refusals", check_refusals), ("onnxruntime refusals", load_refusals)):
        if refusals:
            print(f"{title}:")
            for reason, count in refusals.most_common(10):
                print(f"  {count:5d}  {reason}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
