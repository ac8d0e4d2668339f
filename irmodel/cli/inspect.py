"""``irmodel inspect PATH [--json]``: a summary that never touches weight bytes."""

from __future__ import annotations

import sys
TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs every process a few ms
    import argparse

from wirefmt.safetext import as_text, json_ready

from .progress import human_bytes
from .common import EXIT_OK, check_file, load_model, model_dir, progress_line, write_lines


def simple_args(argv: list[str]) -> argparse.Namespace | None:
    """The parser's reading of ``inspect PATH`` (no option, a path that does not start with
    ``-``), made without the parser (`irmodel.cli.simple_args`); None for any other
    command line, which the parser reads."""
    if len(argv) != 2 or argv[0] != "inspect" or argv[1].startswith("-"):
        return None
    from types import SimpleNamespace  # noqa: PLC0415 - only for this form (argparse's Namespace is not imported)

    return SimpleNamespace(command="inspect", path=argv[1], json=False, func=run)  # type: ignore[return-value]


def add_parser(sub: argparse._SubParsersAction) -> None:
    c = sub.add_parser("inspect", help="summarise a model without reading its weights")
    c.add_argument("path", metavar="PATH")
    c.add_argument("--json", action="store_true", help="print the summary as JSON")
    c.set_defaults(func=run)


def _inspect_lines(s: dict, path: str, size: int) -> list:
    from .._report.shown import name_text, quote  # noqa: PLC0415
    from ..limits import is_too_large, size_text  # noqa: PLC0415
    from .._report.entries import type_text  # noqa: PLC0415

    def opt(v) -> str:
        if v is None or (not isinstance(v, int) and not len(v)):
            return "(none)"
        return str(v) if isinstance(v, int) else name_text(v)

    def nbytes(n: int) -> str:
        if is_too_large(n):
            return size_text(n, "bytes")
        return f"{n} bytes" + (f" ({human_bytes(n)})" if n >= 1024 else "")

    full_doc = as_text(s["doc_string"])
    doc = full_doc.split("\n", 1)[0]
    if doc != full_doc:
        doc += " ..."
    out = [f"file:           {name_text(path)}, {nbytes(size)}",
           f"ir_version:     {opt(s['ir_version']) if s['ir_version'] is not None else '(missing)'}",
           "producer:       " + (" ".join(name_text(p) for p in (s["producer_name"], s["producer_version"]) if p)
                                  or "(none)"),
           f"domain:         {opt(s['domain'])}",
           f"model_version:  {s['model_version']}",
           f"doc_string:     {opt(doc)}",
           "opset_import:   " + (", ".join(f"{name_text(o['domain'] or 'ai.onnx')} {o['version']}"
                                           for o in s["opset_import"]) or "(none)"),
           f"metadata:       {len(s['metadata_props']) or '(none)'}"]
    out += [f"  {name_text(p['key'])} = {quote(p['value'])}" for p in s["metadata_props"]]
    out.append(f"graph:          {opt(s['graph_name'])}")
    for title in ("inputs", "outputs"):
        values = s[title]
        shown = [v for v in values if not (title == "inputs" and v["initializer"])]
        out.append(f"{title + ':':<16}{len(values)}")
        width = max((len(name_text(v["name"])) for v in shown), default=0)
        out += [f"  {name_text(v['name']):<{width}}  {type_text(v)}" for v in shown]
        if len(shown) < len(values):
            out.append(f"  (and {len(values) - len(shown)} inputs that are initializers)")
    out.append(f"nodes:          {s['node_count']}")
    ops = [(name_text(op), n) for op, n in s["op_types"].items()]
    width = max((len(op) for op, _ in ops), default=0)
    out += [f"  {op:<{width}}  {n}" for op, n in ops]
    out.append(f"initializers:   {s['initializer_count']}, {nbytes(s['initializer_bytes'])}")
    width = max((len(dt) for dt in s["initializers_by_dtype"]), default=0)
    out += [f"  {dt:<{width}}  {e['count']}, {nbytes(e['bytes'])}" for dt, e in s["initializers_by_dtype"].items()]
    if s["sparse_initializer_count"]:
        out.append(f"sparse initializers: {s['sparse_initializer_count']}")
    out.append(f"external data:  {len(s['external_data']) or '(none)'}")
    for e in s["external_data"]:
        where = f"{nbytes(e['file_size'])} on disk" if e["status"] == "ok" else e["status"]
        if "problem" in e:
            where += f" ({e['problem']})"
        location = "(no location)" if e["location"] is None else name_text(e["location"])
        out.append(f"  {location}: {where}; {e['tensors']} tensors, "
                   f"{nbytes(e['bytes'])} referenced")
    out.append(f"functions:      {len(s['functions']) or '(none)'}")
    out += [f"  {name_text((as_text(f['domain']) + '::' if f['domain'] else '') + as_text(f['name']))}"
            f"{':' + name_text(f['overload']) if f['overload'] else ''} ({f['nodes']} nodes)"
            for f in s["functions"]]
    out.append(f"subgraphs:      {s['subgraph_count']}")
    if s["subgraph_count"] or s["training_info_count"]:
        out.append(f"nodes in all graphs: {s['total_node_count']}")
    if s["training_info_count"]:
        out.append(f"training_info:  {s['training_info_count']}")
    return out


def run(args: argparse.Namespace) -> int:
    from .._report.bytesummary import summarize_path  # noqa: PLC0415

    check_file(args.path)
    with progress_line("inspect: nodes") as progress:
        # A plain model is summarized from its bytes, no message class imported; any
        # other is loaded and walked (which also reports a broken file as loading does).
        found = summarize_path(args.path, progress)
        if found is None:
            from .._report.summary import summarize  # noqa: PLC0415

            model, size = load_model(args.path)
            s = summarize(model, base_dir=model_dir(args.path), progress=progress)
        else:
            s, size = found
    if args.json:
        # Bytes-valued strings (invalid UTF-8) in their documented form; ensure_ascii
        # escapes every control and format character (wirefmt.safetext).
        import json  # noqa: PLC0415 - only for --json

        json.dump(json_ready(s), sys.stdout, indent=2, ensure_ascii=True)
        sys.stdout.write("\n")
    else:
        write_lines(_inspect_lines(s, args.path, size))
    return EXIT_OK
