"""A node's attributes, made with the node (`wirefmt.containers.MessageList`).

The generated scan makes a node's attributes as it reads the node and keeps them in a
``list`` subclass; the generic scan keeps them lazily in a `RepeatedMessages`.  Both
must behave as one container: every mutator gives the bytes the reference gives for the
same change, every read gives the reference's messages, and bad or unusual bytes (a
malformed attribute, a tag written in two bytes) are read as the lazy sequence would
read them.  Each module test runs on both scan paths (``scan_path``).
"""

from __future__ import annotations

import onnx
import pytest
from google.protobuf.message import DecodeError
from hypothesis import HealthCheck, given, settings, strategies as st
from onnx import helper as oh

import irmodel
from irmodel import NodeProto, helper
from wirefmt import items_in_buffer
from wirefmt.containers import MessageList, RepeatedMessages


def _model(nodes: int = 3) -> onnx.ModelProto:
    node_list = [oh.make_node("Relu", [f"t{i}"], [f"t{i + 1}"], name=f"n{i}", alpha=float(i),
                              axes=[i, i + 1], mode=f"m{i}") for i in range(nodes)]
    graph = oh.make_graph(node_list, "g", [oh.make_tensor_value_info("t0", onnx.TensorProto.FLOAT, [1])],
                          [oh.make_tensor_value_info(f"t{nodes}", onnx.TensorProto.FLOAT, [1])])
    return oh.make_model(graph)


def _ours_and_reference(data: bytes):
    return irmodel.loads(data), onnx.load_model_from_string(data)


def _new(lib, name: str, value):
    return lib.make_attribute(name, value)


#: (label, change on our container, the same change on a list of the reference's messages).
#: The reference's container refuses some of these (item assignment, slices), so the expected
#: attributes are computed on a plain list of its messages and written back whole.
_CHANGES = [
    ("append", lambda s, mk: s.append(mk("x", 1)), lambda lst, mk: lst.append(mk("x", 1))),
    ("extend", lambda s, mk: s.extend([mk("x", 1), mk("y", 2.5)]), lambda lst, mk: lst.extend([mk("x", 1), mk("y", 2.5)])),
    ("+=", lambda s, mk: s.__iadd__([mk("x", [3, 4])]), lambda lst, mk: lst.append(mk("x", [3, 4]))),
    ("insert", lambda s, mk: s.insert(0, mk("x", "s")), lambda lst, mk: lst.insert(0, mk("x", "s"))),
    ("setitem", lambda s, mk: s.__setitem__(1, mk("x", 7)), lambda lst, mk: lst.__setitem__(1, mk("x", 7))),
    ("set slice", lambda s, mk: s.__setitem__(slice(0, 2), [mk("x", 1), mk("y", 2), mk("z", 3)]),
     lambda lst, mk: lst.__setitem__(slice(0, 2), [mk("x", 1), mk("y", 2), mk("z", 3)])),
    ("delitem", lambda s, mk: s.__delitem__(0), lambda lst, mk: lst.__delitem__(0)),
    ("del slice", lambda s, mk: s.__delitem__(slice(1, None)), lambda lst, mk: lst.__delitem__(slice(1, None))),
    ("pop", lambda s, mk: s.pop(), lambda lst, mk: lst.pop()),
    ("pop 0", lambda s, mk: s.pop(0), lambda lst, mk: lst.pop(0)),
    ("remove", lambda s, mk: s.remove(s[1]), lambda lst, mk: lst.remove(lst[1])),
    ("clear", lambda s, mk: s.clear(), lambda lst, mk: lst.clear()),
    ("sort", lambda s, mk: s.sort(key=lambda a: a.name), lambda lst, mk: lst.sort(key=lambda a: a.name)),
    ("sort reverse", lambda s, mk: s.sort(key=lambda a: a.name, reverse=True),
     lambda lst, mk: lst.sort(key=lambda a: a.name, reverse=True)),
    ("reverse", lambda s, mk: s.reverse(), lambda lst, mk: lst.reverse()),
    ("add", lambda s, mk: s.add(name="x", type=irmodel.AttributeProto.INT, i=5),
     lambda lst, mk: lst.append(mk("x", 5))),
    ("edit an item", lambda s, mk: setattr(s[2], "s", b"changed"), lambda lst, mk: setattr(lst[2], "s", b"changed")),
]


@pytest.mark.parametrize("label, ours, theirs", _CHANGES, ids=[c[0] for c in _CHANGES])
def test_a_change_to_the_attributes_gives_the_reference_bytes(scan_path, label, ours, theirs):
    data = _model().SerializeToString()
    m, ref = _ours_and_reference(data)
    seq = m.graph.node[1].attribute
    assert type(seq) is (MessageList if scan_path == "generated scan" else RepeatedMessages)
    ours(seq, lambda name, value: _new(helper, name, value))
    ref_node = ref.graph.node[1]
    expected = list(ref_node.attribute)
    theirs(expected, lambda name, value: _new(oh, name, value))
    expected = [a.SerializeToString() for a in expected]  # before the container below is cleared
    del ref_node.attribute[:]
    for a in expected:
        ref_node.attribute.add().ParseFromString(a)
    assert irmodel.dumps(m) == ref.SerializeToString()


