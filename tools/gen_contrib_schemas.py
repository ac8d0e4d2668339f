"""Generate irmodel/defs/contrib_microsoft.json: onnxruntime's com.microsoft schemas (development time).

    python tools/gen_contrib_schemas.py [--output PATH]

onnx registers no schema for the operators onnxruntime adds in the ``com.microsoft``
domain (Attention, SkipLayerNormalization, MatMulNBits, ...).  onnxruntime registers
them in C++ and writes its documentation (docs/ContribOperators.md) from the same
registrations; its Python module exposes them (``get_all_operator_schema``), so this
script reads the facts from the installed onnxruntime (a pinned test dependency), not
from the prose: inputs and outputs with their option (single, optional, variadic),
type constraints, attributes with type, required flag and default, arity bounds.

onnxruntime's binding does not expose four facts onnx's table has; they are written as
onnx's defaults: ``min_arity`` 1, differentiation category and node determinism
unknown, no data-propagation function, no function bodies.

The layout is tools/gen_opschemas.py's (the same record keys, so
``irmodel.defs.OpSchema.from_record`` reads both); ``tests/defs/test_contrib_defs.py``
regenerates the file and fails on any byte of difference.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_opschemas import _b64, render  # noqa: E402
from generated_file import generator_main  # noqa: E402

FORMAT_VERSION = 1
DOMAIN = "com.microsoft"
DEFAULT_OUTPUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                              "irmodel", "defs", "contrib_microsoft.json")


def _formal_parameter(param) -> dict:
    return {"name": param.name, "type_str": param.typeStr, "option": int(param.option.value),
            "is_homogeneous": bool(param.isHomogeneous), "min_arity": 1,
            "differentiation_category": 0}


def _schema_record(schema) -> dict:
    return {
        "name": schema.name,
        "domain": schema.domain,
        "since_version": schema.since_version,
        "deprecated": bool(schema.deprecated),
        "support_level": int(schema.support_level.value),
        "node_determinism": 0,
        "min_input": schema.min_input,
        "max_input": schema.max_input,
        "min_output": schema.min_output,
        "max_output": schema.max_output,
        "inputs": [_formal_parameter(p) for p in schema.inputs],
        "outputs": [_formal_parameter(p) for p in schema.outputs],
        "type_constraints": [{"type_param_str": c.type_param_str,
                              "allowed_type_strs": list(c.allowed_type_strs)}
                             for c in schema.type_constraints],
        "attributes": [{"name": a.name, "type": int(a.type.value), "required": bool(a.required),
                        "default_value": _b64(a._default_value)}
                       for _name, a in sorted(schema.attributes.items())],
        "has_type_and_shape_inference_function": bool(schema.has_type_and_shape_inference_function),
        "has_data_propagation_function": False,
        "functions": [],
        "context_dependent_function_opset_versions": [],
    }


def build_table() -> dict:
    """The com.microsoft schemas of the installed onnxruntime, as plain JSON values."""
    import onnxruntime
    from onnxruntime.capi import onnxruntime_pybind11_state as ort_c

    schemas = sorted((s for s in ort_c.get_all_operator_schema() if s.domain == DOMAIN),
                     key=lambda s: (s.name, s.since_version))
    return {
        "format_version": FORMAT_VERSION,
        "generated_by": "tools/gen_contrib_schemas.py",
        "onnxruntime_version": onnxruntime.__version__,
        "domain": DOMAIN,
        "schemas": [_schema_record(s) for s in schemas],
    }


def main(argv: list | None = None) -> int:
    return generator_main(lambda: render(build_table()), DEFAULT_OUTPUT, __doc__.split("\n\n")[0], argv)

if __name__ == "__main__":
    sys.exit(main())
