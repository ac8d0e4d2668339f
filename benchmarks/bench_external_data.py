"""Benchmark: read one small tensor of a model with gigabytes of external data.

Generates (from a fixed seed, reproducibly) a model whose external data file holds a few
big float32 tensors totalling ``--size-gb`` and, after them, one small tensor.  Then, in a
fresh Python process per measurement, times and measures peak RSS for:

* ``irmodel``: ``irmodel.load(path)`` + ``irmodel.to_array(small)`` (lazy: maps the data
  file, touches only the small tensor's pages);
* ``onnx``: ``onnx.load(path)`` (reads all external data) + ``numpy_helper.to_array``;
* ``onnx lazy``: ``onnx.load(path, load_external_data=False)`` +
  ``load_external_data_for_tensor(small, dir)`` + ``numpy_helper.to_array``.

Wall time covers the load and the read, not the interpreter start or the imports (each
side imports its array helpers, ``irmodel.tensors`` / ``onnx.numpy_helper``, first); peak
RSS is ``ru_maxrss`` of the child, also shown as the growth above the high-water mark
its imports left (so ~0 means "no more memory than importing took").
The generator runs in a process of its own too (see `generate_in_child`).  The data
file is written in chunks (never held in memory) and deleted afterwards unless
``--keep``.  Prints a markdown table (ratios against irmodel) and the machine details.

    python benchmarks/bench_external_data.py --size-gb 3 --out /tmp/bench

``run_all.py`` runs this measurement (`generate`, `child_command`) as case e of the suite,
whose results are in RESULTS.md.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

SEED = 20240601
N_BIG = 4  # big tensors share the data; several tensors is the realistic layout
SMALL_ELEMS = 16384  # the tensor we read: 64 KiB of float32
ALIGN = 4096
CHUNK_ELEMS = 1 << 24  # 64 MiB of float32 per generation step


def _align(n: int) -> int:
    return -(-n // ALIGN) * ALIGN


def generate(out_dir: str, size_gb: float) -> dict:
    """Write model.onnx + model.onnx.data into ``out_dir``; returns what was written."""
    import numpy as np

    import irmodel
    from irmodel import (GraphProto, ModelProto, NodeProto, OperatorSetIdProto,
                         StringStringEntryProto, TensorProto)

    os.makedirs(out_dir, exist_ok=True)
    rng = np.random.default_rng(SEED)
    total = int(size_gb * 1e9) // 4  # float32 elements in the big tensors
    per = max(1, total // N_BIG)
    data_path = os.path.join(out_dir, "model.onnx.data")
    layout = []
    with open(data_path, "wb") as fh:
        for i in range(N_BIG):
            offset = _align(fh.tell())
            fh.write(bytes(offset - fh.tell()))
            left = per
            while left:
                n = min(left, CHUNK_ELEMS)
                fh.write(rng.random(n, dtype=np.float32).tobytes())
                left -= n
            layout.append((f"big_{i}", [per], offset, per * 4))
        small = rng.standard_normal(SMALL_ELEMS, dtype=np.float32)
        offset = _align(fh.tell())
        fh.write(bytes(offset - fh.tell()))
        fh.write(small.tobytes())
        layout.append(("small", [SMALL_ELEMS], offset, SMALL_ELEMS * 4))

    inits = []
    for name, dims, offset, length in layout:
        entries = [StringStringEntryProto(key=k, value=str(v)) for k, v in
                   (("location", "model.onnx.data"), ("offset", offset), ("length", length))]
        inits.append(TensorProto(name=name, dims=dims, data_type=TensorProto.FLOAT,
                                 data_location=TensorProto.EXTERNAL, external_data=entries))
    graph = GraphProto(name="external", initializer=inits,
                       node=[NodeProto(op_type="Identity", input=["small"], output=["out"])])
    model = ModelProto(ir_version=10, producer_name="bench_external_data", graph=graph,
                       opset_import=[OperatorSetIdProto(domain="", version=21)])
    irmodel.save(model, os.path.join(out_dir, "model.onnx"))
    return {"data_bytes": os.path.getsize(data_path), "small_bytes": SMALL_ELEMS * 4,
            "small_sha1": hashlib.sha1(small.tobytes()).hexdigest()}


_CHILD = textwrap.dedent("""
    import hashlib, json, os, resource, sys, time
    sys.path.insert(0, {root!r})
    side, path = sys.argv[1], sys.argv[2]
    import numpy
    if side == "irmodel":
        import irmodel
        import irmodel.tensors  # what to_array needs, imported up front as onnx's helpers are
    else:
        import onnx
        from onnx import numpy_helper
        from onnx.external_data_helper import load_external_data_for_tensor
    base_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.perf_counter()
    if side == "irmodel":
        m = irmodel.load(path)
        small = next(t for t in m.graph.initializer if t.name == "small")
        arr = irmodel.to_array(small)
    elif side == "onnx":
        m = onnx.load(path)
        small = next(t for t in m.graph.initializer if t.name == "small")
        arr = numpy_helper.to_array(small)
    else:
        m = onnx.load(path, load_external_data=False)
        small = next(t for t in m.graph.initializer if t.name == "small")
        load_external_data_for_tensor(small, os.path.dirname(path))
        arr = numpy_helper.to_array(small)
    digest = hashlib.sha1(arr.tobytes()).hexdigest()
    wall = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({{"wall": wall, "peak_kb": peak, "base_kb": base_rss, "sha1": digest}}))