def test_repeating_the_attributes_in_place_is_refused_and_changes_nothing(scan_path):
    data = _model().SerializeToString()
    m = irmodel.loads(data)
    seq = m.graph.node[1].attribute
    with pytest.raises(TypeError):
        seq *= 2
    assert len(m.graph.node[1].attribute) == 3
    assert irmodel.dumps(m) == data


def test_reads_give_the_reference_messages_and_one_object_per_item(scan_path):
    m, ref = _ours_and_reference(_model(5).SerializeToString())
    for node, ref_node in zip(m.graph.node, ref.graph.node):
        attrs = node.attribute
        assert [a.SerializeToString() for a in attrs] == [a.SerializeToString() for a in ref_node.attribute]
        assert all(attrs[i] is a for i, a in enumerate(attrs))
        assert [a.name for a in attrs[1:]] == [a.name for a in ref_node.attribute[1:]]
        assert attrs[-1] is list(attrs)[-1]
        assert attrs == list(attrs) and attrs == tuple(attrs) and not attrs != list(attrs)
        assert repr(attrs) == "<3 x AttributeProto>"
        assert all(a._parent is node for a in attrs)


def test_an_attributes_error_path_names_its_index(scan_path):
    m = irmodel.loads(_model().SerializeToString())
    a = m.graph.node[2].attribute[1]
    assert a._path() == "ModelProto.graph.node[2].attribute[1]"


def test_item_spans_of_a_node_are_its_attributes_bytes(scan_path):
    ref = _model()
    m = irmodel.loads(ref.SerializeToString())
    node = m.graph.node[0]
    buf, spans = items_in_buffer(node, "attribute")
    got = [bytes(buf[spans[i]:spans[i + 1]]) for i in range(0, len(spans), 2)]
    assert got == [a.SerializeToString() for a in ref.graph.node[0].attribute]
    node.attribute[0].f = 9.0
    assert items_in_buffer(node, "attribute") is None  # the node is not its bytes any more


def test_a_copied_node_owns_its_attributes(scan_path):
    data = _model().SerializeToString()
    m, ref = _ours_and_reference(data)
    copy = NodeProto()
    copy.CopyFrom(m.graph.node[1])
    assert all(a._parent is copy for a in copy.attribute)
    copy.attribute[0].f = 42.0
    ref_copy = onnx.NodeProto()
    ref_copy.CopyFrom(ref.graph.node[1])
    ref_copy.attribute[0].f = 42.0
    assert copy.SerializeToString() == ref_copy.SerializeToString()
    assert irmodel.dumps(m) == data  # the source is untouched


def _node_with_wide_tag(which: int) -> tuple[bytes, onnx.NodeProto]:
    """A node whose attribute ``which`` is written behind the two-byte form of its tag
    (0xAA 0x00: field 5, length-delimited), which protobuf reads as the usual one."""
    ref = _model(1).graph.node[0]
    parts = []
    for f, value in ((1, ref.input[0]), (2, ref.output[0]), (3, ref.name), (4, ref.op_type)):
        raw = value.encode()
        parts.append(bytes([f << 3 | 2, len(raw)]) + raw)
    for i, a in enumerate(ref.attribute):
        raw = a.SerializeToString()
        parts.append((b"\xaa\x00" if i == which else b"\x2a") + bytes([len(raw)]) + raw)
    data = b"".join(parts)
    parsed = onnx.NodeProto()
    parsed.ParseFromString(data)
    return data, parsed


@pytest.mark.parametrize("which", [0, 1, 2])
def test_an_attribute_behind_a_two_byte_tag_is_read_as_the_reference_reads_it(scan_path, which):
    data, parsed = _node_with_wide_tag(which)
    node = NodeProto.FromString(data)
    assert [a.SerializeToString() for a in node.attribute] == [a.SerializeToString() for a in parsed.attribute]
    assert node.SerializeToString() == data  # unchanged: its own bytes
    node.attribute[which].name = "renamed"
    parsed.attribute[which].name = "renamed"
    assert node.SerializeToString() == parsed.SerializeToString()


def _with_broken_attribute(which: int) -> bytes:
    """The model of three nodes with attribute ``which`` of node 1 malformed: its last byte,
    the value of its ``type`` (protobuf writes that field last), becomes a varint that runs
    past the attribute's end."""
    data = bytearray(_model().SerializeToString())
    m = irmodel.loads(bytes(data))
    a = m.graph.node[1].attribute[which]
    end = a._end
    del m, a
    data[end - 1] = 0x80
    return bytes(data)


