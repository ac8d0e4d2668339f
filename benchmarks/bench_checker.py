"""Benchmark: ``irmodel.check_model(path)`` against ``onnx.checker.check_model(path)``,
and (``--what infer``) load + ``infer_shapes(data_prop=True)`` on both sides.

    python benchmarks/bench_checker.py [--out DIR] [--repeat N] [--json] [--what check|infer]
    python benchmarks/bench_checker.py --make-structure PATH [--nodes N]   (run_all.py's generator)

Each side of each model runs in a fresh Python process (started from ``/bin/sh``, so the
parent's memory high-water mark is not inherited), sides alternating, the order reversed
every round; medians are reported.  Measured per run: the whole process's wall time
(interpreter start, imports, check, exit), the check alone (``perf_counter`` in the
child), peak RSS (``ru_maxrss``) and, right after the check, ``RssAnon`` (the process's
own memory) and ``RssFile`` (mapped file pages, shared and reclaimable) from
``/proc/self/status``.  The model files are read once before the runs (warm page cache).

Models (generated into ``--out``/checker from fixed seeds when missing):

* ``checker_structure.onnx``: 75,000 nodes of ten op types with valid attributes and
  7,500 small weights, valid (the shape of ``generate.py structure``, whose model is
  invalid on purpose and would measure how fast the first problem is found);
* ``structure.onnx`` from ``generate.py structure`` itself, if present: every node has
  problems, so this measures reporting all of them against stopping at the first;
* ``checker_transformer.onnx``: shaped like a 650 MB transformer export (18 layers of
  attention and MLP, embeddings; ``raw_data`` weights, 500 nodes), valid.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

CHILD = r"""
import resource, sys, time
path, side, what = sys.argv[1], sys.argv[2], sys.argv[3]
t0 = time.perf_counter()
if side == "ours":
    import irmodel
    t1 = time.perf_counter()
    if what == "infer":
        m = irmodel.infer_shapes(irmodel.load(path, load_external_data=False), data_prop=True)
        verdict, problems = "inferred", len(m.graph.value_info)
    else:
        try:
            irmodel.check_model(path)
            verdict, problems = "valid", 0
        except irmodel.ValidationError as exc:
            verdict, problems = "invalid", len(exc.problems)
else:
    import onnx, onnx.checker, onnx.shape_inference
    t1 = time.perf_counter()
    if what == "infer":
        m = onnx.shape_inference.infer_shapes(onnx.load(path), data_prop=True)
        verdict, problems = "inferred", len(m.graph.value_info)
    else:
        try:
            onnx.checker.check_model(path)
            verdict, problems = "valid", 0
        except Exception:
            verdict, problems = "invalid", 1
t2 = time.perf_counter()
status = dict(line.split(":", 1) for line in open("/proc/self/status") if ":" in line)
kib = lambda k: int(status.get(k, "0 kB").split()[0])
print(repr({"check_s": t2 - t1, "import_s": t1 - t0, "verdict": verdict, "problems": problems,
            "maxrss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
            "anon_kib": kib("RssAnon"), "file_kib": kib("RssFile")}))
