"""``irmodel merge A B -o OUT --io-map y:x [--io-map ...] [--prefix1 P] [--prefix2 P] [--rename-auto]``:
one model of two, outputs of A feeding inputs of B (`irmodel.compose.merge_models`)."""

from __future__ import annotations

import argparse

from .common import EXIT_OK, UsageError, colon_pairs, load_model
from .extract import names


#: ``out:in`` pairs, each name non-empty.
pair = colon_pairs("OUTPUT:INPUT")


def add_parser(sub: argparse._SubParsersAction) -> None:
    c = sub.add_parser("merge", help="connect two models, outputs of the first to inputs of the second")
    c.add_argument("path", metavar="A")
    c.add_argument("second", metavar="B")
    c.add_argument("-o", "--output", metavar="OUT", required=True, help="where to write the merged model")
    c.add_argument("--io-map", type=pair, action="append", required=True, metavar="Y:X",
                   help="an output of A feeding an input of B (repeatable, or comma-separated)")
    c.add_argument("--inputs", type=names, metavar="A,B", help="keep only these inputs")
    c.add_argument("--outputs", type=names, metavar="Y,Z", help="keep only these outputs")
    c.add_argument("--prefix1", metavar="P", help="prefix every name of A with P")
    c.add_argument("--prefix2", metavar="P", help="prefix every name of B with P")
    c.add_argument("--rename-auto", action="store_true",
                   help="rename B's names that clash with A's instead of failing")
    c.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from .._surgery.compose import merge_models  # noqa: PLC0415
    from .._surgery.errors import SurgeryError  # noqa: PLC0415
    from .._surgery.extract import save_part  # noqa: PLC0415
    from ..io import load  # noqa: PLC0415

    load_model(args.path)
    load_model(args.second)
    m1, m2 = load(args.path), load(args.second)
    io_map = [p for group in args.io_map for p in group]
    try:
        merged = merge_models(m1, m2, io_map, inputs=args.inputs, outputs=args.outputs,
                              prefix1=args.prefix1, prefix2=args.prefix2,
                              rename="auto" if args.rename_auto else None)
    except SurgeryError as exc:
        raise UsageError(str(exc)) from None
    save_part(merged, args.output)
    return EXIT_OK
