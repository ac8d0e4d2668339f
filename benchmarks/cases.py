"""The code each benchmark case measures: one (case, side) per fresh process.

`run_all.py` starts ``python -c "import cases; cases.main()" CASE SIDE ARGS...`` and reads
the one line this prints, a Python literal (``repr`` of plain values, read back with
``ast.literal_eval``: importing ``json`` would cost every measured process a few ms of
the harness's own)::

    {"work": seconds, "peak_kb": ru_maxrss, "base_kb": ru_maxrss after the imports,
     "anon_kb": RssAnon, "file_kb": RssFile, ...what the case reports}

A side's setup function does its imports (only what that side needs: the reference side
never imports irmodel, ours never imports onnx or protobuf) and returns ``(work,
report)``.  ``work()`` is the timed part; ``report(result)`` runs after the time and the
peak RSS are taken, so checks cost nothing that is measured.  ``anon_kb``/``file_kb``
are the anonymous and the file-backed resident memory right after the work (``work``
returns the model, so that it is still alive then): mapped file pages count in RSS, and
so in ``ru_maxrss``, but they are page cache, shared and reclaimable.  With
``BENCH_SAMPLE_ANON=1`` in the environment (a separate, untimed run: the thread would
cost the timed ones), ``peak_anon_kb`` is the highest ``RssAnon`` a thread sampling
``/proc/self/status`` every millisecond saw during the work: a lower bound where C code
holds the GIL for long stretches, as the reference's parser does; Python code gives the
thread its turn every few milliseconds.

New cases (the checker's, inference's) add their sides to `CASES` below and a step to
``run_all.CASES``; models are found by name in ``run_all.MODELS``.
"""

from __future__ import annotations

import os
import resource
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)  # the checkout, uncommitted changes included


# -- b. the full walk, the same code for both sides ---------------------------------------

def walk_attr(a):
    return (a.name, a.type, a.f, a.i, a.s, list(a.ints), list(a.floats), list(a.strings))


def walk(m):
    for node in m.graph.node:
        op = node.op_type; ins = list(node.input); outs = list(node.output)  # noqa: E702,F841
        for a in node.attribute:
            walk_attr(a)


# -- a. the inspect summary computed over onnx's objects ------------------------------------

# The `bits` column of irmodel._dtypes.rows, copied: the reference side must not import irmodel.
_ELEMENT_BITS = {
    1: 32, 2: 8, 3: 8, 4: 16, 5: 16, 6: 32, 7: 64, 8: 0, 9: 8, 10: 16, 11: 64, 12: 32, 13: 64,
    14: 64, 15: 128, 16: 16, 17: 8, 18: 8, 19: 8, 20: 8, 21: 4, 22: 4, 23: 4, 24: 8, 25: 2,
    26: 2, 27: 6, 28: 6,
}


def onnx_summary(m) -> dict:
    """What `irmodel._report.summary.summarize` reports of the main graph, from onnx's protobuf objects.

    Node count, op histogram, initializer count and bytes by dtype (from ``dims``, as
    ours: the payload is not read), inputs and outputs with element type and shape.
    Ours does more (sub-graphs, functions, external data files); on the benchmark
    models those are empty.
    """
    from onnx import TensorProto

    def dtype_name(code):
        try:
            return TensorProto.DataType.Name(code)
        except ValueError:
            return f"<unknown dtype {code}>"

    def nbytes(t):
        bits, n = _ELEMENT_BITS.get(t.data_type), 1
        for d in t.dims:
            n = None if n is None or d < 0 else n * d
        if bits == 0:
            return sum(len(s) for s in t.string_data)
        if bits is not None and n is not None:
            return (n * bits + 7) // 8
        if t.data_location == TensorProto.EXTERNAL:
            length = {e.key: e.value for e in t.external_data}.get("length", "")
            return int(length) if length.isdigit() else 0
        return len(t.raw_data)

    def value_infos(values):
        out = []
        for v in values:
            tt = v.type.tensor_type
            shape = [d.dim_value if d.HasField("dim_value") else
                     (d.dim_param if d.HasField("dim_param") else None) for d in tt.shape.dim] \
                if tt.HasField("shape") else None
            out.append({"name": v.name, "elem_type": dtype_name(tt.elem_type), "shape": shape})
        return out

    g = m.graph
    ops: dict = {}
    for n in g.node:
        key = (n.domain + "::" if n.domain not in ("", "ai.onnx") else "") + n.op_type
        ops[key] = ops.get(key, 0) + 1
    by_dtype: dict = {}
    for t in g.initializer:
        entry = by_dtype.setdefault(dtype_name(t.data_type), {"count": 0, "bytes": 0})
        entry["count"] += 1
        entry["bytes"] += nbytes(t)
    return {"node_count": len(g.node), "op_types": ops, "initializer_count": len(g.initializer),
            "initializers_by_dtype": by_dtype, "inputs": value_infos(g.input), "outputs": value_infos(g.output)}


