"""What the version converter raises: every node it cannot convert, at once.

`ConversionError` is an `irmodel.ValidationError` (so a ``ValueError``): its ``problems``
are `irmodel.errors.Problem` records as the checker makes them, one per node that
cannot be converted, with a code from `CODES`, the node's path
(``graph.node[3].attribute[0].g.node[1]``, ``functions[0].node[2]``), its name and
op_type, and a message naming the versions and the reason.  The converter collects them
all before raising and never returns a partly converted model.
"""

from __future__ import annotations

from ..errors import Problem, ValidationError

#: The problem codes of the converter (stable: tests and tools match on them).
CODES = {
    "V001": "the operator has no version at the target opset and no function body to expand",
    "V002": "an input that must become an attribute is not a constant",
    "V003": "an attribute value (or input) the target version cannot express",
    "V004": "a type the target version does not allow",
    "V005": "an input or output the target version does not have",
    "V006": "the operator has no registered schema at the source opset",
    "V007": "the step needs a shape or rank the model does not give",
    "V008": "the request itself: a target outside the known opsets, or no default-domain opset",
}


class ConversionError(ValidationError, RuntimeError):
    """The model cannot be converted to the target opset; ``problems`` lists every reason.

    A `ValidationError` (so a ``ValueError``) like every error about a model's content, and
    a ``RuntimeError``, which is what onnx documents ``convert_version`` to raise when a
    conversion is not supported (its callers catch that)."""


#: onnx.version_converter's name for the same error (onnx raises it from C++).
ConvertError = ConversionError


def problem(code: str, path: str, node, message: str) -> Problem:
    """One `Problem` about ``node`` (a NodeProto, or None for the model as a whole)."""
    if node is None:
        return Problem(code, path, "", "", message)
    return Problem(code, path, node.name, node.op_type, message)


class StepRefused(Exception):
    """Raised inside an adapter: this node cannot take this step (code, reason).

    Internal only: the driver turns it into a `Problem` with the node's path and versions.
    """

    def __init__(self, code: str, reason: str) -> None:
        super().__init__(reason)
        self.code = code
        self.reason = reason
