"""Operator schemas: every operator onnx registers, every version, as data.

``from irmodel import defs`` gives ``onnx.defs``' lookups with its semantics::

    defs.get_schema("Conv", 11)            # largest since_version <= 11: Conv-11
    defs.get_schema("LabelEncoder", domain="ai.onnx.ml")
    defs.has_schema("Foo")                 # False
    defs.get_all_schemas_with_history()    # 659 schemas for onnx 1.23.2

Why data: the checker and shape inference need the schemas (arity, type constraints,
attribute types and defaults, function bodies), and the reference keeps them in C++.
irmodel must run with the standard library alone, so ``tools/gen_opschemas.py`` reads
them from the installed reference at development time and writes ``opschemas.json``
in this package; ``tests/test_defs.py`` regenerates that file and fails on any
difference, and compares every field of every schema with ``onnx.defs``.  To follow
a new onnx release: install it, run the script, review the diff, commit.

Loaded on first use: importing this package reads nothing; the first lookup parses the
file (about 1 MB of JSON, laid out one field or parameter a line so that changes
diff well) and indexes it, and an `OpSchema` is built from its record when first
asked for.  ``import irmodel`` does not import this package.

What is stored: name, domain, since_version, deprecated, support level, determinism;
inputs and outputs (name, type string, single/optional/variadic, homogeneous, min
arity, differentiation category); min/max input and output counts; type constraints
with their allowed type strings; attributes (name, type, required, and the default
as the serialized AttributeProto); whether onnx has an inference or data-propagation
function; static function bodies for every opset version they are registered for
(serialized FunctionProto); the opset versions of context-dependent function bodies.

What is not stored: doc strings of operators, parameters, constraints and attributes,
and source file/line (size); the code of inference functions, data propagation and
context-dependent function builders (C++ in onnx: the inference package implements
its own); ``FormalParameter.types`` (onnx's normalised spelling of the allowed types;
the declared strings are in the type constraints).

Differences from onnx.defs, all deliberate: ``has_schema`` is onnx's ``has``;
``get_schema``'s version may be None (the newest); ``function_body`` and
``get_function_with_opset_version`` return None, not an empty message/bytes, when
there is no body, and return ``irmodel.FunctionProto``; ``Attribute.default_value``
is an ``irmodel.AttributeProto``; ``OpSchema.attributes`` is a read-only mapping;
integer codes are plain ints (the IntEnums here name them); `SchemaError` is a
``LookupError``.  As in onnx.defs, the domain "ai.onnx" is not an alias of "" in
lookups (onnx's checker normalises domains first: `normalize_domain`).
"""

from __future__ import annotations

from .opschema import (Attribute, DifferentiationCategory, FormalParameter,
                       FormalParameterOption, NodeDeterminism, OpSchema, SupportType,
                       TypeConstraintParam)
from .registry import (AI_ONNX_DOMAIN, AI_ONNX_PREVIEW_DOMAIN, AI_ONNX_PREVIEW_TRAINING_DOMAIN,
                       ONNX_DOMAIN, ONNX_ML_DOMAIN, SchemaError, domain_version_range,
                       get_all_schemas, get_all_schemas_with_history, get_schema, has_schema,
                       is_onnx_domain, normalize_domain, onnx_ml_opset_version,
                       onnx_opset_version, reference_version)

has = has_schema  # onnx.defs' name

__all__ = [
    "get_schema", "has_schema", "has", "get_all_schemas", "get_all_schemas_with_history",
    "onnx_opset_version", "onnx_ml_opset_version", "domain_version_range", "reference_version",
    "normalize_domain", "is_onnx_domain", "SchemaError",
    "OpSchema", "FormalParameter", "TypeConstraintParam", "Attribute",
    "FormalParameterOption", "DifferentiationCategory", "SupportType", "NodeDeterminism",
    "ONNX_DOMAIN", "AI_ONNX_DOMAIN", "ONNX_ML_DOMAIN", "AI_ONNX_PREVIEW_DOMAIN",
    "AI_ONNX_PREVIEW_TRAINING_DOMAIN",
]
