"""The ONNX checker: every rule of the reference's checker, every problem at once.

``check_model(model_or_path, full_check=False, skip_opset_compatibility_check=False,
check_custom_domain=False)`` and ``check_graph``, ``check_node``, ``check_function``,
``check_tensor``, ``check_sparse_tensor``, ``check_attribute``, ``check_value_info`` have
the names and arguments of ``onnx.checker``.  Where onnx raises at the first problem, these
raise one `irmodel.ValidationError` whose ``problems`` lists every problem found, each a
`irmodel.Problem` (code, path, node name, op_type, message), sorted by location.  The codes
are in `irmodel.checker.codes` (and docs/checker-codes.md).

Modules, by job: ``model`` (the public checks, the model's own rules), ``graph`` (graphs,
scopes, nodes, attributes, value infos), ``schema_rules`` (a node against its operator
schema), ``function`` (model-local functions and their call graph), ``tensor`` and
``external`` (tensor values and external data locations), ``data`` (onnx-data.proto
values), ``problems``/``codes`` (reporting), ``report`` (the command line's output),
``access`` (reading views without reading weights).
"""

from __future__ import annotations

from types import SimpleNamespace as _Namespace

from .context import CheckerContext, LexicalScopeContext
from .data import check_map, check_optional, check_sequence
from .model import (check_attribute, check_function, check_graph, check_node,
                    check_sparse_tensor, check_tensor, check_value_info)
from .model import check_model as _check_model
from ..errors import Problem, ValidationError

#: onnx.checker's bound on a model given in memory (protobuf's 2 GiB).  As onnx, serialized
#: bytes longer than this are refused with ValueError (read at each call, so a program may
#: change it); a message or a path is checked at any size, as irmodel reads either lazily.
MAXIMUM_PROTOBUF = 2147483647

#: onnx.checker's ``C`` (its compiled module): the context classes under the names code
#: written for onnx reaches them by (``checker.C.CheckerContext()``).
C = _Namespace(CheckerContext=CheckerContext, LexicalScopeContext=LexicalScopeContext,
               ValidationError=ValidationError)

#: onnx.checker's default lexical scope: empty (the checks make their own scopes).
LEXICAL_SCOPE_CONTEXT = LexicalScopeContext()


def check_model(model, full_check: bool = False, skip_opset_compatibility_check: bool = False,
                check_custom_domain: bool = False) -> None:
    """`irmodel.checker.model.check_model`, with onnx's refusal of serialized bytes over
    `MAXIMUM_PROTOBUF` (ValueError)."""
    if isinstance(model, (bytes, bytearray, memoryview)) and len(model) > MAXIMUM_PROTOBUF:
        raise ValueError("This protobuf of onnx model is too large (>2GiB). Call check_model with model "
                         "path instead.")
    _check_model(model, full_check, skip_opset_compatibility_check, check_custom_domain)


check_model.__doc__ = _check_model.__doc__


def __getattr__(name: str):
    # onnx.checker's DEFAULT_CONTEXT (this IR version, the newest ai.onnx opset) is made on
    # first use: it needs the schema table, which importing the checker does not read.
    if name == "DEFAULT_CONTEXT":
        from .context import default_context  # noqa: PLC0415
        context = globals()["DEFAULT_CONTEXT"] = default_context()
        return context
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list:
    return sorted({*globals(), "DEFAULT_CONTEXT"})


__all__ = [
    "check_model", "check_graph", "check_node", "check_function", "check_tensor",
    "check_sparse_tensor", "check_attribute", "check_value_info", "check_sequence", "check_map",
    "check_optional", "CheckerContext", "LexicalScopeContext", "Problem", "ValidationError",
    "DEFAULT_CONTEXT", "LEXICAL_SCOPE_CONTEXT", "MAXIMUM_PROTOBUF", "C",
]
