"""Issue 14, limits enforced everywhere: ``from_dict`` stops at the nesting limit with
`ParseError` (as protobuf's ``ParseDict``); the encoder never writes a model nested
deeper than `MAX_DEPTH`, counting through sub-trees copied unchanged (whose depth it
knows from where they came from, measuring only those moved deeper); ``to_array`` of an
unknown element type raises our ValueError subclass.
"""

from __future__ import annotations

import os

import onnx
import pytest
from google.protobuf import json_format

import irmodel
from irmodel import helper as h
from wirefmt import MAX_DEPTH, ParseError
import wirefmt.encoder as encoder

import rich_mutants as hm


def _nested_type_dict(levels: int) -> dict:
    """A TypeProto dict whose deepest message is ``levels`` below the root."""
    d: dict = {}
    for i in reversed(range(levels)):
        d = {"sequenceType" if i % 2 == 0 else "elemType": d}
    return d


@pytest.mark.parametrize("levels", [98, 99, 100, 101, 1000])
def test_from_dict_refuses_nesting_exactly_where_parse_dict_does(levels):
    d = _nested_type_dict(levels)
    try:
        json_format.ParseDict(d, onnx.TypeProto())
        reference_ok = True
    except json_format.ParseError:
        reference_ok = False
    if reference_ok:
        assert irmodel.to_dict(irmodel.from_dict(d, "TypeProto"), preserving_proto_field_name=False) == d
    else:
        with pytest.raises(ParseError, match=f"more than {MAX_DEPTH} deep"):
            irmodel.from_dict(d, "TypeProto")
    assert reference_ok == (levels < MAX_DEPTH)


def test_a_thousand_deep_dict_is_a_parse_error_not_a_recursion_error():
    with pytest.raises(ParseError):
        irmodel.from_dict(_nested_type_dict(1000), "TypeProto")


# -- the encoder counts through copied sub-trees -----------------------------------------------------

def _chain(levels: int) -> irmodel.ModelProto:
    """A model whose graph's If holds a graph whose If holds ... ``levels`` times (three
    message levels each), loaded from bytes so that every part is an unchanged span."""
    g = h.make_graph([], "leaf", [], [])
    for i in range(levels):
        n = h.make_node("If", ["c"], [], then_branch=g)
        g = h.make_graph([n], f"g{i}", [], [])
    return irmodel.loads(irmodel.dumps(h.make_model(g)))


def _descend(graph, steps: int):
    for _ in range(steps):
        graph = graph.node[0].attribute[0].g
    return graph


def test_a_deep_subgraph_grafted_into_a_deep_model_is_refused_before_writing(tmp_path):
    model, donor = _chain(30), _chain(30)   # 91 levels each
    target = _descend(model.graph, 25)      # at depth 76
    target.node[0].attribute[0].g = donor.graph  # read at depth 1, ~90 levels tall
    with pytest.raises(irmodel.EncodeError, match=f"deeper than {MAX_DEPTH}"):
        irmodel.dumps(model)
    path = str(tmp_path / "out.onnx")
    with pytest.raises(irmodel.EncodeError):
        irmodel.save(model, path)
    assert not os.path.exists(path)


def test_the_same_graft_written_where_it_fits_is_readable_by_everyone():
    model, donor = _chain(30), _chain(30)
    _descend(model.graph, 3).node[0].attribute[0].g = _descend(donor.graph, 5)
    data = irmodel.dumps(model)
    onnx.ModelProto.FromString(data)
    assert irmodel.to_dict(irmodel.loads(data)) == json_format.MessageToDict(
        onnx.ModelProto.FromString(data), preserving_proto_field_name=True)


def test_a_subtree_from_a_deep_place_moved_up_is_not_measured(monkeypatch):
    """Its bytes nest at most MAX_DEPTH minus the depth they were read at: known without
    reading them (`_check_span_depth` is not even called)."""
    model, donor = _chain(30), _chain(30)
    deep = _descend(donor.graph, 20)
    calls = []
    monkeypatch.setattr(encoder, "_check_span_depth", lambda *a: calls.append(a))
    _descend(model.graph, 2).node[0].attribute[0].g = deep
    irmodel.dumps(model)
    assert calls == []


def test_copy_from_into_a_deep_message_is_refused():
    model, donor = _chain(30), _chain(30)
    _descend(model.graph, 25).node[0].attribute[0].g.CopyFrom(donor.graph)
    with pytest.raises(irmodel.EncodeError):
        irmodel.dumps(model)


def test_a_node_moved_into_a_subgraph_is_written_when_it_fits():
    model, donor = _chain(5), _chain(5)
    inner = _descend(model.graph, 3)
    inner.node.append(donor.graph.node[0])  # the other chain's top node, nine levels deeper
    data = irmodel.dumps(model)
    assert onnx.ModelProto.FromString(data).ByteSize() == len(data)


def test_unknown_groups_moved_deeper_are_counted_too():
    # a NodeProto with an unknown field nested in 60 groups, read at depth 2
    groups = b""
    for _ in range(60):
        groups = hm._tag(999, 3) + groups + hm._tag(999, 4)
    node = hm._ld(4, b"Relu") + groups
    src = irmodel.loads(hm._tag(1, 0) + b"\x08" + hm._ld(7, hm._ld(1, node)))
    model = _chain(20)  # 61 levels
    target = _descend(model.graph, 19)
    target.node.append(src.graph.node[0])
    target.node[-1].name = "changed"  # re-encoded: its unknown fields are copied as they are
    with pytest.raises(irmodel.EncodeError, match="group"):
        irmodel.dumps(model)


def test_an_unchanged_model_at_the_limit_is_written_byte_for_byte():
    data = hm.depth_bomb(33)  # 100 levels: what protobuf still reads
    model = irmodel.loads(data)
    assert irmodel.dumps(model) == data
    model.producer_name = "edited"  # re-encoded at the top, every span copied in place
    onnx.ModelProto.FromString(irmodel.dumps(model))


def test_a_hand_built_tree_deeper_than_the_limit_refuses_to_encode():
    t = irmodel.TypeProto()
    inner = t
    for _ in range(60):
        inner = inner.sequence_type.elem_type
    inner.tensor_type.elem_type = 1
    with pytest.raises(irmodel.EncodeError):
        irmodel.dumps(t)


# -- to_array of an unknown element type ----------------------------------------------------------

@pytest.mark.parametrize("code", [0, 29, 99, -1])
def test_to_array_of_an_unknown_data_type_is_a_validation_error(code):
    t = irmodel.TensorProto(name="t", dims=[1], data_type=code, raw_data=b"\0" * 4)
    with pytest.raises(irmodel.ValidationError, match="element type") as info:
        irmodel.to_array(t)
    assert isinstance(info.value, ValueError) and not isinstance(info.value, TypeError)
