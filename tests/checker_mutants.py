"""Semantic mutants of reference models, for the checker's differential tests.

Each mutator takes a ``random.Random`` and a reference ``onnx.ModelProto`` and returns a
changed copy, or None when the model has nothing to change that way.  Most break one
rule; the ``harmless_*`` ones must leave a valid model valid.  The verdict each mutant
deserves is never written here: the tests ask ``onnx.checker`` for it.

Built with onnx's own protobuf API (the reference's messages), so that a mutant is what
the reference sees (tests/checker/test_checker_rules.py builds its cases with irmodel's API).
"""

from __future__ import annotations

import random
from typing import Callable

import onnx
from onnx import TensorProto, helper as oh


def _copy(model: onnx.ModelProto) -> onnx.ModelProto:
    m = onnx.ModelProto()
    m.CopyFrom(model)
    return m


def _schema(node: onnx.NodeProto, model: onnx.ModelProto):
    versions = {o.domain: o.version for o in model.opset_import}
    version = versions.get(node.domain, versions.get("ai.onnx") if node.domain == "" else None)
    if version is None:
        return None
    try:
        return onnx.defs.get_schema(node.op_type, version, node.domain)
    except onnx.defs.SchemaError:
        return None


def _pick_node(rng: random.Random, model, where=lambda n: True):
    nodes = [n for n in model.graph.node if where(n)]
    return rng.choice(nodes) if nodes else None


def _defined_names(model) -> list:
    g = model.graph
    names = [v.name for v in g.input] + [t.name for t in g.initializer]
    for n in g.node:
        names.extend(o for o in n.output if o)
    return names


# -- mutants that break a rule -------------------------------------------------------------

def undefined_input(rng, model):
    m = _copy(model)
    node = _pick_node(rng, m, lambda n: any(n.input))
    if node is None:
        return None
    idx = rng.choice([i for i, x in enumerate(node.input) if x])
    node.input[idx] = "never_defined_anywhere"
    return m


def duplicate_output(rng, model):
    m = _copy(model)
    names = _defined_names(m)
    node = _pick_node(rng, m, lambda n: any(n.output))
    if node is None or not names:
        return None
    first = [i for i, x in enumerate(node.output) if x][0]
    node.output[first] = rng.choice([x for x in names if x != node.output[first]] or names)
    return m


def nodes_out_of_order(rng, model):
    m = _copy(model)
    nodes = list(m.graph.node)
    for i, producer in enumerate(nodes):
        made = set(o for o in producer.output if o)
        for j in range(i + 1, len(nodes)):
            if made & set(nodes[j].input):
                nodes[i], nodes[j] = nodes[j], nodes[i]
                del m.graph.node[:]
                m.graph.node.extend(nodes)
                return m
    return None


def unknown_op(rng, model):
    m = _copy(model)
    node = _pick_node(rng, m, lambda n: n.domain in ("", "ai.onnx", "ai.onnx.ml"))
    if node is None:
        return None
    node.op_type = "NoSuchOperator"
    return m


def custom_domain_unknown_op(rng, model):
    """An op of a custom domain that is imported: valid unless check_custom_domain."""
    m = _copy(model)
    node = _pick_node(rng, m)
    if node is None:
        return None
    node.domain = "com.example"
    m.opset_import.add(domain="com.example", version=1)
    return m


def missing_opset_import(rng, model):
    m = _copy(model)
    node = _pick_node(rng, m)
    if node is None:
        return None
    keep = [o for o in m.opset_import if o.domain != node.domain and not (node.domain == "" and o.domain == "ai.onnx")]
    del m.opset_import[:]
    m.opset_import.extend(keep)
    return m


def bad_ir_version(rng, model):
    m = _copy(model)
    m.ir_version = rng.choice([0, onnx.IR_VERSION + 1, 2, 1 << 40, -3])
    return m


def wrong_attribute_type(rng, model):
    m = _copy(model)
    node = _pick_node(rng, m, lambda n: any(a.type in (1, 2, 3) for a in n.attribute))
    if node is None:
        return None
    attr = rng.choice([a for a in node.attribute if a.type in (1, 2, 3)])
    value = {1: attr.f, 2: attr.i, 3: attr.s}[attr.type]
    attr.ClearField({1: "f", 2: "i", 3: "s"}[attr.type])
    if rng.random() < 0.5 and attr.type != onnx.AttributeProto.INT:
        attr.type = onnx.AttributeProto.INT
        attr.i = 1
    else:
        attr.type = onnx.AttributeProto.FLOATS
        attr.floats.append(float(len(value) if isinstance(value, bytes) else value))
    return m


