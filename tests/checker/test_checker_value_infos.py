"""A graph's inputs and outputs read from their bytes by the checker (`graph._value_infos`)
give exactly the problems the messages give (codes, paths, messages, order), and the
reference's verdict: plain tensor values, values without a type, an element type or a
shape, unnamed ones, values with metadata, undecodable ones, in the main graph and in a
sub-graph, with many outputs (the fast path) and few."""

from __future__ import annotations

import pytest

import irmodel
from irmodel import helper
from irmodel._wireview.fastpath import use_fast_paths
from irmodel._wireview.fields import tag
from irmodel.checker import graph as checker_graph
from test_checker_diff import assert_same_verdict
from test_checker_fastpath import assert_same_problems
from wirefmt import encode_varint

FLOAT = irmodel.TensorProto.FLOAT


def _outputs(count: int, odd: dict) -> list:
    """``count`` plain outputs ``o0...``, those at the keys of ``odd`` replaced by its values."""
    outs = [helper.make_tensor_value_info(f"o{i}", FLOAT, [1, "n"]) for i in range(count)]
    for i, vi in odd.items():
        outs[i] = vi
    return outs


def _odd() -> dict:
    no_shape = helper.make_tensor_value_info("o3", FLOAT, None)
    no_elem = irmodel.ValueInfoProto(name="o5")
    no_elem.type.tensor_type.shape.dim.add(dim_value=1)
    meta = helper.make_tensor_value_info("o7", FLOAT, [1])
    meta.metadata_props.add(key="k", value="v")
    unnamed = helper.make_tensor_value_info("", FLOAT, [1])
    return {3: no_shape, 5: no_elem, 7: meta, 9: irmodel.ValueInfoProto(name="o9"), 11: unnamed,
            13: helper.make_value_info("o13", helper.make_sequence_type_proto(
                helper.make_tensor_type_proto(FLOAT, [1])))}


def _model(outputs: list, subgraph_outputs: list | None = None) -> bytes:
    names = [vi.name or "unnamed" for vi in outputs]
    nodes = [helper.make_node("Split", ["x"], names, num_outputs=len(names))]
    if subgraph_outputs is not None:
        body = helper.make_graph([helper.make_node("Identity", ["x"], [vi.name]) for vi in subgraph_outputs],
                                 "body", [], subgraph_outputs)
        nodes.append(helper.make_node("If", ["c"], [f"r{i}" for i in range(len(subgraph_outputs))],
                                      then_branch=body, else_branch=body))
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", FLOAT, [len(names)]),
                                       helper.make_tensor_value_info("c", irmodel.TensorProto.BOOL, [])], outputs)
    return irmodel.dumps(helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)]))


@pytest.mark.parametrize("count", [20, 90])
def test_odd_outputs_same_problems_both_ways_and_the_references_verdict(count, monkeypatch):
    data = _model(_outputs(count, _odd()))
    problems = assert_same_problems(data, monkeypatch, f"{count} outputs")
    codes = [p[0] for p in problems]
    assert {"V301", "V302", "V303"} <= set(codes)
    assert not assert_same_verdict(data, f"{count} outputs")


def test_plain_outputs_are_read_without_a_message(monkeypatch):
    made = []
    real = checker_graph.Walker._guarded_value_info

    def counted(self, vi, ctx, path, node):
        made.append(path)
        return real(self, vi, ctx, path, node)

    monkeypatch.setattr(checker_graph.Walker, "_guarded_value_info", counted)
    data = _model(_outputs(90, _odd()), subgraph_outputs=_outputs(70, {}))
    use_fast_paths(True)
    with pytest.raises(irmodel.ValidationError):
        irmodel.check_model(data)
    # Only the odd main-graph outputs were made: the inputs and the sub-graph's outputs are plain.
    assert sorted(p for p in made if ".output[" in p) == sorted(f"graph.output[{i}]" for i in _odd())
    assert not [p for p in made if ".input[" in p]
    assert assert_same_problems(data, monkeypatch, "with a sub-graph") is not None


def test_an_undecodable_output_is_reported_in_its_place(monkeypatch):
    good = _model(_outputs(80, {}))
    m = irmodel.loads(good)
    # Output 4's bytes replaced by a name field whose length runs past its end.
    broken = encode_varint(tag("ValueInfoProto", "name", 2)) + b"\x7f" + b"o4"
    g = m.graph
    outs = [vi.SerializeToString() for vi in g.output]
    outs[4] = broken
    out_tag = encode_varint(tag("GraphProto", "output", 2))
    tail = b"".join(out_tag + encode_varint(len(o)) + o for o in outs)
    g.ClearField("output")
    data = irmodel.dumps(m)
    graph_tag = encode_varint(tag("ModelProto", "graph", 2))
    head = data.index(graph_tag + encode_varint(len(irmodel.dumps(g))))
    graph_bytes = irmodel.dumps(g) + tail
    data = data[:head] + graph_tag + encode_varint(len(graph_bytes)) + graph_bytes + \
        data[head + len(graph_tag + encode_varint(len(irmodel.dumps(g)))) + len(irmodel.dumps(g)):]
    problems = assert_same_problems(data, monkeypatch, "undecodable output")
    assert problems is not None and any(p[0] == "B001" and p[1] == "graph.output[4]" for p in problems)
