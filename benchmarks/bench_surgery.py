"""Benchmark: extract one transformer block from a GPT-2-shaped model, irmodel against onnx.

Generates (reproducibly, `benchmarks/exports.gpt2`) a GPT-2-shaped model, inline or with its
weights in one external data file, and the names that cut out block ``--block``: its
output is the residual leaving the block, its inputs every value the block's nodes read
from outside it (the residual entering it, the attention mask, shape values).  Then, each
in a fresh Python process, runs ``extract_model(src, out, inputs, outputs)`` with onnx's
defaults (check and infer) through:

* ``irmodel``: `irmodel.utils.extract_model` (maps the model, reads the block only);
* ``onnx``: ``onnx.utils.extract_model`` (loads everything, external data included).

Measured in the child: wall time of the call (imports excluded), peak RSS (``VmHWM``, which
counts the mapped file's pages the process touched) and peak anonymous RSS (``RssAnon``
sampled every 5 ms: memory the process allocated, what a machine's RAM must hold).  Prints
a markdown table and the machine.  The default size is small (4 layers, 256 wide): a quick
check; ``--layers 12 --width 768 --vocab 50257`` is GPT-2 small (~650 MB).

    python benchmarks/bench_surgery.py --out /tmp/bench-surgery [--external] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

_CHILD = r"""
import json, os, sys, threading, time
sys.path.insert(0, {root!r})
side, src, out, ins, outs = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4]), json.loads(sys.argv[5])
if side == "onnx":
    import onnx, onnx.utils
    extract = onnx.utils.extract_model
else:
    from irmodel import utils
    extract = utils.extract_model

def anon():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("RssAnon:"):
                return int(line.split()[1]) * 1024
    return 0

peak = [anon()]
base = peak[0]
done = threading.Event()
def sample():
    while not done.wait(0.005):
        peak[0] = max(peak[0], anon())
t = threading.Thread(target=sample, daemon=True)
t.start()
start = time.perf_counter()
extract(src, out, ins, outs)
wall = time.perf_counter() - start
done.set(); t.join()
peak[0] = max(peak[0], anon())
hwm = 0
with open("/proc/self/status") as f:
    for line in f:
        if line.startswith("VmHWM:"):
            hwm = int(line.split()[1]) * 1024
print(json.dumps({{"wall": wall, "peak_anon": peak[0], "anon_growth": peak[0] - base, "hwm": hwm}}))
"""


def generate(out_dir: str, layers: int, width: int, vocab: int, block: int, external: bool) -> dict:
    """Write ``model.onnx`` (and ``model.onnx.data``) and return the block's cut."""
    import irmodel
    from benchmarks.exports import gpt2

    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, "model.onnx")
    data = os.path.join(out_dir, "model.onnx.data") if external else None
    model, info = gpt2(layers=layers, d=width, heads=max(1, width // 64), vocab=vocab, data_path=data)
    irmodel.save(model, path)
    scope = f"/transformer/h.{block}/"
    inside = [n for n in model.graph.node if n.name.startswith(scope)]
    made = {o for n in inside for o in n.output}
    inits = {t.name for t in model.graph.initializer}
    ins = list(dict.fromkeys(i for n in inside for i in n.input if i and i not in made and i not in inits))
    outs = [f"/transformer/h.{block}/Add_1_output_0"]
    return {"path": path, "inputs": ins, "outputs": outs, "bytes": os.path.getsize(path)
            + (os.path.getsize(data) if data else 0), **info}


def measure(side: str, cut: dict, out_dir: str) -> dict:
    out = os.path.join(out_dir, f"part-{side}.onnx")
    code = _CHILD.format(root=ROOT)
    res = subprocess.run([sys.executable, "-c", code, side, cut["path"], out, json.dumps(cut["inputs"]),
                          json.dumps(cut["outputs"])], capture_output=True, text=True, check=False)
    if res.returncode != 0:
        raise SystemExit(f"{side} failed:\n{res.stderr[-2000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", required=True, help="a directory for the model and the parts")
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--width", type=int, default=256)
    p.add_argument("--vocab", type=int, default=5000)
    p.add_argument("--block", type=int, default=1)
    p.add_argument("--external", action="store_true", help="weights in an external data file")
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args()
    cut = generate(args.out, args.layers, args.width, args.vocab, args.block, args.external)
    mib = 1 << 20
    print(f"model: {cut['nodes']} nodes, {cut['initializers']} initializers, {cut['bytes'] / mib:.1f} MiB"
          f"{' (external data)' if args.external else ''}; block {args.block}: "
          f"{len(cut['inputs'])} inputs, {len(cut['outputs'])} output\n")
    print("| side | wall s (median) | peak anon MiB | anon growth MiB | peak RSS MiB |")
    print("|---|---|---|---|---|")
    for side in ("irmodel", "onnx"):
        runs = [measure(side, cut, args.out) for _ in range(args.repeat)]
        med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        print(f"| {side} | {med['wall']:.3f} | {med['peak_anon'] / mib:.0f} | {med['anon_growth'] / mib:.0f} "
              f"| {med['hwm'] / mib:.0f} |")
    print(f"\n{platform.platform()}, Python {platform.python_version()}, {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