def comparable(summary: dict) -> dict:
    """The fields both summaries have, in one form (so the parent can check they agree)."""
    keep = ("name", "elem_type", "shape")
    return {"node_count": summary["node_count"], "op_types": dict(sorted(summary["op_types"].items())),
            "initializer_count": summary["initializer_count"],
            "initializers_by_dtype": dict(sorted(summary["initializers_by_dtype"].items())),
            "inputs": [{k: v.get(k) for k in keep} for v in summary["inputs"]],
            "outputs": [{k: v.get(k) for k in keep} for v in summary["outputs"]]}


# -- the sides of each case --------------------------------------------------------------

def inspect_ours(path):
    from irmodel._report.bytesummary import summarize_path

    def work():  # what `irmodel inspect` does: from the bytes if it can, else load and walk
        found = summarize_path(path)
        if found is not None:
            return None, found[0]
        import irmodel
        from irmodel._report.summary import summarize

        m = irmodel.load(path, load_external_data=False)
        return m, summarize(m, base_dir=os.path.dirname(os.path.abspath(path)))
    return work, lambda r: {"summary": comparable(r[1]), "from_bytes": r[0] is None}


def inspect_command(path):
    """The command itself, ``irmodel inspect PATH``, as its program runs it
    (`irmodel.cli.main` with the command line in ``sys.argv``): what `inspect_ours` runs,
    plus the command's own modules, reading its command line (the bare form, without
    argparse: `irmodel.cli.simple_args`) and printing the summary as text, which goes to
    stdout before this harness's line."""
    def work():
        from irmodel.cli import main as command

        sys.argv = ["irmodel", "inspect", path]
        return command()
    return work, lambda status: {"status": status}


def inspect_reference(path, external="load"):
    import onnx

    def work():
        m = onnx.load(path, load_external_data=external != "skip")
        return m, onnx_summary(m)

    def report(r):
        from google.protobuf.internal import api_implementation
        return {"summary": comparable(r[1]), "protobuf_backend": api_implementation.Type()}
    return work, report


def walk_ours(path):
    import irmodel

    def work():
        m = irmodel.load(path)
        walk(m)
        return m
    return work, lambda m: {"nodes": len(m.graph.node)}


def walk_reference(path, external="load"):
    """``external="skip"``: ``load_external_data=False`` (a walk reads the graph, not gigabytes of weights)."""
    import onnx

    def work():
        m = onnx.load(path, load_external_data=external != "skip")
        walk(m)
        return m
    return work, lambda m: {"nodes": len(m.graph.node)}


def resave_ours(path, out):
    import irmodel

    def work():
        m = irmodel.load(path)
        irmodel.save(m, out)
        return m
    return work, lambda _: {}


def resave_reference(path, out):
    import onnx

    def work():
        m = onnx.load(path)
        onnx.save_model(m, out)
        return m
    return work, lambda _: {}


def edit_ours(path, out, name):
    import irmodel

    def work():
        m = irmodel.load(path)
        m.producer_name = name
        irmodel.save(m, out)
        return m
    return work, lambda _: {}


def edit_copy(path, out, name):
    import shutil

    def work():
        shutil.copyfile(path, out)
    return work, lambda _: {}


