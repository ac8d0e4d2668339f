"""``irmodel extract MODEL -o OUT --inputs a,b --outputs y [--no-check] [--no-infer]``: the
part of a model between named values (`irmodel.utils.extract_model`), reading only that part."""

from __future__ import annotations

import argparse

from .common import EXIT_OK, UsageError, load_model


def names(value: str) -> list:
    """An argparse ``type``: a comma-separated list of value names (none empty)."""
    out = value.split(",")
    if not all(out):
        raise argparse.ArgumentTypeError(f"empty name in {value!r}")
    return out


def add_parser(sub: argparse._SubParsersAction) -> None:
    c = sub.add_parser("extract", help="write the part of a model between named values")
    c.add_argument("path", metavar="MODEL")
    c.add_argument("-o", "--output", metavar="OUT", required=True, help="where to write the part")
    c.add_argument("--inputs", type=names, required=True, metavar="A,B", help="the part's inputs")
    c.add_argument("--outputs", type=names, required=True, metavar="Y", help="the part's outputs")
    c.add_argument("--no-check", action="store_true", help="do not check the part before writing it")
    c.add_argument("--no-infer", action="store_true", help="do not infer the part's types")
    c.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from .._surgery.errors import SurgeryError  # noqa: PLC0415
    from .._surgery.extract import extract_model  # noqa: PLC0415

    load_model(args.path)  # refuses what is not a model file (status 1)
    try:
        extract_model(args.path, args.output, args.inputs, args.outputs,
                      check_model=not args.no_check, infer_shapes=not args.no_infer)
    except SurgeryError as exc:
        raise UsageError(str(exc)) from None
    return EXIT_OK
