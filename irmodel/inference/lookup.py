"""The rules of an operator version: its inference and data-propagation functions.

Importing this module imports every operator family (`irmodel.inference.ops`), which
register themselves in `irmodel.inference.registry`; the registry itself imports none of
them, so the table and the rules that fill it form no cycle.  Everything that looks a
rule up (the engine, the schema records, the coverage report) imports this module.
"""

from __future__ import annotations

from . import ops  # noqa: F401 (importing registers every family)
from .pyrules import PythonRule
from .registry import INFER, PROPAGATE, find


def inference_function(domain: str, op_type: str, since_version: int):
    """The function for the schema ``op_type``-``since_version`` of ``domain``, or None."""
    return find(INFER, domain, op_type, since_version)


def rule_for(schema, domain: str, op_type: str):
    """The rule that infers ``schema``: the Python function a program set on it (onnx's
    ``set_type_and_shape_inference_function``, wrapped by `pyrules.PythonRule`), else
    ours.  Asked once per (domain, op, version) of a run (`engine.Run.op_rules`)."""
    get_user = getattr(schema, "get_type_and_shape_inference_function", None)
    user = get_user() if get_user is not None else None
    if user is not None:
        return PythonRule(user)
    return inference_function(domain, op_type, schema.since_version)


def propagation_function(domain: str, op_type: str, since_version: int):
    """The data-propagation function in force for that schema, or None."""
    return find(PROPAGATE, domain, op_type, since_version)


def registered_versions(domain: str, op_type: str) -> list:
    """The since_versions registered for an operator (with or without a function)."""
    entry = INFER.get((domain, op_type))
    return list(entry[0]) if entry else []


def registered_ops() -> list:
    """``[(domain, op_type)]`` of every registered operator."""
    return sorted(INFER)
