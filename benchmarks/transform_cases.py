"""The sides of the transformation benchmarks: one (case, side) per fresh process.

``python benchmarks/transform_cases.py CASE SIDE ARGS...`` does the whole job a user
would (load, transform, save) with one library, then prints one line, a Python literal
(``{"work": seconds of the job, ...}``), and ``#done``, and waits until its standard
input closes, so that the parent (`wholeproc.run`) reads the process's memory figures
before it exits.  ``ours`` never imports onnx or protobuf; ``onnx`` never imports irmodel.
A side that raises reports ``{"error": "..."}`` (onnx's converter says "No Adapter"
for most steps down): the parent lists it as raised, with the time it took to raise.
"""

from __future__ import annotations

import json
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)  # the checkout, uncommitted changes included


def _lib(side: str):
    if side == "onnx":
        import onnx

        return onnx
    import irmodel

    return irmodel


def _save(side: str, model, out: str) -> None:
    if side == "onnx":
        import onnx

        onnx.save_model(model, out)
    else:
        import irmodel

        irmodel.save(model, out)


def print_model(side: str, model: str, out: str) -> dict:
    """The model as text in a file: ours streams it (`irmodel.printer.write_text`); onnx
    makes the whole string (``onnx.printer.to_text``), then writes it."""
    if side == "onnx":
        import onnx
        import onnx.printer

        text = onnx.printer.to_text(onnx.load(model))
        with open(out, "w", encoding="utf-8") as fh:
            fh.write(text)
        return {"chars": len(text)}
    import irmodel
    from irmodel.printer import write_text

    with open(out, "w", encoding="utf-8") as fh:
        write_text(irmodel.load(model), fh)
    return {}


def parse_text(side: str, text: str, out: str) -> dict:
    """Read a model's text (each side its own printer's), parse it, save the model."""
    with open(text, encoding="utf-8") as fh:
        source = fh.read()
    if side == "onnx":
        import onnx.parser

        m = onnx.parser.parse_model(source)
    else:
        from irmodel.parser import parse_model

        m = parse_model(source)
    del source
    _save(side, m, out)
    return {"nodes": len(m.graph.node), "initializers": len(m.graph.initializer)}


def convert(side: str, model: str, target: str, out: str) -> dict:
    """Load, `convert_version` to ``target``, save (the converted model's node count)."""
    if side == "onnx":
        import onnx
        import onnx.version_converter as vc

        m = onnx.load(model)
    else:
        import irmodel
        import irmodel.version_converter as vc

        m = irmodel.load(model)
    converted = vc.convert_version(m, int(target))
    _save(side, converted, out)
    return {"nodes": len(converted.graph.node), "opset": [o.version for o in converted.opset_import if not o.domain]}


def extract(side: str, model: str, out: str, inputs: str, outputs: str) -> dict:
    """``utils.extract_model`` with onnx's defaults (check and infer)."""
    if side == "onnx":
        import onnx.utils as utils
    else:
        from irmodel import utils
    utils.extract_model(model, out, json.loads(inputs), json.loads(outputs))
    return {"out_bytes": os.path.getsize(out)}


def inline(side: str, model: str, out: str) -> dict:
    """Load, ``inliner.inline_local_functions``, save."""
    lib = _lib(side)
    if side == "onnx":
        import onnx.inliner as inliner
    else:
        from irmodel import inliner
    m = inliner.inline_local_functions(lib.load(model))
    _save(side, m, out)
    return {"nodes": len(m.graph.node), "functions": len(m.functions)}


def merge(side: str, first: str, second: str, out: str, io_map: str, prefix2: str) -> dict:
    """Load both, ``compose.merge_models(m1, m2, io_map, prefix2=...)``, save."""
    lib = _lib(side)
    if side == "onnx":
        import onnx.compose as compose
    else:
        from irmodel import compose
    pairs = [tuple(p) for p in json.loads(io_map)]
    m = compose.merge_models(lib.load(first), lib.load(second), pairs, prefix2=prefix2 or None)
    _save(side, m, out)
    return {"nodes": len(m.graph.node), "initializers": len(m.graph.initializer)}


CASES = {"print": print_model, "parse": parse_text, "convert": convert, "extract": extract, "inline": inline,
         "merge": merge}


def main() -> None:
    case, side, *args = sys.argv[1:]
    t0 = time.perf_counter()
    try:
        report = CASES[case](side, *args)
    except Exception as exc:  # noqa: BLE001 - a side that raises is a result (onnx's "No Adapter")
        report = {"error": f"{type(exc).__name__}: {str(exc).strip().splitlines()[0][:240] if str(exc).strip() else ''}"}
    report["work"] = time.perf_counter() - t0
    sys.stdout.write(repr(report) + "\n#done\n")
    sys.stdout.flush()
    sys.stdin.read()  # the parent closes it once it has read this process's memory


if __name__ == "__main__":
    main()
