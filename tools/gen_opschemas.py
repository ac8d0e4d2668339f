"""Generate irmodel/defs/opschemas.json from the installed reference (development time only).

    python tools/gen_opschemas.py [--output PATH]

Reads every schema of every version that ``onnx.defs.get_all_schemas_with_history()``
registers and writes them as JSON, the facts only: no doc strings, no source
locations.  Protobuf values (attribute defaults, static function bodies) are stored
as the base64 of the reference's own serialization, so irmodel decodes them back to
the identical bytes.  Context-dependent function bodies are built by C++ code in
onnx at inference time; only their opset versions are listed.

The output is deterministic (schemas sorted by domain, name and since_version; the
inputs, outputs, type constraints and attributes in the order onnx gives them) and
laid out for diffs: one line per schema field, one line per formal parameter, type
constraint, attribute and function body.  ``tests/defs/test_defs.py`` regenerates the
file into a temporary path and fails on any byte of difference.
"""

from __future__ import annotations

import base64
import json
import os
import sys

from generated_file import generator_main

FORMAT_VERSION = 1
DEFAULT_OUTPUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                              "irmodel", "defs", "opschemas.json")


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _formal_parameter(param) -> dict:
    return {"name": param.name, "type_str": param.type_str, "option": param.option.value,
            "is_homogeneous": param.is_homogeneous, "min_arity": param.min_arity,
            "differentiation_category": param.differentiation_category.value}


def _schema_record(schema) -> dict:
    """One schema as plain JSON values; the keys are the names irmodel.defs.OpSchema uses."""
    return {
        "name": schema.name,
        "domain": schema.domain,
        "since_version": schema.since_version,
        "deprecated": schema.deprecated,
        "support_level": schema.support_level.value,
        "node_determinism": schema.node_determinism.value,
        "min_input": schema.min_input,
        "max_input": schema.max_input,
        "min_output": schema.min_output,
        "max_output": schema.max_output,
        "inputs": [_formal_parameter(p) for p in schema.inputs],
        "outputs": [_formal_parameter(p) for p in schema.outputs],
        "type_constraints": [{"type_param_str": c.type_param_str,
                              "allowed_type_strs": list(c.allowed_type_strs)}
                             for c in schema.type_constraints],
        # _default_value is the serialized AttributeProto (b"" when there is no default);
        # the public default_value parses it into a protobuf message.
        "attributes": [{"name": a.name, "type": a.type.value, "required": a.required,
                        "default_value": _b64(a._default_value)}
                       for a in schema.attributes.values()],
        "has_type_and_shape_inference_function": schema.has_type_and_shape_inference_function,
        "has_data_propagation_function": schema.has_data_propagation_function,
        # get_function_with_opset_version(v) at a registered v is the body registered for v.
        "functions": [{"opset_version": v, "body": _b64(schema.get_function_with_opset_version(v))}
                      for v in schema.function_opset_versions],
        "context_dependent_function_opset_versions":
            list(schema.context_dependent_function_opset_versions),
    }


def _is_scalar(value) -> bool:
    return not isinstance(value, (dict, list))


def _is_leaf(value) -> bool:
    """Written on one line: a scalar, a list of scalars, a dict of those."""
    if isinstance(value, dict):
        return all(_is_scalar(v) or _is_leaf(v) and isinstance(v, list) for v in value.values())
    if isinstance(value, list):
        return all(_is_scalar(v) for v in value)
    return True


def _write(value, out: list, indent: str) -> None:
    """JSON text of ``value``: containers of containers one item a line, leaves compact."""
    if _is_leaf(value):
        out.append(json.dumps(value, ensure_ascii=True, separators=(", ", ": ")))
        return
    inner = indent + " "
    if isinstance(value, dict):
        items = list(value.items())
        out.append("{")
        for i, (key, item) in enumerate(items):
            out.append("\n" + inner + json.dumps(key) + ": ")
            _write(item, out, inner)
            if i + 1 < len(items):
                out.append(",")
        out.append("\n" + indent + "}")
    else:
        out.append("[")
        for i, item in enumerate(value):
            out.append("\n" + inner)
            _write(item, out, inner)
            if i + 1 < len(value):
                out.append(",")
        out.append("\n" + indent + "]")


def build_table() -> dict:
    """The whole table from the installed onnx, as plain JSON values."""
    import onnx
    import onnx.defs

    schemas = sorted(onnx.defs.get_all_schemas_with_history(),
                     key=lambda s: (s.domain, s.name, s.since_version))
    versions = onnx.defs.C.schema_version_map()
    return {
        "format_version": FORMAT_VERSION,
        "generated_by": "tools/gen_opschemas.py",
        "onnx_version": onnx.__version__,
        # opset range per domain, as onnx.defs.C.schema_version_map() gives it
        "domain_versions": {d: list(versions[d]) for d in sorted(versions)},
        "schemas": [_schema_record(s) for s in schemas],
    }


def render(table: dict) -> bytes:
    out: list = []
    _write(table, out, "")
    out.append("\n")
    return "".join(out).encode("ascii")


def main(argv: list | None = None) -> int:
    return generator_main(lambda: render(build_table()), DEFAULT_OUTPUT, __doc__.split("\n\n")[0], argv)


if __name__ == "__main__":
    sys.exit(main())
