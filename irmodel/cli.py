"""The ``irmodel`` command line.  Exit status: 0 ok, 1 invalid model, 2 usage or I/O error."""

from __future__ import annotations

import argparse
import json
import sys

from .errors import DecodeError, ExternalDataError, ValidationError

EXIT_OK, EXIT_INVALID, EXIT_USAGE = 0, 1, 2


def _shape_text(info: dict) -> str:
    kind = info.get("kind")
    if kind in ("tensor", "sparse_tensor"):
        shape = info.get("shape")
        dims = "?" if shape is None else "[" + ", ".join(str(d) for d in shape) + "]"
        prefix = "sparse " if kind == "sparse_tensor" else ""
        return f"{prefix}{info['elem_type']}{dims}"
    if kind in ("sequence", "optional"):
        return f"{kind}({_shape_text(info['elem'])})"
    if kind == "map":
        return f"map({info['key_type']}, {_shape_text(info['value'])})"
    return kind or "?"


def _human(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


def cmd_inspect(args) -> int:
    from .io import load  # noqa: PLC0415
    from .summary import summarize  # noqa: PLC0415

    s = summarize(load(args.path, load_external_data=False))
    if args.json:
        json.dump(s, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return EXIT_OK
    out = [f"ir_version:       {s['ir_version']}",
           f"producer:         {s['producer_name']} {s['producer_version']}".rstrip()]
    if s["domain"]:
        out.append(f"domain:           {s['domain']}")
    out.append("opset_import:     " + ", ".join(f"{o['domain'] or 'ai.onnx'}={o['version']}" for o in s["opset_import"]))
    for k, v in s["metadata_props"].items():
        out.append(f"metadata:         {k} = {v}")
    out.append(f"graph:            {s['graph_name']}")
    out.append("inputs:")
    out += [f"  {v['name']}: {_shape_text(v)}" for v in s["inputs"]]
    out.append("outputs:")
    out += [f"  {v['name']}: {_shape_text(v)}" for v in s["outputs"]]
    out.append(f"nodes:            {s['node_count']}")
    out += [f"  {op:<24} {n}" for op, n in s["op_types"].items()]
    out.append(f"initializers:     {s['initializer_count']} ({_human(s['initializer_bytes'])})")
    out += [f"  {dt:<24} {e['count']} ({_human(e['bytes'])})" for dt, e in s["initializers_by_dtype"].items()]
    if s["external_data_files"]:
        out.append("external data:")
        out += [f"  {loc}: {_human(n)}" for loc, n in s["external_data_files"].items()]
    if s["functions"]:
        out.append(f"functions:        {len(s['functions'])}")
        out += [f"  {f['domain']}::{f['name']} ({f['nodes']} nodes)" for f in s["functions"]]
    out.append(f"subgraphs:        {s['subgraph_count']}")
    print("\n".join(out))
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="irmodel", description="Inspect, dump and convert ONNX models.")
    sub = p.add_subparsers(dest="command", required=True)
    ins = sub.add_parser("inspect", help="summarise a model without reading its weights")
    ins.add_argument("path")
    ins.add_argument("--json", action="store_true", help="print the summary as JSON")
    ins.set_defaults(func=cmd_inspect)
    return p


def main(argv=None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0) and EXIT_USAGE
    try:
        return args.func(args)
    except (DecodeError, ValidationError, ExternalDataError) as exc:
        print(f"irmodel: invalid model: {exc}", file=sys.stderr)
        return EXIT_INVALID
    except OSError as exc:
        print(f"irmodel: {exc.strerror or exc}: {exc.filename or ''}".rstrip(": "), file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
