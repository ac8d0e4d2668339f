"""``irmodel check PATH [--json]``: every problem the checker finds, one line each or a JSON list."""

from __future__ import annotations

import argparse
import sys

from .common import check_file


def add_parser(sub: argparse._SubParsersAction) -> None:
    c = sub.add_parser("check", help="check a model against the ONNX rules, listing every problem")
    c.add_argument("path", metavar="PATH")
    c.add_argument("--json", action="store_true", help="print the problems as a JSON list")
    c.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..checker.report import run_check  # noqa: PLC0415

    check_file(args.path)
    return run_check(args.path, args.json, sys.stdout)
