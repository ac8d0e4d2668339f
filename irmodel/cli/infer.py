"""``irmodel infer PATH [-o OUT] [--strict] [--check-type] [--data-prop] [--symbolic] [--json] [--explain]``: shape inference.

Without ``-o``, prints the type of every value of the main graph (inputs, the values
inference typed, outputs), one line each or as JSON; with ``-o``, writes the model with
its ``value_info`` filled in (atomically; unchanged parts are copied as they are).
With ``--explain``, prints instead each value whose type or dims stay unknown, the first
node where it was lost and why (`irmodel.inference.explain`), then the operators no
inference function covers.
"""

from __future__ import annotations

import argparse
TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs every process a few ms
    from typing import Any

from .common import EXIT_OK, load_model, write_json, write_lines


def add_parser(sub: argparse._SubParsersAction) -> None:
    c = sub.add_parser("infer", help="infer the types and shapes of a model's values")
    c.add_argument("path", metavar="PATH")
    c.add_argument("-o", "--output", metavar="OUT",
                   help="write the model with value_info filled in to OUT instead of printing types")
    c.add_argument("--strict", action="store_true",
                   help="fail on any node whose types are inconsistent (every such node is listed)")
    c.add_argument("--check-type", action="store_true",
                   help="also check every node's input types against its schema's type constraints")
    c.add_argument("--data-prop", action="store_true",
                   help="propagate small constant values (shape computations) as the reference's data_prop")
    c.add_argument("--symbolic", action="store_true",
                   help="dims as expressions over the model's dim names (past + seq, 2*seq), "
                        "small integer values propagated through shape arithmetic (implies --data-prop)")
    c.add_argument("--json", action="store_true", help="print the types as a JSON list")
    c.add_argument("--explain", action="store_true",
                   help="list each value with an unknown type or dim, the node where it was lost and why, "
                        "and the operators without an inference function")
    c.set_defaults(func=run)


def value_types(model: Any) -> list[dict]:
    """``[{"name", "role", ...type_info}]`` for the main graph's inputs, inferred values, outputs."""
    from .._report.summary import value_types as read_types  # noqa: PLC0415

    g = model.graph
    return [{"name": name, "role": role, **info}
            for role, field in (("input", "input"), ("value", "value_info"), ("output", "output"))
            for name, info in read_types(g, field)]


def run(args: argparse.Namespace) -> int:
    from ..inference import infer_shapes  # noqa: PLC0415

    model, _ = load_model(args.path)
    if args.explain:
        return _explain(model, args)
    inferred = infer_shapes(model, check_type=args.check_type, strict_mode=args.strict,
                            data_prop=args.data_prop, symbolic=args.symbolic)
    if args.output:
        from .. import save  # noqa: PLC0415

        save(inferred, args.output)
        return EXIT_OK
    values = value_types(inferred)
    if args.json:
        write_json(values)  # one value a line (see `write_json`: why not an indent)
        return EXIT_OK
    from .._report.shown import name_text  # noqa: PLC0415
    from .._report.entries import type_text  # noqa: PLC0415

    names = [name_text(v["name"]) for v in values]
    width = max((len(n) for n in names), default=0)
    write_lines(f"{v['role']:<6}  {n:<{width}}  {type_text(v)}" for v, n in zip(values, names))
    return EXIT_OK


def _explain(model: Any, args: argparse.Namespace) -> int:
    from ..inference import explain  # noqa: PLC0415

    result = explain(model, data_prop=args.data_prop, symbolic=args.symbolic)
    if args.json:
        write_json(result.as_dict())
        return EXIT_OK
    from wirefmt.safetext import one_line  # noqa: PLC0415

    from .._report.shown import name_text  # noqa: PLC0415

    lines = []
    for loss in result.losses:
        what = "type" if loss.what == "type" else "rank" if loss.what == "shape" else \
            "dim " + ",".join(str(d) for d in loss.dims)
        where = f"node {loss.node_index} {loss.domain + '::' if loss.domain else ''}{loss.op_type}"
        if loss.node_name:
            where += f" ({name_text(loss.node_name)})"
        via = f" via {name_text(loss.via)}" if loss.via else ""
        detail = f": {one_line(loss.detail)}" if loss.detail else ""  # (it may quote a name)
        lines.append(f"{name_text(loss.value)}: {what} unknown, lost at {where}{via}: {loss.reason}{detail}")
    if not result.losses:
        lines.append("every type and dim is known")
    refused = result.values_not_propagated
    if refused:
        lines.append(f"values not propagated (over a budget of irmodel.limits): {len(refused)}")
        lines.extend(f"  {name_text(name)}: {one_line(why)}" for name, why in refused)
    ops = result.operators_without_inference
    lines.append(f"operators without an inference function: {len(ops)}")
    for domain, op_type, version, reason in ops:
        at = f"-{version}" if version is not None else ""
        lines.append(f"  {name_text(domain) or 'ai.onnx'}::{name_text(op_type)}{at}: {reason}")
    write_lines(lines)
    return EXIT_OK
