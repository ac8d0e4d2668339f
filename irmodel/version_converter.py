"""onnx.version_converter's names: convert a model to another opset of the default domain.

``convert_version(model, 13)`` returns a converted copy: the default domain's opset import
(of the model and of each model-local function) moves to the target and every node of that
domain, in the graph, its subgraphs and the functions, is rewritten to the operator version
in force at the target.  Nodes that need no change keep their bytes; weights are read only
where a step must read a constant (an ``axes`` input that becomes an attribute).  When some
node cannot be converted, `ConversionError` (a `ValidationError`, so a ``ValueError``) lists
every such node with its path, op, versions and reason, and no model is returned.

The work is done in `irmodel._converter`; docs/version-converter.md describes the steps.
"""

from __future__ import annotations

from ._converter import ConversionError, ConvertError
from ._converter.driver import Report, convert_model

TYPE_CHECKING = False
if TYPE_CHECKING:
    from . import ModelProto


def convert_version(model: ModelProto, target_version: int) -> ModelProto:
    """A copy of ``model`` converted to opset ``target_version`` of the default domain.

    Raises `TypeError` for a model that is not a ModelProto or a version that is not an
    int (as onnx), `ConversionError` for anything that cannot be converted.
    """
    from . import ModelProto as _ModelProto  # noqa: PLC0415

    if not isinstance(model, _ModelProto):
        raise TypeError(f"VersionConverter only accepts ModelProto as model, incorrect type: {type(model)}")
    if not isinstance(target_version, int) or isinstance(target_version, bool):
        raise TypeError(f"VersionConverter only accepts int as target_version, incorrect type: "
                        f"{type(target_version)}")
    return convert_model(model, {"": target_version})


def convert_version_report(model: ModelProto, target_version: int, report: Report) -> ModelProto:
    """`convert_version`, recording in ``report`` what changed (the command line prints it)."""
    return convert_model(model, {"": target_version}, report)


__all__ = ["convert_version", "ConvertError", "ConversionError"]