def edit_copy_fsync(path, out, name):
    """The plain copy made as durable as `irmodel.save` makes its output (fsync before done)."""
    import shutil

    def work():
        shutil.copyfile(path, out)
        fd = os.open(out, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    return work, lambda _: {}


def edit_reference(path, out, name):
    import onnx

    def work():
        m = onnx.load(path)
        m.producer_name = name
        onnx.save_model(m, out)
        return m
    return work, lambda _: {}


def check_edit(path, out, name):
    """Not a measurement: is ``out`` ``path`` with ``producer_name`` set to ``name``?"""
    import irmodel
    from wirefmt.varint import encode_varint

    def work():
        a, b = irmodel.load(path), irmodel.load(out)

        def field(s):  # tag, length, bytes of a present string field
            data = s.encode()
            return 1 + len(encode_varint(len(data))) + len(data)
        expected = os.path.getsize(path) - field(a.producer_name) + field(name)
        return {"producer_name": b.producer_name, "ok_name": b.producer_name == name,
                "size": os.path.getsize(out), "expected_size": expected,
                "ok_size": os.path.getsize(out) == expected,
                "ok_graph": (len(b.graph.node) == len(a.graph.node)
                             and [t.name for t in b.graph.initializer] == [t.name for t in a.graph.initializer]
                             and b.ir_version == a.ir_version)}
    return work, lambda r: r


def floor_bare(*_args):
    """Nothing at all: what the child harness and its sampler hold with no work and no import
    of either side (the floor under every peak-memory figure)."""
    return (lambda: None), lambda _r: {}


def check_ours(path):
    import irmodel

    def work():
        try:
            irmodel.check_model(path)
        except irmodel.ValidationError as exc:
            return "invalid", len(exc.problems)
        return "valid", 0
    return work, lambda r: {"verdict": r[0], "problems": r[1]}


def check_reference(path):
    import onnx.checker

    def work():
        try:
            onnx.checker.check_model(path)
        except Exception:  # noqa: BLE001 - the reference's errors have several types
            return "invalid", 1  # it stops at the first problem
        return "valid", 0
    return work, lambda r: {"verdict": r[0], "problems": r[1]}


def infer_ours(path):
    import irmodel

    def work():
        return irmodel.infer_shapes(irmodel.load(path, load_external_data=False), data_prop=True)
    return work, lambda m: {"value_infos": len(m.graph.value_info)}


def infer_reference(path, out=None):
    """In memory (weights left outside: ``load_external_data=False``); a file over 2 GiB,
    which protobuf cannot hold, by ``infer_shapes_path`` into ``out``."""
    import onnx
    import onnx.shape_inference

    def work():
        if os.path.getsize(path) >= 1 << 31:
            onnx.shape_inference.infer_shapes_path(path, out, data_prop=True)
            return onnx.load(out, load_external_data=False)
        return onnx.shape_inference.infer_shapes(onnx.load(path, load_external_data=False), data_prop=True)
    return work, lambda m: {"value_infos": len(m.graph.value_info)}


CASES = {
    ("floor", "bare"): floor_bare,
    ("check", "ours"): check_ours, ("check", "reference"): check_reference,
    ("infer", "ours"): infer_ours, ("infer", "reference"): infer_reference,
    ("inspect", "ours"): inspect_ours, ("inspect", "reference"): inspect_reference,
    ("inspect", "command"): inspect_command,
    ("walk", "ours"): walk_ours, ("walk", "reference"): walk_reference,
    ("resave", "ours"): resave_ours, ("resave", "reference"): resave_reference,
    ("edit", "ours"): edit_ours, ("edit", "copy"): edit_copy,
    ("edit", "copy-fsync"): edit_copy_fsync, ("edit", "reference"): edit_reference,
    ("check_edit", "ours"): check_edit,
}


def _status_kb(*keys) -> dict:
    found = {}
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                k, _, v = line.partition(":")
                if k in keys:
                    found[k] = int(v.split()[0])
    except OSError:
        pass
    return found


class _AnonSampler:
    """The highest ``RssAnon`` seen while the work runs (a daemon thread; see the module docstring)."""

    def __init__(self):
        import threading

        self.peak = _status_kb("RssAnon").get("RssAnon", 0)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while not self.stop.wait(0.001):
            self.peak = max(self.peak, _status_kb("RssAnon").get("RssAnon", 0))

    def done(self) -> int:
        self.stop.set()
        self.thread.join()
        return max(self.peak, _status_kb("RssAnon").get("RssAnon", 0))


def main() -> None:
    case, side, *args = sys.argv[1:]
    work, report = CASES[case, side](*args)
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    sampler = _AnonSampler() if os.environ.get("BENCH_SAMPLE_ANON") == "1" else None
    t0 = time.perf_counter()
    result = work()
    elapsed = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    mem = _status_kb("RssAnon", "RssFile")
    out = {"work": elapsed, "peak_kb": peak, "base_kb": base,
           "peak_anon_kb": sampler.done() if sampler is not None else None,
           "anon_kb": mem.get("RssAnon"), "file_kb": mem.get("RssFile")}
    out.update(report(result))
    print(repr(out))


if __name__ == "__main__":
    main()