"""


# -- models ---------------------------------------------------------------------------------------

def _value_info(name, dims):
    from irmodel import helper

    return helper.make_tensor_value_info(name, 1, dims)


def valid_structure_model(nodes: int = 75_000, seed: int = 0):
    """A valid chain of ``nodes`` nodes (ten op types, valid attributes), one weight per ten nodes."""
    from irmodel import AttributeProto as A, GraphProto, ModelProto, NodeProto, OperatorSetIdProto, TensorProto

    rng = random.Random(seed)
    ops = ["Relu", "Add", "Mul", "MatMul", "Gemm", "Transpose", "Softmax", "LayerNormalization", "Sigmoid", "Sub"]
    node_list, inits = [], []
    last = "input"
    for i in range(nodes):
        op = ops[rng.randrange(len(ops))]
        if i % 10 == 0:
            inits.append(TensorProto(name=f"w{i // 10}", dims=[4, 4], data_type=1, raw_data=rng.randbytes(64)))
        w = f"w{i // 10}"
        inputs = {"Relu": [last], "Sigmoid": [last], "Softmax": [last], "Transpose": [last],
                  "Gemm": [last, w, w], "LayerNormalization": [last, w, w]}.get(op, [last, w])
        attrs = {"Softmax": [A(name="axis", type=A.INT, i=-1)],
                 "Transpose": [A(name="perm", type=A.INTS, ints=[1, 0])],
                 "Gemm": [A(name="alpha", type=A.FLOAT, f=rng.random()), A(name="transB", type=A.INT, i=1)],
                 "LayerNormalization": [A(name="axis", type=A.INT, i=-1),
                                        A(name="epsilon", type=A.FLOAT, f=1e-5)]}.get(op, [])
        out = f"t{i}"
        node_list.append(NodeProto(op_type=op, name=f"{op.lower()}_{i}", input=inputs, output=[out],
                                   attribute=attrs))
        last = out
    graph = GraphProto(name="structure", node=node_list, initializer=inits,
                       input=[_value_info("input", ["batch", 4])], output=[_value_info(last, ["batch", 4])])
    return ModelProto(ir_version=10, producer_name="irmodel-bench", opset_import=[OperatorSetIdProto(version=21)],
                      graph=graph)


def _tensor(name, dims, filler: bytes):
    from irmodel import TensorProto

    n = 4
    for d in dims:
        n *= d
    reps, rest = divmod(n, len(filler))
    return TensorProto(name=name, dims=list(dims), data_type=1, raw_data=filler * reps + filler[:rest])


def transformer(layers: int = 18, hidden: int = 1024, ffn: int = 2048, vocab: int = 20_000, seed: int = 0):
    """A model shaped like a transformer export: embeddings, ``layers`` blocks of attention
    (Q, K, V, O projections, Softmax) and MLP (two MatMuls, Erf-based GELU), LayerNorms,
    shape constants; weights as ``raw_data``.  About 650 MB with the defaults."""
    from irmodel import TensorProto, helper

    rng = random.Random(seed)
    filler = rng.randbytes(1 << 16)
    nodes, inits = [], []

    def const_i64(name, values):
        inits.append(helper.make_tensor(name, TensorProto.INT64, [len(values)], values))
        return name

    def node(op, inputs, outputs, **attrs):
        nodes.append(helper.make_node(op, inputs, outputs, name=f"{op}_{len(nodes)}", **attrs))
        return outputs[0]

    inits.append(_tensor("embed.weight", [vocab, hidden], filler))
    heads_shape = const_i64("heads_shape", [0, 0, 16, hidden // 16])
    merge_shape = const_i64("merge_shape", [0, 0, hidden])
    x = node("Gather", ["embed.weight", "input_ids"], ["embedded"])
    for k in range(layers):
        p = f"layers.{k}"
        for w, dims in (("ln1.w", [hidden]), ("ln1.b", [hidden]), ("ln2.w", [hidden]), ("ln2.b", [hidden]),
                        ("q", [hidden, hidden]), ("k", [hidden, hidden]), ("v", [hidden, hidden]),
                        ("o", [hidden, hidden]), ("fc1", [hidden, ffn]), ("fc2", [ffn, hidden]),
                        ("fc1.b", [ffn]), ("fc2.b", [hidden])):
            inits.append(_tensor(f"{p}.{w}", dims, filler))
        h = node("LayerNormalization", [x, f"{p}.ln1.w", f"{p}.ln1.b"], [f"{p}.h"], axis=-1, epsilon=1e-5)
        qkv = []
        for w in "qkv":
            t = node("MatMul", [h, f"{p}.{w}"], [f"{p}.{w}_proj"])
            t = node("Reshape", [t, heads_shape], [f"{p}.{w}_heads"])
            qkv.append(node("Transpose", [t], [f"{p}.{w}_t"], perm=[0, 2, 1, 3]))
        kt = node("Transpose", [qkv[1]], [f"{p}.kT"], perm=[0, 1, 3, 2])
        s = node("MatMul", [qkv[0], kt], [f"{p}.scores"])
        s = node("Softmax", [s], [f"{p}.probs"], axis=-1)
        a = node("MatMul", [s, qkv[2]], [f"{p}.attn"])
        a = node("Transpose", [a], [f"{p}.attn_t"], perm=[0, 2, 1, 3])
        a = node("Reshape", [a, merge_shape], [f"{p}.attn_m"])
        a = node("MatMul", [a, f"{p}.o"], [f"{p}.attn_o"])
        x = node("Add", [x, a], [f"{p}.res1"])
        h = node("LayerNormalization", [x, f"{p}.ln2.w", f"{p}.ln2.b"], [f"{p}.h2"], axis=-1, epsilon=1e-5)
        f = node("MatMul", [h, f"{p}.fc1"], [f"{p}.fc1_out"])
        f = node("Add", [f, f"{p}.fc1.b"], [f"{p}.fc1_b"])
        g = node("Div", [f, "sqrt2"], [f"{p}.g1"])
        g = node("Erf", [g], [f"{p}.g2"])
        g = node("Add", [g, "one"], [f"{p}.g3"])
        g = node("Mul", [f, g], [f"{p}.g4"])
        g = node("Mul", [g, "half"], [f"{p}.gelu"])
        f = node("MatMul", [g, f"{p}.fc2"], [f"{p}.fc2_out"])
        f = node("Add", [f, f"{p}.fc2.b"], [f"{p}.fc2_b"])
        x = node("Add", [x, f], [f"{p}.res2"])
    for name, value in (("sqrt2", 2 ** 0.5), ("one", 1.0), ("half", 0.5)):
        inits.append(helper.make_tensor(name, TensorProto.FLOAT, [], [value]))
    logits = node("MatMul", [x, "lm_head"], ["logits"])
    inits.append(_tensor("lm_head", [hidden, 512], filler))
    graph = helper.make_graph(nodes, "transformer",
                              [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "seq"])],
                              [helper.make_tensor_value_info(logits, TensorProto.FLOAT, ["batch", "seq", 512])],
                              inits)
    return helper.make_model(graph, ir_version=10, producer_name="irmodel-bench",
                             opset_imports=[helper.make_opsetid("", 17)])


def ensure_models(out: str) -> dict:
    import irmodel

    mine = os.path.join(out, "checker")
    os.makedirs(mine, exist_ok=True)
    models = {}
    path = os.path.join(mine, "checker_structure.onnx")
    if not os.path.exists(path):
        irmodel.save(valid_structure_model(), path)
    models["structure, valid (75,000 nodes)"] = path
    existing = os.path.join(out, "structure.onnx")
    if os.path.exists(existing):
        models["generate.py structure (75,000 nodes, invalid)"] = existing
    path = os.path.join(mine, "checker_transformer.onnx")
    if not os.path.exists(path):
        irmodel.save(transformer(), path)
    models["transformer export (650 MB)"] = path
    return models


# -- running --------------------------------------------------------------------------------------

def _warm(path: str) -> None:
    with open(path, "rb") as f:
        while f.read(1 << 24):
            pass


def run_once(path: str, side: str, what: str = "check") -> dict:
    cmd = f"exec {sys.executable} -c {_sh_quote(CHILD)} {_sh_quote(path)} {side} {what}"
    t = time.perf_counter()
    out = subprocess.run(["/bin/sh", "-c", cmd], capture_output=True, text=True, check=True).stdout
    wall = time.perf_counter() - t
    result = eval(out.strip().splitlines()[-1])  # noqa: S307 - our own child's repr of a dict
    result["wall_s"] = wall
    return result


def _sh_quote(text: str) -> str:
    return "'" + text.replace("'", "'\"'\"'") + "'"


def measure(models: dict, repeat: int, what: str = "check") -> dict:
    results = {}
    for label, path in models.items():
        _warm(path)
        runs = {"ours": [], "onnx": []}
        for r in range(repeat):
            for side in (("ours", "onnx") if r % 2 == 0 else ("onnx", "ours")):
                runs[side].append(run_once(path, side, what))
        results[label] = {"path": path, "bytes": os.path.getsize(path), "runs": runs}
    return results


def _median(runs, key):
    return statistics.median(r[key] for r in runs)


def table(results: dict) -> str:
    lines = ["| model | file | side | verdict (problems) | whole process (s) | work (s) | peak RSS (MiB) "
             "| anonymous (MiB) | file pages (MiB) |", "|---|---:|---|---|---:|---:|---:|---:|---:|"]
    for label, res in results.items():
        for side, runs in res["runs"].items():
            first = runs[0]
            lines.append(
                f"| {label} | {res['bytes'] / 2**20:,.1f} MiB | {side} | {first['verdict']} ({first['problems']}) "
                f"| {_median(runs, 'wall_s'):.3f} | {_median(runs, 'check_s'):.3f} "
                f"| {_median(runs, 'maxrss_kib') / 1024:.1f} | {_median(runs, 'anon_kib') / 1024:.1f} "
                f"| {_median(runs, 'file_kib') / 1024:.1f} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default="/tmp/irmodel-bench")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--json", action="store_true", help="print every run as JSON instead of a table")
    p.add_argument("--what", choices=("check", "infer"), default="check",
                   help="check_model(path), or load + infer_shapes(data_prop=True) on both sides")
    p.add_argument("--make-structure", metavar="PATH",
                   help="only write the valid structure model (run_all.py's generator) and exit")
    p.add_argument("--nodes", type=int, default=75_000, help="its nodes (with --make-structure)")
    args = p.parse_args(argv)
    if args.make_structure:
        import irmodel

        irmodel.save(valid_structure_model(args.nodes), args.make_structure)
        print(json.dumps({"nodes": args.nodes}))
        return 0
    env_models = ensure_models(args.out)
    if args.what == "infer":  # every node of the invalid model fails: inference of it means nothing
        env_models = {k: v for k, v in env_models.items() if "invalid" not in k}
    results = measure(env_models, args.repeat, args.what)
    print(json.dumps(results, indent=1) if args.json else table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
