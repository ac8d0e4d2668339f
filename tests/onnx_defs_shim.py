"""A stand-in for `irmodel.defs` built on ``onnx.defs`` (tests only).

The schema package is being built on another branch to the contract in DEFS_API.md; until
it is merged, the inference tests install this adapter as ``irmodel.defs`` so that
function bodies and type constraints are available.  Only what inference reads is here.
"""

from __future__ import annotations

import sys
import types


def install() -> None:
    try:
        import irmodel.defs  # noqa: F401
        return
    except ImportError:
        pass
    import onnx.defs as od
    import irmodel

    mod = types.ModuleType("irmodel.defs")

    class SchemaError(LookupError):
        pass

    class Param:
        __slots__ = ("name", "type_str", "option", "is_homogeneous")

        def __init__(self, p):
            self.name = p.name
            self.type_str = p.type_str
            self.option = int(p.option.value)
            self.is_homogeneous = p.is_homogeneous

    class Constraint:
        __slots__ = ("type_param_str", "allowed_type_strs")

        def __init__(self, c):
            self.type_param_str = c.type_param_str
            self.allowed_type_strs = tuple(c.allowed_type_strs)

    class Schema:
        def __init__(self, s):
            self._s = s
            self.name = s.name
            self.domain = s.domain
            self.since_version = s.since_version
            self.deprecated = s.deprecated
            self.inputs = tuple(Param(p) for p in s.inputs)
            self.outputs = tuple(Param(p) for p in s.outputs)
            self.min_input, self.max_input = s.min_input, s.max_input
            self.min_output, self.max_output = s.min_output, s.max_output
            self.type_constraints = tuple(Constraint(c) for c in s.type_constraints)
            self._tc = {c.type_param_str: c for c in self.type_constraints}
            self.has_type_and_shape_inference_function = s.has_type_and_shape_inference_function
            self.has_data_propagation_function = s.has_data_propagation_function
            self.has_function = s.has_function
            self.has_context_dependent_function = s.has_context_dependent_function
            self.function_opset_versions = tuple(s.function_opset_versions)

        def type_constraint(self, name):
            return self._tc.get(name)

        @property
        def function_body(self):
            if not self._s.has_function:
                return None
            return irmodel.loads(self._s.function_body.SerializeToString(), "FunctionProto")

        def get_function_with_opset_version(self, v):
            f = self._s.get_function_with_opset_version(v)
            if not f:
                return None
            data = f if isinstance(f, bytes) else f.SerializeToString()
            return irmodel.loads(data, "FunctionProto")

    cache = {}

    def get_schema(op_type, max_inclusive_version=None, domain=""):
        key = (op_type, max_inclusive_version, domain)
        if key not in cache:
            try:
                if max_inclusive_version is None:
                    s = od.get_schema(op_type, domain)
                else:
                    s = od.get_schema(op_type, max_inclusive_version, domain)
            except od.SchemaError as exc:
                raise SchemaError(str(exc)) from None
            cache[key] = Schema(s)
        return cache[key]

    def has_schema(op_type, max_inclusive_version=None, domain=""):
        try:
            get_schema(op_type, max_inclusive_version, domain)
            return True
        except SchemaError:
            return False

    mod.SchemaError = SchemaError
    mod.get_schema = get_schema
    mod.has_schema = has_schema
    mod.get_all_schemas_with_history = lambda: [Schema(s) for s in od.get_all_schemas_with_history()]
    mod.get_all_schemas = lambda: [Schema(s) for s in od.get_all_schemas()]
    mod.onnx_opset_version = od.onnx_opset_version
    mod.IS_TEST_SHIM = True
    sys.modules["irmodel.defs"] = mod
    irmodel.defs = mod
