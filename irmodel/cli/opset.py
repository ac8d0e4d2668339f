"""``irmodel opset PATH --to N [-o OUT] [--json]``: convert a model to another opset, up or down.

Converts the default domain (ai.onnx) of PATH to opset N with
`irmodel.version_converter` and prints what changed, one line per node (its path, its
operator and what it became), then a summary.  With ``-o OUT`` the converted model is
written (atomically; unchanged parts are copied as they are).  Without it nothing is
written: the command says what a conversion would do.  When some node cannot be
converted, every such node is listed (path, operator, versions, reason) and the status is
1; nothing is written.  External data stays where it is: OUT must be in PATH's directory
for a model that has some (``irmodel convert`` moves data files).
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from .common import EXIT_INVALID, EXIT_OK, UsageError, load_model, model_dir, whole_number, write_lines

_EPILOG = """\
exit status: 0 converted (or nothing to do); 1 a node cannot be converted (each is listed)
or the input is invalid; 2 usage or I/O error."""


def add_parser(sub: argparse._SubParsersAction) -> None:
    c = sub.add_parser("opset", help="convert a model to another opset version (up or down)",
                       description=__doc__.split("\n\n", 1)[1].replace("``", "'"), epilog=_EPILOG,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    c.add_argument("path", metavar="PATH")
    c.add_argument("--to", dest="target", required=True, metavar="N",
                   type=whole_number("an opset version", 1), help="the target opset of ai.onnx")
    c.add_argument("-o", "--output", metavar="OUT", help="write the converted model to OUT")
    c.add_argument("--json", action="store_true",
                   help="print what changed and what could not be converted as JSON")
    c.set_defaults(func=run)


def _has_external_data(model) -> bool:
    """Does any initializer of any graph keep its data in a file?"""
    from .._converter.scope import subgraphs  # noqa: PLC0415

    def graph(g) -> bool:
        if any(t.data_location == 1 for t in g.initializer):
            return True
        return any(graph(sub) for n in g.node for _, _, sub in subgraphs(n))

    return model.HasField("graph") and graph(model.graph)


def run(args: argparse.Namespace) -> int:
    from .. import save  # noqa: PLC0415
    from .._converter import ConversionError, Report  # noqa: PLC0415
    from .._converter.driver import convert_model, default_opset  # noqa: PLC0415

    model, _ = load_model(args.path)
    found = default_opset(model.opset_import)
    source = found[0] if found else None
    report = Report()
    try:
        out = convert_model(model, {"": args.target}, report)
    except ConversionError as e:
        _print(args, source, report, e.problems)
        return EXIT_INVALID
    if args.output:
        if (model_dir(args.output) != model_dir(args.path)) and _has_external_data(model):
            raise UsageError("the model has external data: write OUT in PATH's directory "
                             "(irmodel convert moves data files)")
        save(out, args.output)
    _print(args, source, report, [])
    return EXIT_OK


def _print(args: argparse.Namespace, source: int | None, report, problems: list) -> None:
    from wirefmt.safetext import json_ready, one_line  # noqa: PLC0415

    if args.json:
        data = {"from": source, "to": args.target, "changed": report.changes,
                "problems": [p.to_dict() for p in problems]}
        json.dump(json_ready(data), sys.stdout, indent=2, ensure_ascii=True)
        sys.stdout.write("\n")
        return
    lines = [one_line(c) for c in report.changes]
    lines.extend(f"cannot convert: {one_line(str(p))}" for p in problems)
    verb = "would change" if not args.output and not problems else "changed"
    summary = (f"ai.onnx opset {source} -> {args.target}: {len(report.changes)} node"
               f"{'' if len(report.changes) == 1 else 's'} {verb}")
    if problems:
        summary += f", {len(problems)} cannot be converted (nothing written)"
    elif args.output:
        summary += f"; written to {one_line(os.fspath(args.output))}"
    lines.append(summary)
    write_lines(lines)