@pytest.mark.parametrize("which", [0, 1, 2])
def test_a_malformed_attribute_leaves_its_node_readable_and_raises_when_reached(scan_path, which):
    data = _with_broken_attribute(which)
    with pytest.raises(DecodeError):
        onnx.load_model_from_string(data)  # the reference refuses the whole model
    m = irmodel.loads(data)
    node = m.graph.node[1]
    assert node.op_type == "Relu" and node.name == "n1"
    attrs = node.attribute
    assert len(attrs) == 3
    for i in range(3):
        if i != which:
            assert attrs[i].name == ("alpha", "axes", "mode")[i]
    with pytest.raises(irmodel.DecodeError) as info:
        list(attrs)
    assert info.value.path == f"ModelProto.graph.node[1].attribute[{which}]"
    with pytest.raises(irmodel.DecodeError):
        attrs[which]


# -- random sequences of changes ----------------------------------------------------------

_OPS = st.lists(st.tuples(
    st.sampled_from(["append", "insert", "del", "pop", "set", "edit", "sort", "reverse", "extend", "clear",
                     "del slice"]),
    st.integers(0, 7), st.integers(-3, 1_000)), max_size=12)


def _apply(seq, lib, op: str, i: int, v: int) -> None:
    """One change to ``seq`` (ours, or a list of the reference's messages), built by ``lib``."""
    n = len(seq)
    if op == "append":
        seq.append(lib.make_attribute(f"a{v}", v))
    elif op == "insert":
        seq.insert(i, lib.make_attribute(f"i{v}", float(v)))
    elif op == "extend":
        seq.extend([lib.make_attribute(f"e{v}", [v, i]), lib.make_attribute(f"f{v}", f"s{v}")])
    elif op == "clear":
        seq.clear()
    elif not n:
        return
    elif op == "del":
        del seq[i % n]
    elif op == "del slice":
        del seq[i % n:]
    elif op == "pop":
        seq.pop(i % n)
    elif op == "set":
        seq[i % n] = lib.make_attribute(f"s{v}", v)
    elif op == "edit":
        seq[i % n].name = f"edited{v}"
    elif op == "sort":
        seq.sort(key=lambda a: a.name, reverse=bool(v % 2))
    elif op == "reverse":
        seq.reverse()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=_OPS)
def test_any_sequence_of_changes_gives_the_reference_bytes(scan_path, ops):
    data = _model().SerializeToString()
    m, ref = _ours_and_reference(data)
    seq = m.graph.node[1].attribute
    expected = list(ref.graph.node[1].attribute)
    for op, i, v in ops:
        _apply(seq, helper, op, i, v)
        _apply(expected, oh, op, i, v)
        assert [a.SerializeToString() for a in seq] == [a.SerializeToString() for a in expected]
    wanted = [a.SerializeToString() for a in expected]
    del ref.graph.node[1].attribute[:]
    for a in wanted:
        ref.graph.node[1].attribute.add().ParseFromString(a)
    assert irmodel.dumps(m) == ref.SerializeToString()
    assert irmodel.dumps(irmodel.loads(irmodel.dumps(m))) == ref.SerializeToString()  # and reads back


# -- large nodes: their attributes stay lazy ------------------------------------------------

def _node_bytes(attributes: list) -> bytes:
    node = oh.make_node("Custom", ["x"], ["y"], name="big")
    return node.SerializeToString() + b"".join(b"\x2a" + bytes([len(a)]) + a for a in attributes)


def test_a_node_over_the_eager_bound_reads_its_attributes_lazily_and_the_same(scan_path):
    from irmodel.messages import SCAN_HINTS

    bound = SCAN_HINTS["NodeProto"]["eager_span"]
    attrs = [oh.make_attribute(f"a{i}", i).SerializeToString() for i in range(bound // 8)]
    data = _node_bytes(attrs)
    assert len(data) > bound
    node = NodeProto.FromString(data)
    assert type(node.attribute) is RepeatedMessages
    parsed = onnx.NodeProto.FromString(data)
    assert [a.SerializeToString() for a in node.attribute] == [a.SerializeToString() for a in parsed.attribute]
    node.attribute[3].i = -1
    parsed.attribute[3].i = -1
    assert node.SerializeToString() == parsed.SerializeToString()


@pytest.mark.slow
def test_a_forged_node_of_many_empty_attributes_is_not_made_at_once():
    # 200,000 empty attributes (2 bytes each): made at once they would hold ~200 MB of
    # objects for 400 KB of input; read lazily, a walk over them holds a few MB.
    import tracemalloc

    data = _node_bytes([b""] * 200_000)
    tracemalloc.start()
    try:
        node = NodeProto.FromString(data)
        count = sum(1 for a in node.attribute if a.name == "")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert count == 200_000
    assert peak < 40 * 2**20, peak
