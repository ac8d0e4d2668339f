"""Operator schemas as inference needs them, from `irmodel.defs`.

Inference asks four things of a schema: which version applies to a node (its
since_version), whether the reference has an inference function for it, its function
body (for the schemas whose outputs come from a body), and its formal parameters and
type constraints (``check_type``).  When the schema package is not available, a
stand-in built from our own registry answers the first two, so inference still runs
(without function bodies and type checks).
"""

from __future__ import annotations

from . import lookup

_cache: dict = {}
_seen = [0]  # `irmodel.defs.registry.changes` when `_cache` was last valid
_defs = None


def _defs_module():
    global _defs
    if _defs is None:
        try:
            from .. import defs as d  # noqa: PLC0415
        except ImportError:
            d = False
        _defs = d
    return _defs


def get_schema(op_type: str, version: int, domain: str):
    """The schema that applies to ``op_type`` at opset ``version`` of ``domain``, or None."""
    key = (op_type, version, domain)
    d = _defs_module()
    if d and d.registry.changes != _seen[0]:  # a program (de)registered a schema since
        _cache.clear()
        _seen[0] = d.registry.changes
    try:
        return _cache[key]
    except KeyError:
        pass
    if d:
        try:
            schema = d.get_schema(op_type, version, domain)
        except d.SchemaError:
            schema = None
    else:
        schema = _registry_schema(op_type, version, domain)
    _cache[key] = schema
    return schema


def beyond_reference(schema) -> bool:
    """True for a schema onnx does not have (onnxruntime's com.microsoft table): when no rule
    of ours infers it, the node is unsupported as the reference sees any op it has no schema
    for (its outputs stay untyped and later node errors are not recorded)."""
    d = _defs_module()
    return bool(d) and d.is_contrib_domain(schema.domain)


def has_schema_package() -> bool:
    return bool(_defs_module())


class _RegistrySchema:
    """The little a schema says that our registry knows too."""

    __slots__ = ("name", "domain", "since_version", "has_type_and_shape_inference_function",
                 "has_data_propagation_function")
    has_function = False
    deprecated = False

    def __init__(self, name, domain, since_version, has_inference, has_propagation):
        self.name = name
        self.domain = domain
        self.since_version = since_version
        self.has_type_and_shape_inference_function = has_inference
        self.has_data_propagation_function = has_propagation

    def get_function_with_opset_version(self, v):
        return None

    function_body = None


def _registry_schema(op_type, version, domain):
    versions = [v for v in lookup.registered_versions(domain, op_type) if v <= version]
    if not versions:
        return None
    since = versions[-1]
    return _RegistrySchema(op_type, domain, since,
                           lookup.inference_function(domain, op_type, since) is not None,
                           lookup.propagation_function(domain, op_type, since) is not None)


def latest_function_body(schema):
    """``GetFunction()`` with no version: the body of the highest function version."""
    versions = getattr(schema, "function_opset_versions", ())
    if versions:
        return schema.get_function_with_opset_version(max(versions))
    return schema.function_body
