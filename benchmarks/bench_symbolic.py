"""Benchmark: ``irmodel.infer_shapes(symbolic=True)`` against onnx's ``infer_shapes(data_prop=True)``
on a decoder with a key/value cache (issue 13).

    python benchmarks/bench_symbolic.py [--out DIR] [--nodes N] [--repeat R] [--json]

The model (``tests/symbolic_models.decoder_model``, weights shared between layers) is
generated into ``--out`` when missing: attention blocks with cache concatenations,
Shape -> Gather -> Concat -> Reshape chains, a causal mask from Range and a Slice with
computed bounds, lengths doubled and halved; about 100,000 nodes by default.

Each side runs in a fresh Python process (load + inference, timed inside the child;
the process's wall time too), sides alternating, medians reported.  Each child also
counts the dims of every inferred value (value_info and graph outputs) that are
unknown: no value and no name, or a generated ``unk__`` name.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "tests"))

CHILD = r"""
import json, sys, time
path, side = sys.argv[1], sys.argv[2]
t0 = time.perf_counter()
if side == "irmodel symbolic":
    import irmodel
    m = irmodel.infer_shapes(irmodel.load(path, load_external_data=False), symbolic=True)
elif side == "irmodel data_prop":
    import irmodel
    m = irmodel.infer_shapes(irmodel.load(path, load_external_data=False), data_prop=True)
else:
    import onnx, onnx.shape_inference
    m = onnx.shape_inference.infer_shapes(onnx.load(path), data_prop=True)
t1 = time.perf_counter()
dims = unknown = 0
for vi in list(m.graph.value_info) + list(m.graph.output):
    tt = vi.type.tensor_type
    if not tt.HasField("shape"):
        continue
    for d in tt.shape.dim:
        dims += 1
        if d.HasField("dim_value"):
            continue
        if not d.HasField("dim_param") or d.dim_param.startswith("unk__"):
            unknown += 1
print(json.dumps({"seconds": t1 - t0, "dims": dims, "unknown": unknown, "values": len(m.graph.value_info)}))
"""

SIDES = ("irmodel symbolic", "onnx data_prop")


def build(path: str, nodes: int) -> int:
    from symbolic_models import decoder_model  # noqa: PLC0415
    per_layer = len(decoder_model(1).graph.node)
    layers = max(1, round(nodes / per_layer))
    model = decoder_model(layers, share_weights=True)
    import irmodel  # noqa: PLC0415
    irmodel.save(model, path)
    return len(model.graph.node)


def run_child(path: str, side: str) -> dict:
    start = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", CHILD, path, side], capture_output=True, text=True, check=True,
                         cwd=ROOT)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    result["wall"] = time.perf_counter() - start
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(ROOT, "benchmarks", "out"))
    ap.add_argument("--nodes", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--sides", default=",".join(SIDES), help="comma-separated: " + ", ".join(
        SIDES + ("irmodel data_prop",)))
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, f"decoder_{args.nodes}.onnx")
    if not os.path.exists(path):
        n = build(path, args.nodes)
        print(f"generated {path}: {n} nodes", file=sys.stderr)
    with open(path, "rb") as f:
        f.read()  # warm page cache
    sides = args.sides.split(",")
    runs: dict = {s: [] for s in sides}
    for r in range(args.repeat):
        order = sides if r % 2 == 0 else sides[::-1]
        for side in order:
            runs[side].append(run_child(path, side))
    report = {}
    for side, results in runs.items():
        report[side] = {"seconds": statistics.median(x["seconds"] for x in results),
                        "wall": statistics.median(x["wall"] for x in results),
                        "dims": results[0]["dims"], "unknown": results[0]["unknown"],
                        "values": results[0]["values"]}
    if args.json:
        print(json.dumps(report, indent=1))
        return
    print(f"model: {path} ({os.path.getsize(path)} bytes)")
    for side, r in report.items():
        print(f"{side:20s} infer {r['seconds']:8.2f} s  process {r['wall']:8.2f} s  "
              f"dims {r['dims']:8d}  unknown {r['unknown']:8d}  values {r['values']}")


if __name__ == "__main__":
    main()