""")

SIDES = [("irmodel", "irmodel.load + to_array"),
         ("onnx", "onnx.load + numpy_helper.to_array"),
         ("onnx-lazy", "onnx.load(load_external_data=False) + load_external_data_for_tensor")]


def child_command(side: str, model_path: str) -> list:
    """The command line of one measurement; it prints one JSON line (see `measure`)."""
    return [sys.executable, "-c", _CHILD.format(root=ROOT), side, model_path]


def measure(side: str, model_path: str) -> dict:
    out = subprocess.run(child_command(side, model_path), capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _mb(kb: float) -> float:
    return kb / 1024  # ru_maxrss is in KiB on Linux


def table(results: dict, info: dict) -> str:
    ours = results["irmodel"]
    rows = ["| side | what | wall (s) | peak RSS (MiB) | RSS above imports (MiB) | wall / irmodel "
            "| peak RSS / irmodel | tensor SHA1 | wall range (s) |",
            "|---|---|---:|---:|---:|---:|---:|---|---|"]
    for side, what in SIDES:
        r = results[side]
        rows.append(f"| {side} | {what} | {r['wall']:.4f} | {_mb(r['peak_kb']):.1f} | "
                    f"{_mb(r['peak_kb'] - r['base_kb']):.1f} | {r['wall'] / ours['wall']:.1f}x | "
                    f"{r['peak_kb'] / ours['peak_kb']:.2f}x | {r['sha1'][:12]} | "
                    f"{r['wall_min']:.4f}-{r['wall_max']:.4f} |")
    return "\n".join(rows)


def machine() -> str:
    from importlib.metadata import version  # not `import onnx`: the parent must stay small

    return (f"{os.cpu_count()} cores, {platform.machine()}, {platform.system()} {platform.release()}, "
            f"Python {platform.python_version()}, onnx {version('onnx')}")


def generate_in_child(out_dir: str, size_gb: float) -> dict:
    """Run `generate` in its own process.

    Linux keeps ``ru_maxrss`` across fork and exec, so a child would report this
    process's high-water mark if it were above its own: the parent must never hold the
    generator's buffers (or import numpy/onnx) for the children's figures to be theirs.
    """
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--generate-into", out_dir,
                          "--size-gb", repr(size_gb)], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size-gb", type=float, default=3.0, help="external data to generate (GB, 1e9)")
    ap.add_argument("--out", default=os.path.join(ROOT, "benchmarks", "out", "external_data"),
                    help="directory for the generated model (created)")
    ap.add_argument("--repeat", type=int, default=3, help="runs per side; the median wall is shown")
    ap.add_argument("--keep", action="store_true", help="keep the generated files")
    ap.add_argument("--generate-into", help=argparse.SUPPRESS)  # internal: the generator child
    args = ap.parse_args(argv)
    if args.generate_into:
        print(json.dumps(generate(args.generate_into, args.size_gb)))
        return 0

    info = generate_in_child(args.out, args.size_gb)
    model_path = os.path.join(args.out, "model.onnx")
    try:
        results = {}
        for side, _ in SIDES:
            runs = [measure(side, model_path) for _ in range(args.repeat)]
            digests = {r["sha1"] for r in runs}
            if digests != {info["small_sha1"]}:
                raise SystemExit(f"{side} read the wrong data: {digests} != {info['small_sha1']}")
            results[side] = {"wall": statistics.median(r["wall"] for r in runs),
                             "wall_min": min(r["wall"] for r in runs),
                             "wall_max": max(r["wall"] for r in runs),
                             "peak_kb": max(r["peak_kb"] for r in runs),
                             "base_kb": min(r["base_kb"] for r in runs),
                             "sha1": runs[0]["sha1"]}
    finally:
        if not args.keep:
            shutil.rmtree(args.out, ignore_errors=True)
    print(f"external data: {info['data_bytes'] / 1e9:.3f} GB in model.onnx.data; tensor read: "
          f"{info['small_bytes'] / 1024:.0f} KiB ({SMALL_ELEMS} float32); {args.repeat} runs per side, "
          "each in a fresh process")
    print(f"machine: {machine()}")
    print()
    print(table(results, info))
    return 0


if __name__ == "__main__":
    sys.exit(main())