def type_field_mismatch(rng, model):
    """The type says one thing and the value field another (check_attribute's rule)."""
    m = _copy(model)
    node = _pick_node(rng, m, lambda n: len(n.attribute) > 0)
    if node is None:
        return None
    attr = rng.choice(node.attribute)
    attr.type = onnx.AttributeProto.STRINGS if attr.type != onnx.AttributeProto.STRINGS else onnx.AttributeProto.INT
    return m


def missing_required_attribute(rng, model):
    m = _copy(model)
    candidates = []
    for n in m.graph.node:
        s = _schema(n, m)
        if s is not None:
            required = [a.name for a in n.attribute if a.name in s.attributes and s.attributes[a.name].required]
            if required:
                candidates.append((n, required))
    if not candidates:
        return None
    node, required = rng.choice(candidates)
    name = rng.choice(required)
    keep = [a for a in node.attribute if a.name != name]
    del node.attribute[:]
    node.attribute.extend(keep)
    return m


def unknown_attribute(rng, model):
    m = _copy(model)
    node = _pick_node(rng, m)
    if node is None:
        return None
    node.attribute.append(oh.make_attribute(rng.choice(["zz_unknown", "__internal", "alpha_"]), 1))
    return m


def duplicate_attribute(rng, model):
    m = _copy(model)
    node = _pick_node(rng, m, lambda n: len(n.attribute) > 0)
    if node is None:
        return None
    node.attribute.append(rng.choice(node.attribute))
    return m


def attribute_without_type(rng, model):
    m = _copy(model)
    node = _pick_node(rng, m, lambda n: len(n.attribute) > 0)
    if node is None:
        return None
    rng.choice(node.attribute).ClearField("type")
    return m


def too_many_inputs(rng, model):
    m = _copy(model)
    names = _defined_names(m)
    candidates = [n for n in m.graph.node if (s := _schema(n, m)) is not None and s.max_input < 1000]
    if not candidates or not names:
        return None
    node = rng.choice(candidates)
    s = _schema(node, m)
    while len(node.input) <= s.max_input:
        node.input.append(rng.choice(names))
    return m


def too_many_outputs(rng, model):
    m = _copy(model)
    candidates = [n for n in m.graph.node if (s := _schema(n, m)) is not None and s.max_output < 1000]
    if not candidates:
        return None
    node = rng.choice(candidates)
    s = _schema(node, m)
    while len(node.output) <= s.max_output:
        node.output.append(f"extra_output_{len(node.output)}")
    return m


def empty_required_input(rng, model):
    m = _copy(model)
    node = _pick_node(rng, m, lambda n: len(n.input) > 0)
    if node is None:
        return None
    node.input[0] = ""
    return m


def op_type_empty_or_no_io(rng, model):
    m = _copy(model)
    node = _pick_node(rng, m)
    if node is None:
        return None
    if rng.random() < 0.5:
        node.op_type = ""
    else:
        del node.input[:]
        del node.output[:]
    return m


def duplicate_graph_input(rng, model):
    m = _copy(model)
    if not m.graph.input:
        return None
    m.graph.input.append(rng.choice(m.graph.input))
    return m


def graph_output_not_produced(rng, model):
    m = _copy(model)
    m.graph.output.append(oh.make_tensor_value_info("produced_by_nobody", TensorProto.FLOAT, [1]))
    return m


def graph_name_empty(rng, model):
    m = _copy(model)
    m.graph.name = ""
    return m


def value_info_incomplete(rng, model):
    m = _copy(model)
    vis = list(m.graph.input) + list(m.graph.output)
    if not vis:
        return None
    vi = rng.choice(vis)
    choice = rng.randrange(4)
    if choice == 0:
        vi.ClearField("type")
    elif choice == 1 and vi.type.HasField("tensor_type"):
        vi.type.tensor_type.ClearField("shape")
    elif choice == 2 and vi.type.HasField("tensor_type"):
        vi.type.tensor_type.ClearField("elem_type")
    else:
        vi.name = ""
    return m


