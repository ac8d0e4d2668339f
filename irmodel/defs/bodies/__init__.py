"""Context-dependent function bodies, built in Python from a node and its input types.

For some schemas onnx has no stored function body but code that writes one for a given
node (``SetContextDependentFunctionBodyBuilder``): the body depends on the node's
attributes and its inputs' element types (a Cast to the target's type, a constant made
from an attribute).  `build_function_body` is that code for the schemas listed in
`BUILDERS`, one builder per operator, giving the body onnx's
``OpSchema.get_context_dependent_function_with_opset_version`` gives: the same nodes,
attributes, names and opset imports (``tests/defs/test_defs_bodies.py`` compares them).  The
one field left out is ``doc_string`` (the schema's documentation, which the generated
schema table does not store).

Inference does not use these bodies: the reference's shape inference calls a schema's
inference function or else its *stored* body, never a built one (``ProcessCall`` of
``GetFunction()`` in onnx/shape_inference/implementation.cc), so neither does ours
(GroupNormalization, the one such schema without an inference function, leaves its
outputs untyped in both).  The bodies serve whoever expands a node into its definition.

The builders live by family in ``bodies_elementwise``, ``bodies_norm``, ``bodies_loss``,
``bodies_tensor``, ``bodies_attention``, ``bodies_flex_attention`` (with ``bodies_inline``),
``bodies_recurrent`` and ``bodies_sequence``, on the shared writer of
``bodies_base``; this module joins them and wraps a body in its FunctionProto.  Schemas with
a context-dependent body and no builder here yet are listed by `missing_builders` (their
reference builders are in onnx/defs/*.cc).
"""

from __future__ import annotations

from . import (attention as bodies_attention, elementwise as bodies_elementwise, flex_attention as
               bodies_flex_attention, loss as bodies_loss, norm as bodies_norm, recurrent as
               bodies_recurrent, sequence as bodies_sequence, tensor as bodies_tensor)
from .base import BodyBuilder, NodeAttributes

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

BUILDERS: dict[tuple[str, str], Callable] = {
    **bodies_elementwise.BUILDERS,
    **bodies_norm.BUILDERS,
    **bodies_loss.BUILDERS,
    **bodies_tensor.BUILDERS,
    **bodies_attention.BUILDERS,
    **bodies_sequence.BUILDERS,
    **bodies_recurrent.BUILDERS,
    **bodies_flex_attention.BUILDERS,
}


def _version_for(schema, opset_version: int | None) -> int | None:
    """The builder's opset version: the given one if the schema builds for it, else None."""
    versions = schema.context_dependent_function_opset_versions
    if opset_version is None:
        return max(versions) if versions else None
    return opset_version if opset_version in versions else None


def build_function_body(schema, node, input_types: Sequence, opset_version: int | None = None):
    """The function body onnx builds for ``node`` (a FunctionProto), or None.

    ``schema`` is an `irmodel.defs.OpSchema`; ``node`` a NodeProto (its attributes and
    which inputs and outputs it names are read); ``input_types`` one TypeProto (or None) per
    input.  ``opset_version`` is one of the schema's
    ``context_dependent_function_opset_versions`` (default: the highest).  None when the
    schema builds no body at that version, when the builder cannot write one for this node
    (where the reference returns an empty body, or the half-built one some of its builders
    leave when they give up midway), or when no builder of ours exists (see
    `missing_builders`).  Raises `irmodel.ValidationError`, with the reference's message,
    where the reference's builder raises (a SequenceMap node that does not fit its body, a
    DepthToSpace/SpaceToDepth blocksize whose square overflows int64).
    """
    version = _version_for(schema, opset_version)
    builder = BUILDERS.get((schema.domain, schema.name))
    if version is None or builder is None:
        return None
    b = BodyBuilder()
    if not builder(b, NodeAttributes(node), list(input_types), version):
        return None
    from ...messages import FunctionProto, OperatorSetIdProto  # noqa: PLC0415
    f = FunctionProto()
    f.name = schema.name
    f.domain = schema.domain
    f.input.extend(b.function_inputs if b.function_inputs is not None else [p.name for p in schema.inputs])
    f.output.extend(b.function_outputs if b.function_outputs is not None else [p.name for p in schema.outputs])
    f.attribute.extend(schema.attributes)
    f.node.extend(b.nodes)
    # the schema's own domain, at the version asked for when it is the default domain (a
    # preview operator's body imports only its own domain, though its nodes are ai.onnx's)
    opset = OperatorSetIdProto()
    opset.domain = schema.domain
    opset.version = version if schema.domain == "" else schema.since_version
    f.opset_import.append(opset)
    return f


def missing_builders(schemas) -> list[tuple[str, str, int]]:
    """(domain, name, since_version) of ``schemas`` (``defs.get_all_schemas_with_history()``)
    that have a built body no builder here writes.  The schemas are the caller's: the
    registry makes schemas whose bodies come from here, so this module never imports it."""
    return sorted((s.domain, s.name, s.since_version) for s in schemas
                  if s.context_dependent_function_opset_versions and (s.domain, s.name) not in BUILDERS)


__all__ = ["BUILDERS", "build_function_body", "missing_builders"]
