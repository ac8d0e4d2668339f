"""``irmodel dump PATH [--json] [--type NAME]``: the whole message as an indented tree."""

from __future__ import annotations

import argparse
import json
import sys

from .common import EXIT_OK, load_model, progress_line, write_lines


def add_parser(sub: argparse._SubParsersAction) -> None:
    c = sub.add_parser("dump", help="print a whole model as an indented tree (tensors summarised)")
    c.add_argument("path", metavar="PATH")
    c.add_argument("--json", action="store_true",
                   help="print protobuf's JSON form instead (tensor data in base64)")
    c.add_argument("--type", type=_type_name, default="ModelProto", metavar="NAME",
                   help="the message type of the file, e.g. TensorProto for a .pb tensor (default ModelProto)")
    c.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    msg, _ = load_model(args.path, args.type)
    if args.json:
        from wirefmt import to_dict  # noqa: PLC0415
        # ensure_ascii: control and format characters become \u escapes (wirefmt.safetext)
        json.dump(to_dict(msg), sys.stdout, indent=2, ensure_ascii=True)
        sys.stdout.write("\n")
        return EXIT_OK
    from .._report.dump import dump_lines  # noqa: PLC0415
    with progress_line("dump: lines", streaming=True) as progress:
        write_lines(dump_lines(msg), progress)
    return EXIT_OK


def _type_name(value: str) -> str:
    from ..io import message_class  # noqa: PLC0415
    try:
        message_class(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"unknown message type {value!r}") from None
    return value
