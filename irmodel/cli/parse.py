"""``irmodel parse TEXT -o MODEL [--data-dir DIR] [--accept-elided]``: a model from its text.

Reads onnx's text syntax and our extension of it (docs/text-syntax.md) and saves the
model atomically.  A text that is not in the syntax is an invalid input (status 1),
reported with its line and column.
"""

from __future__ import annotations

import argparse
import sys

from .common import EXIT_INVALID, EXIT_OK


def add_parser(sub: argparse._SubParsersAction) -> None:
    c = sub.add_parser("parse", help="make a model from its ONNX text")
    c.add_argument("path", metavar="TEXT")
    c.add_argument("-o", "--output", metavar="MODEL", required=True, help="the model file to write")
    c.add_argument("--data-dir", metavar="DIR",
                   help="where tensors printed with --external-data keep their bytes (default: TEXT's directory)")
    c.add_argument("--accept-elided", action="store_true",
                   help="read elided tensors as tensors without values (the model is then incomplete)")
    c.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import os  # noqa: PLC0415

    from .. import save  # noqa: PLC0415
    from .._text.datafile import file_loader  # noqa: PLC0415
    from ..parser import ParseError, parse_model  # noqa: PLC0415
    from wirefmt.safetext import one_line  # noqa: PLC0415

    with open(args.path, encoding="utf-8", errors="surrogateescape") as f:
        text = f.read()
    directory = args.data_dir or os.path.dirname(os.path.abspath(args.path))
    try:
        model = parse_model(text, accept_elided=args.accept_elided, load_file=file_loader(directory))
    except ParseError as exc:
        print(f"irmodel: {one_line(args.path)}: {one_line(str(exc))}", file=sys.stderr)
        return EXIT_INVALID
    save(model, args.output)
    return EXIT_OK
