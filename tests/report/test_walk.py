"""irmodel._walk: every graph, node, attribute, tensor, sparse tensor and function, with paths.

Checked against an independent recursive traversal of the reference's protobuf objects,
on the whole node corpus and on a hand-built model that has every kind of container.
"""

from __future__ import annotations

import gc

import onnx
from onnx import helper as oh

import irmodel
from irmodel import _walk as w

_KIND = {w.GRAPH: "graph", w.FUNCTION: "function", w.NODE: "node", w.ATTRIBUTE: "attribute",
         w.TENSOR: "tensor", w.SPARSE_TENSOR: "sparse_tensor"}


def reference_items(model: onnx.ModelProto) -> list:
    """``[(kind, path, name)]`` in pre-order, computed over onnx's objects by recursion."""
    out: list = []

    def graph(g, path):
        out.append(("graph", path, g.name))
        for i, t in enumerate(g.initializer):
            out.append(("tensor", f"{path}.initializer[{i}]", t.name))
        for i, t in enumerate(g.sparse_initializer):
            out.append(("sparse_tensor", f"{path}.sparse_initializer[{i}]", t.values.name))
        nodes(g, path)

    def nodes(owner, path):
        for i, n in enumerate(owner.node):
            npath = f"{path}.node[{i}]"
            out.append(("node", npath, n.name))
            for j, a in enumerate(n.attribute):
                apath = f"{npath}.attribute[{j}]"
                out.append(("attribute", apath, a.name))
                if a.HasField("t"):
                    out.append(("tensor", f"{apath}.t", a.t.name))
                for k, t in enumerate(a.tensors):
                    out.append(("tensor", f"{apath}.tensors[{k}]", t.name))
                if a.HasField("sparse_tensor"):
                    out.append(("sparse_tensor", f"{apath}.sparse_tensor", a.sparse_tensor.values.name))
                for k, t in enumerate(a.sparse_tensors):
                    out.append(("sparse_tensor", f"{apath}.sparse_tensors[{k}]", t.values.name))
                if a.HasField("g"):
                    graph(a.g, f"{apath}.g")
                for k, g in enumerate(a.graphs):
                    graph(g, f"{apath}.graphs[{k}]")

    if model.HasField("graph"):
        graph(model.graph, "graph")
    for i, ti in enumerate(model.training_info):
        for name in ("initialization", "algorithm"):
            if ti.HasField(name):
                graph(getattr(ti, name), f"training_info[{i}].{name}")
    for i, f in enumerate(model.functions):
        out.append(("function", f"functions[{i}]", f.name))
        nodes(f, f"functions[{i}]")
    return out


def our_items(model) -> list:
    out = []
    for kind, msg, where in w.walk(model):
        if kind == w.SPARSE_TENSOR:
            name = msg.values.name
        else:
            name = msg.name
        out.append((_KIND[kind], w.path(where), name))
    return out


def rich_model() -> onnx.ModelProto:
    """Every container kind: nested subgraphs, tensors and sparse tensors in attributes,
    sparse initializers, training_info and functions with subgraphs of their own."""
    t = oh.make_tensor("t", onnx.TensorProto.FLOAT, [2], [1.0, 2.0])
    sp = oh.make_sparse_tensor(oh.make_tensor("sv", onnx.TensorProto.FLOAT, [1], [3.0]),
                               oh.make_tensor("si", onnx.TensorProto.INT64, [1], [0]), [2])
    inner = oh.make_graph([oh.make_node("Identity", ["x"], ["y"], name="deep")], "inner",
                          [], [], initializer=[oh.make_tensor("w_in", onnx.TensorProto.FLOAT, [1], [0.5])])
    then = oh.make_graph([oh.make_node("If", ["c"], ["z"], name="nested_if", then_branch=inner,
                                       else_branch=inner)], "then", [], [])
    loop_body = oh.make_graph([oh.make_node("Constant", [], ["k"], name="k", value=t)], "body", [], [])
    nodes = [
        oh.make_node("If", ["c"], ["o"], name="if", then_branch=then, else_branch=inner),
        oh.make_node("Constant", [], ["s"], name="sparse", sparse_value=sp),
        oh.make_node("Custom", [], ["m"], name="many", domain="x", ts=[t, t], gs=[inner, loop_body]),
    ]
    g = oh.make_graph(nodes, "main", [], [], initializer=[t], sparse_initializer=[sp])
    fn = oh.make_function("x", "F", [], [], [oh.make_node("If", ["c"], ["o"], name="fif",
                                                         then_branch=loop_body, else_branch=inner)],
                          [oh.make_opsetid("", 18)])
    model = oh.make_model(g, functions=[fn], opset_imports=[oh.make_opsetid("", 18)])
    ti = model.training_info.add()
    ti.initialization.CopyFrom(oh.make_graph([oh.make_node("Identity", ["a"], ["b"], name="init")],
                                             "init", [], []))
    ti.algorithm.CopyFrom(loop_body)
    return model


def test_walk_visits_what_a_recursive_walk_of_the_reference_visits_in_order():
    model = rich_model()
    expected = reference_items(model)
    assert our_items(irmodel.loads(model.SerializeToString())) == expected
    kinds = {k for k, _, _ in expected}
    assert kinds == set(_KIND.values())  # the model really has every kind


def test_walk_agrees_with_the_reference_on_the_whole_node_corpus(node_corpus):
    for name, data in node_corpus:
        assert our_items(irmodel.loads(data)) == reference_items(onnx.ModelProto.FromString(data)), name


def test_path_and_top_field():
    model = irmodel.loads(rich_model().SerializeToString())
    wheres = {w.path(where): where for _, _, where in w.walk(model)}
    # attribute[1] is then_branch: onnx.helper sorts attributes by name (else_branch first).
    assert w.top_field(wheres["graph.node[0].attribute[1].g.node[0].attribute[0].g"]) == "graph"
    assert w.top_field(wheres["functions[0].node[0]"]) == "functions"
    assert w.top_field(wheres["training_info[0].initialization.node[0]"]) == "training_info"


def test_a_walk_keeps_no_node_alive():
    """Nodes of a long graph are read one at a time and dropped (weak item handles).

    A dropped node is freed by the cyclic collector (its repeated-field containers point
    back at it), so the count is taken after a collection: what survives is what the walk
    still holds."""
    g = oh.make_graph([oh.make_node("Relu", [f"v{i}"], [f"v{i + 1}"], name=f"n{i}") for i in range(500)],
                      "long", [], [])
    model = irmodel.loads(oh.make_model(g).SerializeToString())
    gc.collect()
    before = sum(isinstance(o, irmodel.NodeProto) for o in gc.get_objects())
    peak = 0
    for i, (kind, msg, _) in enumerate(w.walk(model)):
        if i % 100 == 0:
            gc.collect()
            peak = max(peak, sum(isinstance(o, irmodel.NodeProto) for o in gc.get_objects()))
    del msg
    assert peak - before <= 3