def bad_initializer(rng, model):
    m = _copy(model)
    g = m.graph
    kind = rng.randrange(8)
    t = onnx.TensorProto(name=f"bad_init_{kind}", data_type=TensorProto.FLOAT, dims=[2, 3])
    if kind == 0:
        t.raw_data = b"\x00" * 20  # 24 needed
    elif kind == 1:
        t.float_data.extend([1.0] * 5)  # 6 needed
    elif kind == 2:
        t.ClearField("data_type")
        t.raw_data = b"\x00" * 24
    elif kind == 3:
        t.name = ""
        t.raw_data = b"\x00" * 24
    elif kind == 4:
        t.int64_data.extend([1] * 6)  # wrong field for FLOAT
    elif kind == 5:
        t.dims[:] = [2, -3]
    elif kind == 6:
        t.data_type = TensorProto.STRING
        t.raw_data = b"abcdef"
    else:
        t.dims[:] = [0]
        t.float_data.append(1.0)
    g.initializer.append(t)
    if rng.random() < 0.3:  # and a duplicate name
        g.initializer.append(t)
    return m


def initializer_not_input_old_ir(rng, model):
    m = _copy(model)
    m.ir_version = 3
    m.graph.initializer.append(oh.make_tensor("only_init", TensorProto.FLOAT, [1], [1.0]))
    return m


def duplicate_metadata(rng, model):
    m = _copy(model)
    oh.set_model_props(m, {"k": "1"})
    m.metadata_props.add(key="k", value="2")
    return m


def bad_sparse(rng, model):
    m = _copy(model)
    kind = rng.randrange(7)
    values = oh.make_tensor(f"sparse_{kind}", TensorProto.FLOAT, [3], [1.0, 2.0, 3.0])
    idx = [[1, 5, 9], [5, 1, 9], [1, 5, 99], [1, 5, 5]][kind % 4]
    indices = oh.make_tensor("idx", TensorProto.INT64, [3], idx)
    dims = [2, 5]
    if kind == 4:
        indices = oh.make_tensor("idx", TensorProto.INT32, [3], idx)
    elif kind == 5:
        indices = oh.make_tensor("idx", TensorProto.INT64, [3, 2], [0, 1, 1, 0, 1, 4])  # unsorted rows
    elif kind == 6:
        dims = [0, 5]
    m.graph.sparse_initializer.append(oh.make_sparse_tensor(values, indices, dims))
    return m


def good_sparse(rng, model):
    m = _copy(model)
    values = oh.make_tensor("sparse_ok", TensorProto.FLOAT, [3], [1.0, 2.0, 3.0])
    if rng.random() < 0.5:
        indices = oh.make_tensor("idx", TensorProto.INT64, [3], [1, 5, 9])
    else:
        indices = oh.make_tensor("idx", TensorProto.INT64, [3, 2], [0, 1, 1, 0, 1, 4])
    m.graph.sparse_initializer.append(oh.make_sparse_tensor(values, indices, [2, 5]))
    return m


def deprecated_op(rng, model):
    m = _copy(model)
    versions = {o.domain: o.version for o in m.opset_import}
    if versions.get("", 0) < 10:
        return None
    m.graph.node.append(oh.make_node("Upsample", [_defined_names(m)[0] if _defined_names(m) else "x", ""],
                                     ["upsampled_out"]))
    return m


def recursive_function(rng, model):
    m = _copy(model)
    if m.ir_version < 8:
        m.ir_version = 8
    m.opset_import.add(domain="local", version=1)
    n = rng.randrange(1, 4)  # a cycle of n functions
    for k in range(n):
        body = [oh.make_node(f"F{(k + 1) % n}", ["x"], ["y"], domain="local")]
        m.functions.append(oh.make_function("local", f"F{k}", ["x"], ["y"], body,
                                            [oh.make_opsetid("", 18), oh.make_opsetid("local", 1)]))
    return m


def duplicate_function(rng, model):
    m = _copy(model)
    if m.ir_version < 8:
        m.ir_version = 8
    f = oh.make_function("local", "Dup", ["x"], ["y"], [oh.make_node("Identity", ["x"], ["y"])],
                         [oh.make_opsetid("", 14)])
    m.functions.extend([f, f])
    return m


def bad_function_body(rng, model):
    m = _copy(model)
    if m.ir_version < 8:
        m.ir_version = 8
    kind = rng.randrange(4)
    nodes = [oh.make_node("Identity", ["x"], ["t"]), oh.make_node("Identity", ["t"], ["y"])]
    inputs, outputs = ["x"], ["y"]
    opsets = [oh.make_opsetid("", 14)]
    if kind == 0:
        nodes.reverse()  # out of order
    elif kind == 1:
        inputs = ["x", "x"]
    elif kind == 2:
        outputs = ["y", "y"]
    else:
        opsets = [oh.make_opsetid("other", 1)]  # no import of the default domain
    m.functions.append(oh.make_function("local", "Body", inputs, outputs, nodes, opsets))
    return m


