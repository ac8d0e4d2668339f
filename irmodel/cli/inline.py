"""``irmodel inline MODEL -o OUT [--functions DOMAIN:NAME,...] [--exclude] [--schema-functions]``:
function calls replaced by the functions' bodies (`irmodel.inliner`).

Without ``--functions``, every model-local function is inlined (``inline_local_functions``);
with it, the functions named (every other one with ``--exclude``).  ``--schema-functions``
also expands operators defined by a function in their schema (selected by the same list).
"""

from __future__ import annotations

import argparse

from .common import EXIT_OK, UsageError, colon_pairs, load_model


#: ``domain:name,...``: the domain may be empty (``:Softsign``) and hold colons.
function_ids = colon_pairs("DOMAIN:NAME", last_colon=True, empty_first=True)


def add_parser(sub: argparse._SubParsersAction) -> None:
    c = sub.add_parser("inline", help="replace function calls by the functions' bodies")
    c.add_argument("path", metavar="MODEL")
    c.add_argument("-o", "--output", metavar="OUT", required=True, help="where to write the model")
    c.add_argument("--functions", type=function_ids, metavar="DOMAIN:NAME,...",
                   help="inline only these functions (default: every model-local function)")
    c.add_argument("--exclude", action="store_true", help="inline every function except those named")
    c.add_argument("--schema-functions", action="store_true",
                   help="also expand operators whose schema defines them by a function")
    c.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from .._surgery.errors import SurgeryError  # noqa: PLC0415
    from .._surgery.extract import save_part  # noqa: PLC0415
    from .._surgery.inline import inline_local_functions, inline_selected_functions  # noqa: PLC0415
    from ..io import load  # noqa: PLC0415

    load_model(args.path)  # refuses what is not a model file
    model = load(args.path)
    try:
        if args.functions is None and not args.exclude and not args.schema_functions:
            result = inline_local_functions(model)
        else:
            result = inline_selected_functions(model, args.functions or [], exclude=args.exclude,
                                               inline_schema_functions=args.schema_functions)
    except SurgeryError as exc:
        raise UsageError(str(exc)) from None
    save_part(result, args.output)
    return EXIT_OK
