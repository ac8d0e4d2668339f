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

from .context import CheckerContext, LexicalScopeContext
from .data import check_map, check_optional, check_sequence
from .model import (check_attribute, check_function, check_graph, check_model, check_node,
                    check_sparse_tensor, check_tensor, check_value_info)
from ..errors import Problem, ValidationError

__all__ = [
    "check_model", "check_graph", "check_node", "check_function", "check_tensor",
    "check_sparse_tensor", "check_attribute", "check_value_info", "check_sequence", "check_map",
    "check_optional", "CheckerContext", "LexicalScopeContext", "Problem", "ValidationError",
]
