"""Benchmark: ``irmodel.infer_shapes(symbolic=True)`` against onnx's ``infer_shapes(data_prop=True)``
on a decoder with a key/value cache (issue 13).

    python benchmarks/bench_symbolic.py [--out DIR] [--nodes N] [--repeat R] [--sides A,B] [--json]

The model (``tests/symbolic_models.decoder_model``, weights shared between layers) is
generated into ``--out`` when missing (not timed): attention blocks with cache
concatenations, Shape -> Gather -> Concat -> Reshape chains, a causal mask from Range and
a Slice with computed bounds, lengths doubled and halved; about 100,000 nodes by default.

Each side runs as a fresh Python process doing what ``irmodel infer PATH -o OUT`` does:
import, load, infer, save the inferred model, exit.  Sides alternate; medians reported.
Measured: inside the child, each phase's wall and CPU time (``import``, ``load``,
``infer``, ``save``); outside, the whole process's wall time and CPU time (user + sys of
the child, from ``wait4``: start-up and teardown included).  The unknown dims are counted
afterwards by one counter for both sides (onnx's reader, not timed) on the saved models:
every dim of every value_info and graph output with no value and no name, or a generated
``unk__`` name.  (Before, the counting ran in the timed child through each side's own
message classes, which made our "whole process" mostly counting.)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "tests"))

CHILD = r"""
import json, sys, time
path, side, out = sys.argv[1], sys.argv[2], sys.argv[3]
phases = {}
t, c = time.perf_counter(), time.process_time()
def lap(name):
    global t, c
    t2, c2 = time.perf_counter(), time.process_time()
    phases[name] = [t2 - t, c2 - c]
    t, c = t2, c2
if side.startswith("irmodel"):
    import irmodel
    lap("import")
    m = irmodel.load(path, load_external_data=False)
    lap("load")
    m = irmodel.infer_shapes(m, symbolic=side == "irmodel symbolic", data_prop=True)
    lap("infer")
    irmodel.save(m, out)
    lap("save")
else:
    import onnx, onnx.shape_inference
    lap("import")
    m = onnx.load(path)
    lap("load")
    m = onnx.shape_inference.infer_shapes(m, data_prop=True)
    lap("infer")
    onnx.save(m, out)
    lap("save")
print(json.dumps(phases))
"""

COUNTER = r"""
import json, sys
import onnx
m = onnx.load(sys.argv[1])
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
print(json.dumps({"dims": dims, "unknown": unknown, "values": len(m.graph.value_info)}))
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


def run_child(path: str, side: str, out: str) -> dict:
    """One side in a fresh process: its phases, whole wall time and CPU time (user + sys, `os.wait4`)."""
    with tempfile.TemporaryFile("w+") as err:
        start = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-c", CHILD, path, side, out], stdout=subprocess.PIPE,
                                stderr=err, text=True, cwd=ROOT)
        stdout = proc.stdout.read()
        proc.stdout.close()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait again
        if proc.returncode:
            err.seek(0)
            raise SystemExit(f"{side} failed:\n{err.read()}")
    phases = json.loads(stdout.strip().splitlines()[-1])
    return {"phases": phases, "wall": wall, "cpu": usage.ru_utime + usage.ru_stime}


def count_unknown(path: str) -> dict:
    out = subprocess.run([sys.executable, "-c", COUNTER, path], capture_output=True, text=True, check=True,
                         cwd=ROOT)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(ROOT, "benchmarks", "out"))
    ap.add_argument("--nodes", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--keep", action="store_true", help="keep the inferred models next to the input")
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
    outputs = {s: os.path.join(args.out, f"decoder_{args.nodes}.{s.replace(' ', '_')}.onnx") for s in sides}
    load = os.getloadavg()[0]
    for r in range(args.repeat):
        order = sides if r % 2 == 0 else sides[::-1]
        for side in order:
            runs[side].append(run_child(path, side, outputs[side]))
    report: dict = {"model": path, "bytes": os.path.getsize(path), "load": [load, os.getloadavg()[0]],
                    "cpus": os.cpu_count(), "sides": {}}
    for side, results in runs.items():
        med = statistics.median
        phases = {name: [med(x["phases"][name][0] for x in results), med(x["phases"][name][1] for x in results)]
                  for name in results[0]["phases"]}
        report["sides"][side] = {"phases": phases, "wall": med(x["wall"] for x in results),
                                 "cpu": med(x["cpu"] for x in results), **count_unknown(outputs[side])}
        if not args.keep:
            os.unlink(outputs[side])
    if args.json:
        print(json.dumps(report, indent=1))
        return
    print(f"model: {path} ({report['bytes']} bytes); load average {load:.2f} -> {os.getloadavg()[0]:.2f} "
          f"on {os.cpu_count()} CPUs; {args.repeat} run(s) per side, medians")
    print("| side | infer wall | infer CPU | import+load+infer wall | process wall | process CPU | dims | unknown |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for side, r in report["sides"].items():
        ph = r["phases"]
        print(f"| {side} | {ph['infer'][0]:.2f} s | {ph['infer'][1]:.2f} s | "
              f"{ph['import'][0] + ph['load'][0] + ph['infer'][0]:.2f} s | {r['wall']:.2f} s | {r['cpu']:.2f} s | "
              f"{r['dims']:,} | {r['unknown']:,} |")
    for side, r in report["sides"].items():
        print(f"{side}: " + ", ".join(f"{k} {v[0]:.2f} s wall / {v[1]:.2f} s CPU" for k, v in r["phases"].items()))


if __name__ == "__main__":
    main()