def function_opset_mismatch(rng, model):
    """A function importing another ai.onnx version than the model (maybe incompatible)."""
    m = _copy(model)
    versions = {o.domain: o.version for o in m.opset_import}
    if m.ir_version < 8 or "" not in versions:
        return None
    other = rng.choice([7, 13, versions[""]])
    op = rng.choice(["Relu", "Add", "Identity", "Softmax", "ReduceSum"])
    ins = ["a", "b"] if op == "Add" else ["a"]
    f = oh.make_function("local", "OpsetF", ins, ["y"], [oh.make_node(op, ins, ["y"])],
                         [oh.make_opsetid("", other)])
    m.functions.append(f)
    return m


def subgraph_problem(rng, model):
    """An If whose branch uses an undefined name, lacks a name, or reuses an outer name."""
    m = _copy(model)
    versions = {o.domain: o.version for o in m.opset_import}
    if versions.get("", 0) < 11 or not m.graph.input:
        return None
    outer = m.graph.input[0].name
    kind = rng.randrange(4)
    src = {0: "nowhere", 1: outer, 2: outer, 3: outer}[kind]
    out = {0: "b_out", 1: "b_out", 2: outer, 3: "b_out"}[kind]
    branch = oh.make_graph([oh.make_node("Identity", [src], [out])], "" if kind == 3 else "branch", [],
                           [oh.make_tensor_value_info(out, TensorProto.FLOAT, None)])
    cond = oh.make_tensor("cond_c", TensorProto.BOOL, [], [True])
    m.graph.node.append(oh.make_node("Constant", [], ["cond_v"], value=cond))
    m.graph.node.append(oh.make_node("If", ["cond_v"], ["if_out"], then_branch=branch, else_branch=branch))
    return m


# -- edits that must keep a valid model valid --------------------------------------------

def harmless_metadata_and_names(rng, model):
    m = _copy(model)
    m.producer_name = "mutant"
    m.doc_string = "a doc string"
    m.metadata_props.add(key=f"unique_{rng.randrange(1000)}", value="v")
    for i, n in enumerate(m.graph.node):
        n.name = f"renamed_{i}"
        n.doc_string = "doc"
    return m


def harmless_value_info_and_initializer(rng, model):
    m = _copy(model)
    g = m.graph
    if g.node and g.node[0].output:
        g.value_info.append(oh.make_empty_tensor_value_info(g.node[0].output[0]))
    if m.ir_version >= 4:
        g.initializer.append(oh.make_tensor("unused_weight", TensorProto.FLOAT, [2, 2], b"\0" * 16, raw=True))
        g.initializer.append(oh.make_tensor("unused_empty", TensorProto.INT64, [0], []))
    return m


def harmless_valid_function(rng, model):
    m = _copy(model)
    if m.ir_version < 8:
        return None
    versions = {o.domain: o.version for o in m.opset_import}
    f = oh.make_function("local", "Ok", ["a"], ["b"], [oh.make_node("Identity", ["a"], ["b"])],
                         [oh.make_opsetid("", versions.get("", 14))])
    m.functions.append(f)
    return m


MUTATORS: dict[str, Callable] = {f.__name__: f for f in [
    undefined_input, duplicate_output, nodes_out_of_order, unknown_op, custom_domain_unknown_op,
    missing_opset_import, bad_ir_version, wrong_attribute_type, type_field_mismatch,
    missing_required_attribute, unknown_attribute, duplicate_attribute, attribute_without_type,
    too_many_inputs, too_many_outputs, empty_required_input, op_type_empty_or_no_io,
    duplicate_graph_input, graph_output_not_produced, graph_name_empty, value_info_incomplete,
    bad_initializer, initializer_not_input_old_ir, duplicate_metadata, bad_sparse, good_sparse,
    deprecated_op, recursive_function, duplicate_function, bad_function_body,
    function_opset_mismatch, subgraph_problem, harmless_metadata_and_names,
    harmless_value_info_and_initializer, harmless_valid_function,
]}
HARMLESS = [name for name in MUTATORS if name.startswith("harmless_")]
