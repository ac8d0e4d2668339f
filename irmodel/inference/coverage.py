"""Which schemas and models our inference covers (for the coverage tool and the tests).

A model is covered when every node it can reach -- through sub-graphs, model-local
functions and schema function bodies -- uses a schema whose reference inference
function we implement (or a schema without one, which needs nothing), or an op with no
schema at all (unsupported by the reference too).
"""

from __future__ import annotations

from . import lookup, schemas


def schema_covered(schema) -> bool:
    """True when we implement the reference's inference function of ``schema`` (or it has none)."""
    if not schema.has_type_and_shape_inference_function:
        return True
    return lookup.inference_function(schema.domain, schema.name, schema.since_version) is not None


def missing_ops(model) -> set:
    """``{(domain, op_type, since_version)}`` reachable from ``model`` that we do not infer."""
    opsets = {op.domain: op.version for op in model.opset_import}
    functions = {(f.domain, f.name): f for f in model.functions}
    missing = set()
    seen_bodies: set[int | tuple[str, str, int]] = set()  # id() of local functions, schema keys
    stack = [(model.graph.node, opsets)]
    while stack:
        nodes, imports = stack.pop()
        for node in nodes:
            for a in node.attribute:
                if a.HasField("g"):
                    stack.append((a.g.node, imports))
                for g in a.graphs:
                    stack.append((g.node, imports))
            version = imports.get(node.domain)
            if version is None and node.domain == "":
                version = imports.get("ai.onnx")
            if version is None:
                continue
            schema = schemas.get_schema(node.op_type, version, node.domain)
            if schema is None:
                f = functions.get((node.domain, node.op_type))
                if f is not None and id(f) not in seen_bodies:
                    seen_bodies.add(id(f))
                    stack.append((f.node, {op.domain: op.version for op in f.opset_import}))
                continue
            if not schema_covered(schema):
                missing.add((schema.domain, schema.name, schema.since_version))
            elif not schema.has_type_and_shape_inference_function and schema.has_function:
                key = (schema.domain, schema.name, schema.since_version)
                body = schemas.latest_function_body(schema) if key not in seen_bodies else None
                if body is not None:
                    seen_bodies.add(key)
                    stack.append((body.node, {op.domain: op.version for op in body.opset_import}))
    return missing
