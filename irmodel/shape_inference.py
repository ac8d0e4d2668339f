"""``onnx.shape_inference``'s names over `irmodel.inference`.

``import irmodel.shape_inference as shape_inference`` gives onnx's functions with onnx's
arguments and defaults: `infer_shapes`, `infer_shapes_path`, `infer_node_outputs`,
`infer_function_output_types`, `InferenceError`, and the two classes a Python inference
function registered on an operator schema meets: `InferenceContext` and
`GraphInferencer` (see `irmodel.defs.OpSchema.set_type_and_shape_inference_function`).

The work lives in `irmodel.inference`; this module only fits onnx's surface: the
argument checks and messages of onnx's wrappers, and the reference's messages accepted
wherever onnx takes them.  Beyond onnx, `infer_shapes` and `infer_shapes_path` take
``symbolic=True`` (keyword only; see `irmodel.inference.api.infer_shapes`).
"""

from __future__ import annotations

import os

from .inference.api import infer_function_output_types
from .inference.api import infer_node_outputs as _infer_node_outputs
from .inference.api import infer_shapes as _infer_shapes
from .inference.api import infer_shapes_path as _infer_shapes_path
from .inference.errors import InferenceError
from .inference.pyrules import GraphInferencer, InferenceContext

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["infer_shapes", "infer_shapes_path", "infer_node_outputs", "infer_function_output_types",
           "InferenceError", "InferenceContext", "GraphInferencer"]


def infer_shapes(model: Any, check_type: bool = False, strict_mode: bool = False, data_prop: bool = False,
                 *, symbolic: bool = False) -> Any:
    """A copy of ``model`` (a ModelProto, ours or the reference's, or its bytes) with its
    value types inferred (`irmodel.inference.infer_shapes`).  A path is refused with
    onnx's TypeError: `infer_shapes_path` reads files."""
    if isinstance(model, (str, os.PathLike)):
        raise TypeError("infer_shapes only accepts ModelProto or bytes, For Model paths "
                        "(str or os.PathLike), use infer_shapes_path().")
    if not isinstance(model, (bytes, bytearray, memoryview)):
        from .io import as_message  # noqa: PLC0415
        try:
            model = as_message(model, "ModelProto")
        except TypeError:
            raise TypeError("infer_shapes only accepts ModelProto or bytes, incorrect type: "
                            f"{type(model)}") from None
    return _infer_shapes(model, check_type, strict_mode, data_prop, symbolic)


def infer_shapes_path(model_path: str | os.PathLike, output_path: str | os.PathLike = "",
                      check_type: bool = False, strict_mode: bool = False, data_prop: bool = False,
                      *, symbolic: bool = False) -> None:
    """`infer_shapes` from a file to a file (``output_path`` "" is the input), for models of
    any size; onnx's TypeErrors for a message or a non-path argument."""
    if hasattr(model_path, "SerializeToString"):
        raise TypeError("infer_shapes_path only accepts model Path (String),"
                        "you can use infer_shapes for the ModelProto.")
    try:
        model_path = os.fspath(model_path)
    except TypeError as exc:
        raise TypeError("infer_shapes_path only accepts model path as a string or PathLike, "
                        f"incorrect model path type: {type(model_path)}") from exc
    try:
        output_path = os.fspath(output_path)
    except TypeError as exc:
        raise TypeError("infer_shapes_path only accepts output path as a string or PathLike, "
                        f"incorrect output path type: {type(output_path)}") from exc
    _infer_shapes_path(model_path, output_path or None, check_type, strict_mode, data_prop, symbolic)


def infer_node_outputs(schema: Any, node: Any, input_types: dict, input_data: dict | None = None,
                       input_sparse_data: dict | None = None, opset_imports: Any = None,
                       ir_version: int = 14) -> dict:
    """``{output name: TypeProto}`` of one node (`irmodel.inference.infer_node_outputs`).

    As onnx: every non-empty input of the node must have a type in ``input_types``
    (KeyError otherwise); further entries are the outer scope of its sub-graphs.
    """
    from .io import as_message  # noqa: PLC0415
    node = as_message(node, "NodeProto")
    for name in node.input:
        if name:
            input_types[name]  # noqa: B018 - KeyError for a missing one, as onnx's wrapper
    types = {k: as_message(v, "TypeProto") for k, v in input_types.items()}
    data = {k: as_message(v, "TensorProto") for k, v in (input_data or {}).items()}
    sparse = {k: as_message(v, "SparseTensorProto") for k, v in (input_sparse_data or {}).items()}
    return _infer_node_outputs(schema, node, types, data, sparse, opset_imports, ir_version)
