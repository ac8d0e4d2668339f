"""The inference layer's error, and the internal signals that decide how a node's error is reported."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs every process a few ms
    from typing import Any

from ..errors import Problem, ValidationError

#: Problem codes of inference (``ValidationError.problems``), beside the checker's
#: (docs/checker-codes.md): a node's type rule failed; a node's shape rule failed; the
#: model as a whole cannot be inferred (a cycle of functions, nesting, an unknown opset).
TYPE_ERROR, SHAPE_ERROR, MODEL_ERROR = "I101", "I102", "I100"


class InferenceError(ValidationError):
    """Type or shape inference found a model it cannot type consistently.

    ``problems`` lists every error found (strict mode reports all nodes), each with its
    code (`TYPE_ERROR`, `SHAPE_ERROR`, `MODEL_ERROR`), the node's path
    (``graph.node[3]``), name and op_type, and the reference's message prefixed with the
    node's index.  The only exception inference raises about a model.
    """

    def __init__(self, problems: Any) -> None:
        if isinstance(problems, str):
            problems = [problems]
        super().__init__([p if isinstance(p, Problem) else Problem(MODEL_ERROR, "", "", "", str(p))
                          for p in problems])


def node_problem(message: str, node: Any, kind: str) -> Problem:
    """The problem of one node of the model's graph (strict mode)."""
    return Problem(TYPE_ERROR if kind == "type" else SHAPE_ERROR, f"graph.node[{node.index}]",
                   node.name, node.op_type, message)


class NodeInferenceError(Exception):
    """Raised by an operator's rule: the node's inputs or attributes are inconsistent.

    The reference's ``fail_type_inference``/``fail_shape_inference``: recorded against
    the node, and raised at the end only in strict mode.  ``kind`` is "type" or "shape".
    """

    def __init__(self, message: str, kind: str = "shape"):
        super().__init__(message)
        self.kind = kind

    def __str__(self) -> str:
        tag = "[TypeInferenceError] " if self.kind == "type" else "[ShapeInferenceError] "
        return tag + self.args[0]


class HardError(Exception):
    """An error the reference raises whatever the mode (its non-inference runtime errors).

    Examples: reading an input index the node does not have, a type-constraint failure
    under ``check_type``, a node whose domain has no opset import.  The engine turns it
    into `InferenceError` at once.
    """


class FatalError(Exception):
    """An error that ends inference wherever it happens (the reference's logic errors,
    e.g. an element type with no type-string name under ``check_type``): not recorded
    against a node, not caught by an enclosing node, raised as `InferenceError`."""


def fail_type(*parts) -> NodeInferenceError:
    return NodeInferenceError("".join(str(p) for p in parts), "type")


def fail_shape(*parts) -> NodeInferenceError:
    return NodeInferenceError("".join(str(p) for p in parts), "shape")
