"""``check_model`` and the other public checks, with onnx.checker's names and arguments.

Each function walks the message through the lazy views, collects every problem
(`problems.Reporter`) and raises one `irmodel.ValidationError` listing them all, sorted
by location.  Arguments may be irmodel messages, serialized bytes, a path (``check_model``)
or the reference's protobuf messages (serialized and read back).
"""

from __future__ import annotations

import os

from wirefmt import DecodeError

from ..proto import IR_VERSION
from .access import decode_rest, loaded_from_dir
from .context import CheckerContext, LexicalScopeContext, default_context
from .function import INT32_MAX, Functions, opset_map
from .graph import Walker
from .problems import Reporter, short
from .schema_rules import SchemaRules
from .tensor import check_sparse_tensor as _sparse_rules
from .tensor import check_tensor as _tensor_rules


def _message(obj, type_name: str):
    """``obj`` as an irmodel message of ``type_name`` (TypeError otherwise, as onnx)."""
    from ..io import as_message  # noqa: PLC0415

    return as_message(obj, type_name)


class _Run:
    """One check: a reporter, a walker over it, the schema rules, and the functions' rules."""

    def __init__(self) -> None:
        self.report = Reporter()
        self.schemas = SchemaRules()
        self.walker = Walker(self.report, self.schemas)
        self.functions = Functions(self.walker, self.schemas)

    def finish(self) -> None:
        self.report.raise_if_any()


def _plain_context() -> CheckerContext:
    """The default context of checks that need no opsets (tensors): no schema table loaded."""
    return CheckerContext(IR_VERSION, {})


# -- the public checks ----------------------------------------------------------------------

def check_value_info(value_info, ctx: CheckerContext | None = None) -> None:
    """The rules of one graph input or output (types are required in a main graph)."""
    run = _Run()
    run.walker._guarded_value_info(_message(value_info, "ValueInfoProto"), ctx or default_context(),
                                   "value_info", None)
    run.finish()


def check_tensor(tensor, ctx: CheckerContext | None = None) -> None:
    """The rules of one TensorProto (external data is looked for under ``ctx.model_dir``)."""
    run = _Run()
    _tensor_rules(run.report, _message(tensor, "TensorProto"), ctx or _plain_context(), "tensor")
    run.finish()


def check_sparse_tensor(sparse, ctx: CheckerContext | None = None) -> None:
    """The rules of one SparseTensorProto, its values and its indices."""
    run = _Run()
    _sparse_rules(run.report, _message(sparse, "SparseTensorProto"), ctx or _plain_context(),
                  "sparse_tensor")
    run.finish()


def check_attribute(attr, ctx: CheckerContext | None = None,
                    lexical_scope_ctx: LexicalScopeContext | None = None) -> None:
    """One attribute on its own (not against a schema), with any graphs and tensors it holds."""
    run = _Run()
    run.walker.attribute(_message(attr, "AttributeProto"), ctx or default_context(),
                         lexical_scope_ctx or LexicalScopeContext(), "attribute")
    run.finish()


def check_node(node, ctx: CheckerContext | None = None,
               lexical_scope_ctx: LexicalScopeContext | None = None) -> None:
    """One node: its own rules, its attributes, and its operator schema's rules.

    The names it uses are not looked up (that is the graph's rule); ``lexical_scope_ctx``
    matters to the graphs in its attributes.
    """
    run = _Run()
    run.walker.node(_message(node, "NodeProto"), ctx or default_context(),
                    lexical_scope_ctx or LexicalScopeContext(), "node")
    run.finish()


def check_graph(graph, ctx: CheckerContext | None = None,
                lexical_scope_ctx: LexicalScopeContext | None = None) -> None:
    """One graph, with ``ctx`` giving the IR version and the opsets imported."""
    run = _Run()
    run.walker.graph(_message(graph, "GraphProto"), ctx or default_context(),
                     lexical_scope_ctx or LexicalScopeContext(), "graph")
    run.finish()


def check_function(function, ctx: CheckerContext | None = None,
                   lexical_scope_ctx: LexicalScopeContext | None = None) -> None:
    """One function.  Without ``ctx``, as onnx: the IR version its opsets need, its own opsets."""
    run = _Run()
    f = _message(function, "FunctionProto")
    if ctx is None:
        from ..helper import find_min_ir_version_for  # noqa: PLC0415

        try:
            ir_version = find_min_ir_version_for(list(f.opset_import), ignore_unknown=True)
        except (ValueError, KeyError, TypeError):
            ir_version = IR_VERSION
        ctx = CheckerContext(ir_version, opset_map(run.report, f.opset_import, "function.opset_import"))
    run.functions.function(f, ctx, lexical_scope_ctx or LexicalScopeContext(), "function",
                           opset_path_reported=True)
    run.finish()


