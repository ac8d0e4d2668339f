"""Run the whole benchmark suite and regenerate benchmarks/RESULTS.md.

    python benchmarks/run_all.py [--out DIR] [--scale F] [--repeat N] [--results PATH] [--cases A,B]
    python benchmarks/run_all.py --case walk [--walk-models structure] --repeat 5 > walk.json

1. Generates the models into ``DIR`` (default /tmp/irmodel-bench) from fixed seeds, each in
   a process of its own: ``weights.onnx`` (1.5 GiB of weights in one file, under
   protobuf's 2 GiB limit), ``structure.onnx`` (75,000 nodes with attributes and small
   weights), ``external/model.onnx`` (+ 3 GB of external data), and three shaped like
   real exports (`exports.py`): ``gpt2.onnx`` (a GPT-2 decoder, ~650 MB in one file),
   ``resnet50.onnx`` (~100 MB) and ``gpt2-external/model.onnx`` (a 36-layer decoder whose
   3.4 GB of weights are external data).  A JSON stamp beside each
   records the generator's parameters (its source's SHA1 among them); a model whose stamp
   matches is reused.  ``--scale`` multiplies every size (0.0001 runs in seconds).
2. Compiles irmodel and wirefmt to bytecode (``compileall``, with PYTHONDONTWRITEBYTECODE
   removed, for this process and every child): onnx's modules in site-packages are
   compiled already, so without this each of our processes would compile irmodel from
   source and the comparison would not be fair.
3. Runs each case, every side in a fresh process (`cases.py`), sides alternating, ``N``
   rounds; before each case every model file it uses is read once, untimed (the page
   cache cannot be dropped without root, so every case runs warm instead).
4. ``--cases check,infer`` runs only those cases and prints their block (RESULTS.md is
   left alone unless ``--results`` names it).
5. Rewrites the part of ``--results`` (default benchmarks/RESULTS.md) between
   ``<!-- generated:start -->`` and ``<!-- generated:end -->``; text outside is kept.

Peak RSS is each child's ``ru_maxrss``.  Linux carries a parent's RSS high-water mark into
its children, so the measured processes are started by a small shell (`Launcher`), and
this process imports only the standard library and never holds model data.

The suite is the list `CASES` (a name and a function of a `Context`), rendered by the
function of the same name in ``report.SECTIONS``; the models are `MODELS`.  A new case
(the checker's, inference's) is one entry in each and its sides in ``cases.CASES``.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import os
import platform
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

BENCH = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(BENCH)
sys.path.insert(0, BENCH)

import bench_external_data as bex  # noqa: E402  (standard library only at import time)
import report  # noqa: E402

FULL = {"weights_mb": 1536.0, "nodes": 75000, "external_gb": 3.0}
#: The shapes of `exports.gpt2` at full size: GPT-2 small, and a 36-layer, 1280-wide decoder
#: (GPT-2 large's shape) whose weights, 3.4 GB, must be external data.
GPT2 = {"layers": 12, "width": 768, "heads": 12, "vocab": 50257, "positions": 1024}
GPT2_EXTERNAL = {"layers": 36, "width": 1280, "heads": 20, "vocab": 50257, "positions": 1024}
RESNET50 = {"width": 64, "classes": 1000}
#: `exports.residual_mlp` at full size: 3,000 blocks of 25 nodes, as torch exports them.
RESIDUAL_MLP = {"blocks": 3000, "width": 16}
#: What each case runs on (keys of the models `ensure_models` makes).
INSPECT_MODELS = ("weights", "gpt2", "resnet50", "gpt2_external")
WALK_MODELS = ("structure", "residual_mlp", "gpt2", "resnet50", "gpt2_external")
#: The checker's and inference's models: ``structure_valid`` is the 75,000-node model made
#: valid (`bench_checker.valid_structure_model`: ``structure`` breaks a rule at every node
#: on purpose, so a check of it measures reporting 137,000 problems against stopping at one).
CHECK_MODELS = INFER_MODELS = ("structure_valid", "residual_mlp", "gpt2", "resnet50", "gpt2_external")
#: Models whose weights are external: the reference side opens them with load_external_data=False.
EXTERNAL_MODELS = ("gpt2_external",)
#: Runs of `python -X importtime -c "import irmodel"` per --repeat (start-up is quick and noisy).
STARTUP_RUNS_PER_REPEAT = 4
#: Rounds of the inspect case per --repeat.  Ours' child runs 30-50 ms, and on this machine
#: (a 2-core VM) the CPU time of one identical child swings from 32 to 50 ms from one second
#: to the next (`perf stat`: same instructions, same page faults, no migration); a median of
#: 5 such samples moved between 28x and 38x for the same code within an hour.  The other
#: cases' children run 0.1 s and more and average the swings out.
INSPECT_RUNS_PER_REPEAT = 3
SEED = 0
EDIT_NAME = "irmodel-bench-edited"  # the new producer_name of case d
# Children run without `site` (-S), with this environment's site-packages put on sys.path
# by hand: an editable install of irmodel (as in development) makes `site` import its
# finder, and pathlib and re with it, in every process (about 50 million instructions,
# more than a bare interpreter's start), which no regular install of either side does.
_SITE_DIRS = [p for p in (__import__("site").getsitepackages() + [__import__("site").getusersitepackages()])
              if os.path.isdir(p)]
_CHILD = (f"import sys; sys.path.extend({_SITE_DIRS!r}); sys.path.insert(0, {BENCH!r}); "
          "import cases; cases.main()")
_CHUNK = 1 << 20  # reads by this process (warm-up, SHA1): 1 MiB, so its own RSS stays small


# -- files -----------------------------------------------------------------------------------

def _read_chunks(path: str):
    buf = bytearray(_CHUNK)
    view = memoryview(buf)
    with open(path, "rb", buffering=0) as fh:
        while True:
            n = fh.readinto(buf)
            if not n:
                return
            yield view[:n]


def sha1_file(path: str) -> str:
    h = hashlib.sha1()
    for chunk in _read_chunks(path):
        h.update(chunk)
    return h.hexdigest()


def warm(paths) -> None:
    """Read each file once, untimed, so that every side finds it in the page cache."""
    for p in paths:
        for _ in _read_chunks(p):
            pass


def _source_sha1(path: str) -> str:
    with open(path, "rb") as fh:
        return hashlib.sha1(fh.read()).hexdigest()


# -- models ------------------------------------------------------------------------------------

def _stamp_path(model_path: str) -> str:
    return model_path + ".stamp.json"


def _reusable(model_path: str, params: dict) -> dict | None:
    """The stamp of ``model_path`` if it was generated with ``params`` and is complete."""
    try:
        with open(_stamp_path(model_path)) as fh:
            stamp = json.load(fh)
    except (OSError, ValueError):
        return None
    if stamp.get("params") != params:
        return None
    directory = os.path.dirname(model_path)
    for name, size in stamp.get("files", {}).items():
        p = os.path.join(directory, name)
        if not os.path.isfile(p) or os.path.getsize(p) != size:
            return None
    return stamp


def _ensure(model_path: str, params: dict, generate) -> dict:
    """Reuse the model at ``model_path`` if its stamp matches ``params``, else ``generate()`` it."""
    stamp = _reusable(model_path, params)
    if stamp is not None:
        stamp["generated"] = False
        stamp["path"] = model_path
        return stamp
    os.makedirs(os.path.dirname(model_path), exist_ok=True)
    try:
        os.unlink(_stamp_path(model_path))  # no stamp may describe a half-written model
    except FileNotFoundError:
        pass
    t0 = time.perf_counter()
    info, files = generate()
    stamp = {"params": params, "files": {os.path.basename(f): os.path.getsize(f) for f in files},
             "seconds": time.perf_counter() - t0, **info}
    stamp["sha1"] = sha1_file(model_path)
    with open(_stamp_path(model_path), "w") as fh:
        json.dump(stamp, fh, indent=1)
    stamp["generated"] = True
    stamp["path"] = model_path
    return stamp


def _run_generator(kind: str, path: str, options: list) -> dict:
    cmd = [sys.executable, os.path.join(BENCH, "generate.py"), kind, path, *options, "--json"]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode:
        raise SystemExit(f"generating {path} failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _scaled_gpt2(p: dict, scale: float) -> dict:
    """The decoder's shape at ``scale`` (sizes grow roughly with width squared times layers)."""
    if scale >= 1:
        return dict(p)
    q = scale ** 0.25
    heads = max(1, round(p["heads"] * q))
    head_dim = max(2, round(p["width"] // p["heads"] * q))
    return {"layers": max(1, round(p["layers"] * q)), "width": heads * head_dim, "heads": heads,
            "vocab": max(8, round(p["vocab"] * scale ** 0.5)), "positions": max(4, round(p["positions"] * q))}


def _exports_options(p: dict) -> list:
    return [x for k, v in p.items() for x in (f"--{k}", str(v))]


def ensure_models(out_dir: str, scale: float) -> dict:
    gen_sha1 = _source_sha1(os.path.join(BENCH, "generate.py"))
    exports_sha1 = _source_sha1(os.path.join(BENCH, "exports.py"))
    size_mb = FULL["weights_mb"] * scale
    nodes = max(1, round(FULL["nodes"] * scale))
    size_gb = FULL["external_gb"] * scale
    models = {}

    path = os.path.join(out_dir, "weights.onnx")
    params = {"kind": "weights", "size_mb": size_mb, "seed": SEED, "generator_sha1": gen_sha1}
    models["weights"] = _ensure(path, params, lambda: (
        _run_generator("weights", path, ["--size-mb", repr(size_mb), "--seed", str(SEED)]), [path]))

    path_s = os.path.join(out_dir, "structure.onnx")
    params = {"kind": "structure", "nodes": nodes, "seed": SEED, "generator_sha1": gen_sha1}
    models["structure"] = _ensure(path_s, params, lambda: (
        _run_generator("structure", path_s, ["--nodes", str(nodes), "--seed", str(SEED)]), [path_s]))

    path_v = os.path.join(out_dir, "checker", "structure_valid.onnx")
    checker_sha1 = _source_sha1(os.path.join(BENCH, "bench_checker.py"))
    params = {"kind": "structure_valid", "nodes": nodes, "generator_sha1": checker_sha1}

    def gen_valid():
        cmd = [sys.executable, os.path.join(BENCH, "bench_checker.py"), "--make-structure", path_v,
               "--nodes", str(nodes)]
        out = subprocess.run(cmd, capture_output=True, text=True)
        if out.returncode:
            raise SystemExit(f"generating {path_v} failed:\n{out.stderr}")
        return {**json.loads(out.stdout.strip().splitlines()[-1]), "payload_bytes": 64 * -(-nodes // 10)}, [path_v]
    models["structure_valid"] = _ensure(path_v, params, gen_valid)

    ext_dir = os.path.join(out_dir, "external")
    path_e = os.path.join(ext_dir, "model.onnx")
    params = {"kind": "external", "size_gb": size_gb, "seed": bex.SEED,
              "generator_sha1": _source_sha1(bex.__file__)}

    def gen_external():
        info = bex.generate_in_child(ext_dir, size_gb)
        return info, [path_e, path_e + ".data"]
    models["external"] = _ensure(path_e, params, gen_external)
    models["external"]["data_path"] = path_e + ".data"

    shapes = {"gpt2": ("gpt2", "gpt2.onnx", _scaled_gpt2(GPT2, scale)),
              "resnet50": ("resnet50", "resnet50.onnx",
                           {"width": max(2, round(RESNET50["width"] * min(1.0, scale ** 0.5))),
                            "classes": max(2, round(RESNET50["classes"] * min(1.0, scale ** 0.5)))}),
              "gpt2_external": ("gpt2-external", os.path.join("gpt2-external", "model.onnx"),
                                _scaled_gpt2(GPT2_EXTERNAL, scale)),
              "residual_mlp": ("residual-mlp", "residual_mlp.onnx",
                               {"blocks": max(1, round(RESIDUAL_MLP["blocks"] * scale)),
                                "width": RESIDUAL_MLP["width"]})}
    for key, (kind, name, shape) in shapes.items():
        path_x = os.path.join(out_dir, name)
        params = {"kind": kind, **shape, "seed": SEED, "generator_sha1": gen_sha1, "exports_sha1": exports_sha1}
        files = [path_x] + ([path_x + ".data"] if kind == "gpt2-external" else [])
        models[key] = _ensure(path_x, params, lambda kind=kind, path_x=path_x, shape=shape, files=files: (
            _run_generator(kind, path_x, [*_exports_options(shape), "--seed", str(SEED)]), files))
        if kind == "gpt2-external":
            models[key]["data_path"] = path_x + ".data"
    for m in models.values():
        m["bytes"] = sum(m["files"].values())  # the external model: both files
        m["model_bytes"] = os.path.getsize(m["path"])
    return models


def check_disk(out_dir: str, scale: float) -> None:
    """Refuse to start when the models and two outputs of the biggest cannot fit."""
    os.makedirs(out_dir, exist_ok=True)
    need = (FULL["weights_mb"] * (1 << 20) * 3 + FULL["external_gb"] * 1e9 + 4.2e9) * scale
    for name in ("weights.onnx", os.path.join("external", "model.onnx.data"), "gpt2.onnx", "resnet50.onnx",
                 os.path.join("gpt2-external", "model.onnx.data")):
        p = os.path.join(out_dir, name)
        if os.path.exists(p):
            need -= os.path.getsize(p)
    free = shutil.disk_usage(out_dir).free
    if free < need:
        raise SystemExit(f"{out_dir}: {free / 1e9:.1f} GB free, the suite needs about {need / 1e9:.1f} GB")


# -- running children --------------------------------------------------------------------------

def compile_bytecode() -> None:
    subprocess.run([sys.executable, "-m", "compileall", "-q", "irmodel", "wirefmt",
                    os.path.join("benchmarks", "cases.py")], cwd=ROOT, check=True)


class Launcher:
    """Starts the measured processes from a ``/bin/sh``, so that their ``ru_maxrss`` is their own.

    Linux carries the RSS high-water mark of a process into the children it starts (through
    fork and exec alike), so every child of this Python process would report at least this
    process's peak.  A child forked by a shell starts from the shell's few MiB instead.
    Each command's output goes to files; the shell echoes its exit status when it is done.
    """

    def __init__(self, tmp_dir: str):
        self.tmp = tmp_dir
        self.sh = subprocess.Popen(["/bin/sh"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   cwd=ROOT, text=True, bufsize=1)

    def run(self, argv: list) -> tuple:
        """``(status, stdout, stderr, seconds)``; the time is taken around the whole process."""
        out, err = os.path.join(self.tmp, "stdout"), os.path.join(self.tmp, "stderr")
        line = f"{shlex.join(argv)} >{shlex.quote(out)} 2>{shlex.quote(err)} </dev/null; echo $?\n"
        t0 = time.perf_counter()
        self.sh.stdin.write(line)
        self.sh.stdin.flush()
        status = self.sh.stdout.readline()
        seconds = time.perf_counter() - t0
        if not status:
            raise RuntimeError("the launcher shell exited")
        with open(out) as fo, open(err) as fe:
            return int(status), fo.read(), fe.read(), seconds

    def close(self) -> None:
        self.sh.stdin.close()
        self.sh.wait()


def run_json(launcher: Launcher, argv: list, what: str) -> dict:
    """Run ``argv`` through the launcher; its last stdout line is JSON (or, from `cases.py`,
    a Python literal); adds ``whole`` (s)."""
    status, out, err, seconds = launcher.run(argv)
    if status:
        raise RuntimeError(f"{what} failed (status {status}):\n{err}")
    last = out.strip().splitlines()[-1]
    try:
        result = json.loads(last)
    except ValueError:
        result = ast.literal_eval(last)
    result["whole"] = seconds
    return result


def child(launcher: Launcher, case: str, side: str, *args: str, sample_anon: bool = False) -> dict:
    """One side of one case (`cases.py`) in a fresh interpreter; ``sample_anon``: the untimed
    run that samples the peak of anonymous memory (``cases.BENCH_SAMPLE_ANON``)."""
    env = ["env", "BENCH_SAMPLE_ANON=1"] if sample_anon else []
    return run_json(launcher, [*env, sys.executable, "-S", "-c", _CHILD, case, side, *args], f"{case}/{side}")


def memory_runs(launcher: Launcher, case: str, sides: list, *args: str, extra: dict | None = None) -> dict:
    """``{side: peak anonymous KiB}``: one untimed run of each side with the sampler on."""
    extra = extra or {}
    return {side: child(launcher, case, side, *args, *extra.get(side, ()), sample_anon=True)["peak_anon_kb"]
            for side in sides}


def rounds(sides: list, repeat: int) -> dict:
    """``{name: [result, ...]}``: each side ``repeat`` times, the order reversed every round."""
    runs: dict = {name: [] for name, _ in sides}
    for i in range(repeat):
        for name, run in (sides if i % 2 == 0 else sides[::-1]):
            runs[name].append(run())
    return runs


def summarize_runs(runs: list) -> dict:
    worst = max(runs, key=lambda r: r["peak_kb"])
    return {"work": statistics.median(r["work"] for r in runs),
            "work_range": (min(r["work"] for r in runs), max(r["work"] for r in runs)),
            "whole": statistics.median(r["whole"] for r in runs),
            "whole_range": (min(r["whole"] for r in runs), max(r["whole"] for r in runs)),
            "whole_runs": [r["whole"] for r in runs], "work_runs": [r["work"] for r in runs],
            "peak_kb": worst["peak_kb"], "base_kb": min(r["base_kb"] for r in runs),
            "anon_kb": worst.get("anon_kb"), "file_kb": worst.get("file_kb"), "n": len(runs)}


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


# -- the cases ---------------------------------------------------------------------------------

def _model_files(model: dict) -> list:
    return [model["path"]] + ([model["data_path"]] if "data_path" in model else [])


def _reference_args(key: str) -> tuple:
    return ("skip",) if key in EXTERNAL_MODELS else ()


def case_inspect(launcher: Launcher, models: dict, repeat: int) -> dict:
    """The inspect summary of each of `INSPECT_MODELS`: ours against the reference's load + the same summary."""
    out: dict = {}
    for key in INSPECT_MODELS:
        model = models[key]
        path, ref_args = model["path"], _reference_args(key)
        warm(_model_files(model) if key not in EXTERNAL_MODELS else [path])
        # Two more sides in the same rounds: the harness doing nothing (`cases.floor_bare`):
        # ours' whole process is mostly an interpreter's start, which this machine's busy
        # phases slow down twice as much as the reference's parse, so each run says how quiet
        # the machine was while it measured; and the command itself (`cases.inspect_command`),
        # which adds its own modules, its command line and its printing to what ours runs.
        runs = rounds([("ours", lambda: child(launcher, "inspect", "ours", path)),
                       ("reference", lambda: child(launcher, "inspect", "reference", path, *ref_args)),
                       ("floor", lambda: child(launcher, "floor", "bare")),
                       ("command", lambda: child(launcher, "inspect", "command", path))],
                      repeat * INSPECT_RUNS_PER_REPEAT)
        floor, command = runs.pop("floor"), runs.pop("command")
        if any(r["status"] != 0 for r in command):
            raise RuntimeError(f"irmodel inspect {path} failed")
        summaries = [json.dumps(r["summary"], sort_keys=True) for side in runs.values() for r in side]
        anon = memory_runs(launcher, "inspect", ["ours", "reference"], path, extra={"reference": ref_args})
        out[key] = {"ours": {**summarize_runs(runs["ours"]), "peak_anon_kb": anon["ours"]},
                    "reference": {**summarize_runs(runs["reference"]), "peak_anon_kb": anon["reference"]},
                    "floor": summarize_runs(floor), "command": summarize_runs(command),
                    "agree": len(set(summaries)) == 1, "summary": runs["ours"][0]["summary"],
                    "protobuf_backend": runs["reference"][0].get("protobuf_backend"),
                    "external_skipped": bool(ref_args)}
    return {"models": out, "protobuf_backend": out[INSPECT_MODELS[0]]["protobuf_backend"],
            "rounds": repeat * INSPECT_RUNS_PER_REPEAT}


def case_walk(launcher: Launcher, models: dict, repeat: int) -> dict:
    """The full walk (`cases.walk`) of each of `WALK_MODELS`, ours against the reference."""
    out: dict = {}
    for key in WALK_MODELS:
        model = models[key]
        path, ref_args = model["path"], _reference_args(key)
        warm([path])
        runs = rounds([("ours", lambda: child(launcher, "walk", "ours", path)),
                       ("reference", lambda: child(launcher, "walk", "reference", path, *ref_args))], repeat)
        nodes = {r["nodes"] for side in runs.values() for r in side}
        anon = memory_runs(launcher, "walk", ["ours", "reference"], path, extra={"reference": ref_args})
        out[key] = {"ours": {**summarize_runs(runs["ours"]), "peak_anon_kb": anon["ours"]},
                    "reference": {**summarize_runs(runs["reference"]), "peak_anon_kb": anon["reference"]},
                    "paired": [o["whole"] / r["whole"] for o, r in zip(runs["ours"], runs["reference"])],
                    "nodes_ok": nodes == {model["nodes"]}, "nodes": sorted(nodes),
                    "external_skipped": bool(ref_args)}
    return {"models": out}


def _importtime_total(stderr: str, module: str) -> int | None:
    """The cumulative microseconds ``-X importtime`` gives the top-level import of ``module``."""
    for line in stderr.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[2].rstrip() == f" {module}":
            return int(parts[1])
    return None


def case_startup(launcher: Launcher, models: dict, repeat: int) -> dict:
    """``python -X importtime -c "import irmodel"`` (and ``import onnx``), each in a fresh process.

    Run from the checkout, so ``import irmodel`` imports it (an editable install's finder
    is imported by ``site``, before and outside irmodel's line).  Also the whole-process
    time of a bare interpreter, of ``import irmodel`` and of importing it and opening
    the GPT-2-shaped model, for scale.
    """
    n = STARTUP_RUNS_PER_REPEAT * repeat
    gpt2 = models["gpt2"]["path"]
    open_code = f"import irmodel; m = irmodel.load({gpt2!r}); m.graph.node[0].op_type"
    probes = {"bare": "pass", "irmodel": "import irmodel", "onnx": "import onnx", "irmodel_open": open_code,
              "irmodel_open_nocache": open_code}
    # CPU time of the same import (time.process_time_ns around it, printed): unlike the wall
    # clock of -X importtime, it does not count the time the process waits for a core
    # while other work runs on the machine.
    probes["irmodel_cpu"] = ("import time; t0 = time.process_time_ns(); import irmodel; "
                             "print(time.process_time_ns() - t0)")
    warm([gpt2])
    runs: dict = {k: [] for k in probes}
    totals: dict = {"irmodel": [], "onnx": [], "irmodel_cpu": []}
    for i in range(n):
        for name, code in (probes.items() if i % 2 == 0 else reversed(probes.items())):
            env = ["env", "IRMODEL_CACHE_DIR="] if name.endswith("_nocache") else []  # no scan-code cache
            status, out, err, secs = launcher.run([*env, sys.executable, "-X", "importtime", "-c", code])
            if status:
                raise RuntimeError(f"startup probe {name!r} failed:\n{err}")
            runs[name].append(secs)
            if name == "irmodel_cpu":
                totals[name].append(int(out.split()[-1]) / 1e9)
            elif name in totals:
                totals[name].append(_importtime_total(err, name) / 1e6)
    return {"n": n, "whole": runs, "import": totals}


def _check_or_infer(launcher: Launcher, models: dict, repeat: int, case: str, keys: tuple,
                    scratch: str) -> dict:
    """``check``: ``irmodel.check_model(path)`` against ``onnx.checker.check_model(path)``;
    ``infer``: ``irmodel.infer_shapes`` against ``onnx.shape_inference.infer_shapes(...,
    data_prop=True)`` (``infer_shapes_path`` for a file over 2 GiB), each side on the model
    as loaded without its external data."""
    # The floor: a child that imports and does nothing, sampled the same way.
    out: dict = {"floor_anon_kb": child(launcher, "floor", "bare", sample_anon=True)["peak_anon_kb"]}
    for key in keys:
        model = models[key]
        path = model["path"]
        ref_args = (os.path.join(scratch, "inferred.onnx"),) if case == "infer" else ()
        warm([path])
        runs = rounds([("ours", lambda: child(launcher, case, "ours", path)),
                       ("reference", lambda: child(launcher, case, "reference", path, *ref_args))], repeat)
        anon = memory_runs(launcher, case, ["ours", "reference"], path, extra={"reference": ref_args})
        field = "verdict" if case == "check" else "value_infos"
        out[key] = {"ours": {**summarize_runs(runs["ours"]), "peak_anon_kb": anon["ours"]},
                    "reference": {**summarize_runs(runs["reference"]), "peak_anon_kb": anon["reference"]},
                    "paired": [o["whole"] / r["whole"] for o, r in zip(runs["ours"], runs["reference"])],
                    "ours_result": sorted({str(r[field]) for r in runs["ours"]}),
                    "reference_result": sorted({str(r[field]) for r in runs["reference"]})}
        if case == "check":
            out[key]["problems"] = runs["ours"][0]["problems"]
        _remove(os.path.join(scratch, "inferred.onnx"))
    floor = out.pop("floor_anon_kb")
    return {"models": out, "floor_anon_kb": floor}


class Context:
    """What a case function gets: the launcher, the models, the number of rounds, a scratch directory."""

    def __init__(self, launcher: Launcher, models: dict, repeat: int, scratch: str):
        self.launcher, self.models, self.repeat, self.scratch = launcher, models, repeat, scratch


#: The suite, in the order it runs and RESULTS.md shows it: ``(name, run(context) -> result)``;
#: ``report.SECTIONS[name]`` renders each result.
CASES = [
    ("startup", lambda c: case_startup(c.launcher, c.models, c.repeat)),
    ("inspect", lambda c: case_inspect(c.launcher, c.models, c.repeat)),
    ("walk", lambda c: case_walk(c.launcher, c.models, c.repeat)),
    ("resave", lambda c: case_resave(c.launcher, c.models, c.repeat, c.scratch)),
    ("edit", lambda c: case_edit(c.launcher, c.models, c.repeat, c.scratch)),
    ("external", lambda c: case_external(c.launcher, c.models, c.repeat)),
    ("check", lambda c: _check_or_infer(c.launcher, c.models, c.repeat, "check", CHECK_MODELS, c.scratch)),
    ("infer", lambda c: _check_or_infer(c.launcher, c.models, c.repeat, "infer", INFER_MODELS, c.scratch)),
]


def case_resave(launcher: Launcher, models: dict, repeat: int, scratch: str) -> dict:
    """Load and save unchanged, on the weights and the structure model; outputs compared by SHA1."""
    results = {}
    for key in ("weights", "structure"):
        model = models[key]
        warm([model["path"]])

        def run(side, model=model):
            out = os.path.join(scratch, f"resave-{side}.onnx")
            r = child(launcher, "resave", side, model["path"], out)
            r["identical"] = (os.path.getsize(out) == model["model_bytes"] and sha1_file(out) == model["sha1"])
            _remove(out)
            return r
        runs = rounds([("ours", lambda: run("ours")), ("reference", lambda: run("reference"))], repeat)
        results[key] = {side: {**summarize_runs(rs), "identical": sum(r["identical"] for r in rs)}
                        for side, rs in runs.items()}
    return results


def case_edit(launcher: Launcher, models: dict, repeat: int, scratch: str) -> dict:
    """Set producer_name and save: ours, a plain copy (and one fsynced), the reference."""
    model = models["weights"]
    path = model["path"]
    warm([path])
    digests: dict = {"ours": set(), "reference": set()}
    checks: dict = {"ours": [], "reference": []}

    def run(side):
        out = os.path.join(scratch, f"edit-{side}.onnx")
        r = child(launcher, "edit", side, path, out, EDIT_NAME)
        if side in ("ours", "reference"):
            c = child(launcher, "check_edit", "ours", path, out, EDIT_NAME)
            checks[side].append(c["ok_name"] and c["ok_size"] and c["ok_graph"])
            r["size_delta"] = c["size"] - model["model_bytes"]
            digests[side].add(sha1_file(out))
        else:
            checks.setdefault(side, []).append(os.path.getsize(out) == model["model_bytes"])
        _remove(out)
        return r
    sides = ["ours", "copy", "copy-fsync", "reference"]
    runs = rounds([(s, lambda s=s: run(s)) for s in sides], repeat)
    out = {side: summarize_runs(runs[side]) for side in sides}
    out.update({"checks": {side: sum(v) for side, v in checks.items()}, "n": repeat,
                "size_delta": runs["ours"][0]["size_delta"],
                "same_as_reference": len(digests["ours"]) == 1 and digests["ours"] == digests["reference"],
                "structure_bytes": model["model_bytes"] - model["payload_bytes"]})
    return out


def case_external(launcher: Launcher, models: dict, repeat: int) -> dict:
    """bench_external_data.py's three sides: its measurement code, started by the launcher."""
    model = models["external"]
    warm([model["path"], model["data_path"]])

    def run(side):
        r = run_json(launcher, bex.child_command(side, model["path"]), f"external/{side}")
        r["work"] = r.pop("wall")
        return r
    sides = [s for s, _ in bex.SIDES]
    runs = rounds([(s, lambda s=s: run(s)) for s in sides], repeat)
    out = {side: summarize_runs(runs[side]) for side in sides}
    out["same_tensor"] = {r["sha1"] for rs in runs.values() for r in rs} == {model["small_sha1"]}
    out["tensor_bytes"] = model["small_bytes"]
    return out


# -- the machine ------------------------------------------------------------------------------

def _first(path: str, key: str) -> str | None:
    try:
        with open(path) as fh:
            for line in fh:
                k, sep, v = line.partition(":" if path.startswith("/proc") else "=")
                if sep and k.strip() == key:
                    return v.strip().strip('"')
    except OSError:
        pass
    return None


def _git(*args: str) -> str:
    try:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


def environment(argv: list) -> dict:
    from importlib.metadata import PackageNotFoundError, version  # metadata only: no import of the packages

    def ver(name):
        try:
            return version(name)
        except PackageNotFoundError:
            return "not installed"
    mem = _first("/proc/meminfo", "MemTotal")
    changed = [ln for ln in _git("status", "--porcelain").splitlines() if ln.strip()]
    return {
        "date": time.strftime("%Y-%m-%d %H:%M %Z"),
        "cpu": _first("/proc/cpuinfo", "model name") or platform.processor() or platform.machine(),
        "cores": os.cpu_count(),
        "ram_gib": int(mem.split()[0]) / (1 << 20) if mem else None,
        "os": f"{_first('/etc/os-release', 'PRETTY_NAME') or platform.system()} "
              f"({platform.system()} {platform.release()}, {platform.machine()})",
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "versions": {n: ver(n) for n in ("onnx", "protobuf", "numpy", "ml_dtypes")},
        "commit": _git("rev-parse", "--short=12", "HEAD") or "unknown",
        "dirty": len(changed),
        "command": shlex.join(["python", *argv]),
        "interpreter": sys.executable,
        "editable_hooks": editable_hooks(),
        "bare_start_ms": bare_start_ms(),
    }


def editable_hooks() -> list:
    """The editable-install finders this interpreter's ``site`` imported at start-up.

    Why it matters: setuptools' finder for a ``pip install -e`` imports pathlib, urllib and
    re into every Python process started (measured here: a bare start 42 ms instead of
    16 ms), on both sides of every case.  A user's ``pip install`` has none, so a run with
    one measures the developer's set-up rather than the user's, and says so.
    """
    return sorted(n for n in sys.modules if n.startswith("__editable__"))


def bare_start_ms(runs: int = 7) -> float:
    """Median wall time of ``python -c pass`` with the children's interpreter: the floor
    under every whole-process figure."""
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1000


# -- main ---------------------------------------------------------------------------------------

def main(argv=None) -> int:
    argv = sys.argv if argv is None else argv
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="/tmp/irmodel-bench", help="where the models are generated (reused)")
    ap.add_argument("--scale", type=float, default=1.0, help="multiply every model's size (0.0001: seconds)")
    ap.add_argument("--repeat", type=int, default=3, help="runs per side of each case; medians are reported")
    ap.add_argument("--results", default=None,
                    help="the file to update (default benchmarks/RESULTS.md; with --cases or --case, none: "
                         "the results are printed)")
    ap.add_argument("--cases", default=None,
                    help="run only these cases, comma-separated (of: " + ", ".join(n for n, _ in CASES) + ")"
                         ", and print their block of RESULTS.md")
    ap.add_argument("--case", action="append", choices=[n for n, _ in CASES], metavar="NAME",
                    help="run only this case (repeatable) and print its results as JSON")
    ap.add_argument("--walk-models", help="with the walk case: a comma-separated subset of "
                                          f"{','.join(WALK_MODELS)}")
    args = ap.parse_args(argv[1:])
    if args.scale <= 0 or args.repeat < 1:
        ap.error("--scale must be > 0 and --repeat >= 1")
    selected = [n for n, _ in CASES] if args.cases is None else args.cases.split(",")
    if args.case:
        selected = list(args.case)
    unknown = sorted(set(selected) - {n for n, _ in CASES})
    if unknown:
        ap.error(f"unknown cases: {', '.join(unknown)}")
    if args.results is None and args.cases is None and not args.case:
        args.results = os.path.join(BENCH, "RESULTS.md")
    if args.walk_models:  # case_walk reads the module constant
        globals()["WALK_MODELS"] = tuple(k for k in args.walk_models.split(",") if k in WALK_MODELS) or WALK_MODELS
    dont_write = os.environ.pop("PYTHONDONTWRITEBYTECODE", None) is not None  # children use .pyc
    t_start = time.perf_counter()
    env = environment(argv)
    env["dont_write_bytecode"] = dont_write
    if env["editable_hooks"]:
        print(f"warning: this interpreter's site imports {', '.join(env['editable_hooks'])} (an editable "
              f"install) in every process: a bare start takes {env['bare_start_ms']:.0f} ms here. Users' "
              "installs have none; for figures of record run from a venv without irmodel installed "
              "(the children import it from this checkout); see RESULTS.md, 'How it is measured'.",
              file=sys.stderr)
    check_disk(args.out, args.scale)
    print(f"models in {args.out} (scale {args.scale:g})", file=sys.stderr)
    models = ensure_models(args.out, args.scale)
    t_models = time.perf_counter() - t_start
    # A scratch directory of this run's own: two runs sharing --out (the models are worth
    # sharing) must not write their children's results and outputs over each other's.
    scratch = tempfile.mkdtemp(prefix="scratch-", dir=args.out)
    launcher = Launcher(scratch)
    cases = {}
    context = Context(launcher, models, args.repeat, scratch)
    try:
        for name, step in CASES:
            if name not in selected:
                continue
            print(f"case {name} ...", file=sys.stderr)
            compile_bytecode()  # again before each case: cheap when nothing changed
            cases[name] = step(context)
    finally:
        launcher.close()
        shutil.rmtree(scratch, ignore_errors=True)
    env["seconds"] = time.perf_counter() - t_start
    env["model_seconds"] = t_models
    env["inspect_rounds"] = cases["inspect"]["rounds"] if "inspect" in cases else None  # header: only if it ran
    made = [k for k, m in models.items() if m["generated"]]
    env["models_how"] = f"generated: {', '.join(made)}" if made else "all reused"
    env["parent_peak_kb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    if args.case:  # a subset: its results as JSON; RESULTS.md is made from a full run only
        print(json.dumps({"environment": env, "cases": cases}, indent=1, default=str))
        return 0
    block = report.render(env, models, cases, scale=args.scale, repeat=args.repeat)
    if args.results is None:
        print(block)
        return 0
    report.update_results(args.results, block)
    print(f"wrote {args.results} in {env['seconds']:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
