"""The per-item cost of the checker and inference on the large shapes of issue 31, ours vs onnx.

For each shape, at two sizes (a tenth of the issue's and the issue's: the cost per item
should not grow), each measurement runs in a child process of its own under
``RLIMIT_AS`` 2 GiB and ``RLIMIT_CPU`` 60 s and reports the CPU seconds of the call
alone (the model file is written first; loading it is part of the call, as the commands
load it) and the child's peak RSS:

* ours: ``irmodel.checker.check_model(path)``, ``irmodel.inference.infer_shapes(load(path))``
  and the same with ``data_prop=True``;
* onnx: ``onnx.checker.check_model(path)`` and ``onnx.shape_inference.infer_shapes``
  (``data_prop=True`` too) of ``onnx.load(path)``, where it runs (a failure is shown as
  such: onnx stops at the first problem of a model, or crashes).

Shapes: ``empty_nodes``, ``relu_chain``, ``many_outputs``, ``sparse_rank``,
``initializer_dims`` (tests/hostile/hostile_models.py) and ``residual_mlp``
(benchmarks/exports.py: a normal export of the same order of nodes).  The per-item
cost divides by the shape's items: nodes, outputs or dims.

    python benchmarks/bench_hostile_scale.py [--quick] [--shapes a,b]

``--quick``: sizes a hundredth of the issue's (the test of this script).  Prints a
markdown table with the machine's load average (the machine may be shared).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [ROOT, os.path.join(ROOT, "tests", "hostile"), os.path.join(ROOT, "benchmarks")]

ADDRESS_SPACE = 2 << 30
CPU_SECONDS = 60

#: shape -> (the issue's size, what one item is)
SHAPES = {
    "empty_nodes": (2_000_000, "node"),
    "relu_chain": (200_000, "node"),
    "many_outputs": (100_000, "output"),
    "sparse_rank": (100_000, "dim"),
    "initializer_dims": (100_000, "dim"),
    "residual_mlp": (100_000, "node"),  # ~25 nodes a block: 4,000 blocks
}
#: measurement -> the child's call (``path``: the model file)
CALLS = {
    "ours check": "irmodel.checker.check_model(path)",
    "ours infer": "irmodel.inference.infer_shapes(irmodel.load(path))",
    "ours infer data_prop": "irmodel.inference.infer_shapes(irmodel.load(path), data_prop=True)",
    "onnx check": "onnx.checker.check_model(path)",
    "onnx infer": "onnx.shape_inference.infer_shapes(onnx.load(path))",
    "onnx infer data_prop": "onnx.shape_inference.infer_shapes(onnx.load(path), data_prop=True)",
}

_CHILD = """\
import json, resource, sys, time
sys.path.insert(0, {root!r})
path = sys.argv[1]
import irmodel, irmodel.checker, irmodel.inference{onnx}
ok = True
start = time.process_time()
try:
    {call}
except Exception as exc:
    ok = type(exc).__name__
cpu = time.process_time() - start
print(json.dumps({{"cpu": cpu, "ok": ok, "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}}))
"""


def _build(shape: str, size: int) -> tuple:
    """``(bytes, items)`` of ``shape`` at ``size`` items."""
    if shape == "residual_mlp":
        import exports
        import irmodel

        model, info = exports.residual_mlp(blocks=max(1, size // 25))
        return irmodel.dumps(model), info["nodes"]
    import hostile_models as hm

    return hm.CASES_BY_NAME[shape].build(size), size


def _build_in_child(shape: str, size: int, path: str) -> int:
    """Write ``shape`` at ``size`` to ``path`` from a child process; its items.  (A child
    inherits its parent's peak RSS at the fork: built here, a large model would be counted
    in every measurement after it.)"""
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--build", shape, str(size), path],
                          capture_output=True, text=True, check=True, timeout=600)
    return int(proc.stdout.strip())


def _limits() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))
    resource.setrlimit(resource.RLIMIT_CPU, (CPU_SECONDS, CPU_SECONDS + 1))


def measure(call: str, path: str) -> dict:
    """``{"cpu", "ok", "rss"}`` of one call in a child under the limits (``ok``: True, the
    exception's name, or ``"crash"`` when the child died)."""
    source = _CHILD.format(root=ROOT, call=CALLS[call], onnx=", onnx, onnx.shape_inference"
                           if call.startswith("onnx") else "")
    proc = subprocess.run([sys.executable, "-c", source, path], capture_output=True, text=True,
                          preexec_fn=_limits, timeout=600)
    if proc.returncode != 0 or not proc.stdout.strip():
        return {"cpu": None, "ok": "crash", "rss": None}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _cell(result: dict, items: int) -> str:
    if result["cpu"] is None:
        return "crash"
    per = result["cpu"] / items * 1e6
    text = f"{result['cpu']:.2f} s, {per:.2f} µs, {result['rss']:.0f} MiB"
    return text if result["ok"] is True else f"{text} ({result['ok']})"


def main(argv: list | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="a hundredth of the sizes")
    p.add_argument("--shapes", help="comma-separated shapes (default: all)")
    p.add_argument("--calls", help="comma-separated measurements (default: all)")
    p.add_argument("--build", nargs=3, metavar=("SHAPE", "SIZE", "PATH"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.build:
        data, items = _build(args.build[0], int(args.build[1]))
        with open(args.build[2], "wb") as f:
            f.write(data)
        print(items)
        return 0
    shapes = args.shapes.split(",") if args.shapes else list(SHAPES)
    calls = args.calls.split(",") if args.calls else list(CALLS)
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())} at the start")
    import onnx

    print(f"onnx {onnx.__version__}; a cell: CPU s of the call, CPU µs per item, peak RSS of the child\n")
    print("| shape | items | " + " | ".join(calls) + " |")
    print("|---|---:|" + "---:|" * len(calls))
    with tempfile.TemporaryDirectory(prefix="bench-hostile-scale-") as tmp:
        for shape in shapes:
            full, unit = SHAPES[shape]
            sizes = [full // 1000, full // 100] if args.quick else [full // 10, full]
            for size in sizes:
                path = os.path.join(tmp, f"{shape}-{size}.onnx")
                items = _build_in_child(shape, size, path)
                cells = [_cell(measure(call, path), items) for call in calls]
                print(f"| {shape} | {items:,} {unit}s | " + " | ".join(cells) + " |", flush=True)
                os.unlink(path)
    print(f"\nload average {' '.join(f'{x:.1f}' for x in os.getloadavg())} at the end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