def check_model(model, full_check: bool = False, skip_opset_compatibility_check: bool = False,
                check_custom_domain: bool = False) -> None:
    """Check a model and raise `irmodel.ValidationError` listing every problem found.

    ``model`` is a ModelProto, its serialized bytes, or a path (the file is mapped, so
    files over 2 GiB work; external data is checked by location and ``stat`` only, never
    read).  External data locations are relative to the file's directory: the path's, the
    directory ``irmodel.load`` read the model from, or else the current directory (as
    the reference has it for a model in memory).  ``check_custom_domain=True`` requires a
    schema for ops of every domain; ``skip_opset_compatibility_check=True`` skips the
    comparison of the functions' opset imports with the model's.

    ``full_check=True`` then runs strict shape and type inference with type-constraint
    checks (`irmodel.infer_shapes(model, check_type=True, strict_mode=True)`), as the
    reference does, on a model that passed every other rule; it raises
    `irmodel.InferenceError` (a ValidationError) listing every node whose types are
    inconsistent.  The model itself is not changed.

    Raises `irmodel.DecodeError` when the top level of the bytes is not a ModelProto;
    parts further down that cannot be decoded are problems (B001) of the ValidationError.
    """

    if isinstance(model, (str, os.PathLike)):
        from .. import load  # noqa: PLC0415

        path = os.fspath(model)
        model = load(path, load_external_data=False)
        model_dir = reference_dir = os.path.dirname(path)
    else:
        model = _message(model, "ModelProto")
        model_dir = loaded_from_dir(model) or ""
        reference_dir = ""  # onnx checks a message as if it lay in the current directory
    ctx = CheckerContext(model_dir=model_dir, reference_dir=reference_dir,
                         skip_opset_compatibility_check=skip_opset_compatibility_check,
                         check_custom_domain=check_custom_domain)
    run = _Run()
    _check_model(run, model, ctx)
    run.finish()
    if full_check:
        from ..inference.api import check_inference  # noqa: PLC0415 (the layer above, on request)

        check_inference(model)  # infer_shapes(model, check_type=True, strict_mode=True), nothing kept


def _check_model(run: _Run, model, ctx: CheckerContext) -> None:
    add = run.report.add
    ir = model.ir_version
    known_ir = True
    if ir == 0:
        add("M101", "ir_version", "The model does not have an ir_version set properly.")
        known_ir = False
    elif ir > IR_VERSION:
        add("M102", "ir_version", f"Your model ir_version {ir} is higher than the checker's ({IR_VERSION}).")
    try:
        _check_metadata(run, model)
    except DecodeError as exc:
        add("B001", "metadata_props", f"cannot be decoded: {exc}")
    # The reference keeps the IR version as a C int from here on.
    ctx.ir_version = _as_int32(ir) if known_ir else IR_VERSION
    try:
        opsets = opset_map(run.report, model.opset_import, "opset_import")
    except DecodeError as exc:
        add("B001", "opset_import", f"cannot be decoded: {exc}")
        opsets = {}
    if not known_ir:
        pass  # which opset rule applies depends on the IR version, which is missing
    elif ir >= 3:
        if not opsets:
            add("M104", "opset_import", f"model with IR version >= 3 must specify opset_import for ONNX "
                                        f"(IR version {ir}, no opset imported)")
    elif opsets:
        add("M105", "opset_import", f"model with IR version < 3 cannot have opset_import specified "
                                    f"(IR version {ir} imports {', '.join(map(repr, map(short, opsets)))})")
    if not opsets and (not known_ir or ir < 3):
        opsets = {"": 1}
    ctx.opset_imports = opsets
    lex = LexicalScopeContext()
    try:
        graph = model.graph
        graph.name  # noqa: B018 - scanned now, so a decode error is reported here
    except DecodeError as exc:
        add("B001", "graph", f"the graph cannot be decoded: {exc}")
    else:
        run.walker.graph(graph, ctx, lex, "graph")
    read = {"graph"}
    if ctx.ir_version >= 8:
        run.functions.check_all(model, ctx, lex)
        read.add("functions")
    decode_rest(run.report, model, frozenset(read), "")


def _check_metadata(run: _Run, model) -> None:
    entries = model.metadata_props
    if len(entries) <= 1:
        return
    seen = set()
    for i in range(len(entries)):
        key = entries[i].key
        if key in seen:
            run.report.add("M103", f"metadata_props[{i}]", f"Your model has duplicate keys in metadata_props. "
                                                           f"(key {short(key)!r} is repeated)")
        seen.add(key)


def _as_int32(v: int) -> int:
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v > INT32_MAX else v


__all__ = ["check_model", "check_graph", "check_node", "check_function", "check_tensor",
           "check_sparse_tensor", "check_attribute", "check_value_info"]
