"""The attribute memo of the generated scan (the ``memo`` scan hint in `irmodel.messages.SCAN_HINTS`): an item whose
bytes equal an item scanned before copies that scan's values instead of scanning.

Held to the generic scan (which has no memo) and to the reference: same values, same
spans and paths, independent instances, the same errors for malformed bytes.
"""

from __future__ import annotations

import onnx
import pytest
from onnx import helper

import irmodel
from wirefmt import DecodeError, use_generated_scanners
from wirefmt.containers import RepeatedScalars


@pytest.fixture(autouse=True)
def _empty_memo():
    """Each test starts with an empty memo (another may have filled it to its bound)."""
    use_generated_scanners(True)
    list(irmodel.NodeProto.FromString(b"\x2a\x00").attribute)  # the scanner is generated now
    _memo().clear()
    yield
    if _memo() is not None:  # None: the test left the first-call stub in place
        _memo().clear()


def _model_bytes(n_nodes: int = 80) -> bytes:
    nodes = []
    for i in range(n_nodes):
        nodes.append(helper.make_node(
            "Softmax", [f"t{i}"], [f"t{i + 1}"], name=f"n{i}",
            axis=-1 if i % 2 else 3,  # two attribute byte strings, each repeated
            **({"alpha": 0.5} if i % 3 == 0 else {}),
            **({"kernel_shape": [3, 3], "mode": "same"} if i % 5 == 0 else {}),
            **({"perm": [1, 0], "scales": [0.5, 2.0]} if i % 7 == 0 else {})))
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("t0", onnx.TensorProto.FLOAT, [1])],
                              [helper.make_tensor_value_info(f"t{n_nodes}", onnx.TensorProto.FLOAT, [1])])
    return helper.make_model(graph).SerializeToString()


def _memo():
    mc = irmodel.AttributeProto._make_child
    return mc.__globals__.get("MEMO")


def _attrs(data: bytes) -> list:
    m = irmodel.ModelProto.FromString(data)
    return [(n, list(n.attribute)) for n in m.graph.node]


def _fields(a) -> dict:
    d = {f.name: v for f, v in a.ListFields()}
    return {k: (list(v) if isinstance(v, list) else bytes(v) if isinstance(v, memoryview) else v) for k, v in d.items()}


def test_memo_copies_give_what_the_generic_scan_gives():
    data = _model_bytes()
    use_generated_scanners(True)
    got = _attrs(data)
    assert _memo() is not None and len(_memo()) >= 2  # the scan used the memo
    use_generated_scanners(False)
    try:
        want = _attrs(data)
    finally:
        use_generated_scanners(True)
    ref = onnx.load_from_string(data)
    assert len(got) == len(want) == len(ref.graph.node)
    for (node, attrs), (_, wattrs), rnode in zip(got, want, ref.graph.node):
        assert [_fields(a) for a in attrs] == [_fields(a) for a in wattrs]
        assert [a.SerializeToString() for a in attrs] == [a.SerializeToString() for a in rnode.attribute]
        for a, w in zip(attrs, wattrs):
            assert (a._start, a._end, a._depth, a._path()) == (w._start, w._end, w._depth, w._path())
            assert a._parent is node
            for name in ("ints", "floats", "strings"):  # containers are the instance's own
                assert type(getattr(a, name)) is RepeatedScalars and getattr(a, name)._owner is a


def test_memo_copies_are_independent_and_save_byte_identical():
    data = _model_bytes()
    m = irmodel.ModelProto.FromString(data)
    a0 = m.graph.node[1].attribute[0]
    a1 = m.graph.node[7].attribute[0]
    assert a0.SerializeToString() == a1.SerializeToString() and a0 is not a1
    assert irmodel.ModelProto.FromString(data).SerializeToString() == data
    a1.i = 7
    a0.ints.append(1)
    assert (a0.i, list(a1.ints), m.graph.node[5].attribute[0].i, list(m.graph.node[5].attribute[0].ints)) == (-1, [], -1, [])
    ref = onnx.load_from_string(data)
    ref.graph.node[7].attribute[0].i = 7
    ref.graph.node[1].attribute[0].ints.append(1)
    assert m.SerializeToString() == ref.SerializeToString()


@pytest.mark.parametrize("cut", [1, 2, 4, 6])
def test_malformed_bytes_like_a_memoised_item_raise_the_generic_error(cut):
    good = helper.make_attribute("axis", -1).SerializeToString()
    bad = good[:-cut]
    errors = []
    for generated in (True, False):
        use_generated_scanners(generated)
        try:
            node = helper.make_node("Softmax", ["x"], ["y"], axis=-1)
            raw = node.SerializeToString() + b"\x2a" + bytes([len(bad)]) + bad
            for _ in range(2):  # the good attribute is in the memo after the first round
                n = irmodel.NodeProto.FromString(raw)
                with pytest.raises(DecodeError) as info:
                    list(n.attribute)
                errors.append((info.value.reason, info.value.offset, info.value.path))
        finally:
            use_generated_scanners(True)
    assert len(set(errors)) == 1, errors


def test_memo_is_bounded():
    from wirefmt import scangen

    use_generated_scanners(True)
    for i in range(0, scangen.MEMO_ENTRIES + 50, 50):
        data = b"".join(b"\x2a" + bytes([len(a)]) + a for a in
                        (helper.make_attribute("k", i + j).SerializeToString() for j in range(50)))
        list(irmodel.NodeProto.FromString(data).attribute)
    assert len(_memo()) <= scangen.MEMO_ENTRIES



def test_lists_are_not_kept_and_each_copy_has_its_own():
    data = _model_bytes()
    m = irmodel.ModelProto.FromString(data)
    perms = [a for n in m.graph.node for a in n.attribute if a.name == "perm"]
    assert len(perms) > 3
    assert not any("ints" in v for v in _memo().values())
    perms[1].ints.append(5)
    assert [list(a.ints) for a in perms] == [[1, 0], [1, 0, 5]] + [[1, 0]] * (len(perms) - 2)
    assert perms[1]._start == -1 and perms[2]._start >= 0


def test_bytes_whose_scan_left_containers_are_marked_and_always_scanned():
    """An item whose scan left a list or bytes is marked `NOT_KEPT` (its next copies skip
    the offer to the memo): every copy is still a full scan, equal to the reference's."""
    from wirefmt.scan import NOT_KEPT

    data = _model_bytes()
    m = irmodel.ModelProto.FromString(data)
    ref = onnx.load_from_string(data)
    kept = {}
    for node, rnode in zip(m.graph.node, ref.graph.node):
        for a, r in zip(node.attribute, rnode.attribute):
            kept[a.name] = _memo().get(a.SerializeToString())
            assert _fields(a) == {f.name: (v if isinstance(v, (str, bytes, int, float)) else list(v)) for f, v in r.ListFields()}
            if a.name in ("kernel_shape", "perm", "mode"):
                assert a._start >= 0 and a.ints._owner is a
    assert kept["perm"] is NOT_KEPT and kept["kernel_shape"] is NOT_KEPT and kept["mode"] is NOT_KEPT
    assert kept["axis"] is not NOT_KEPT and kept["axis"] is not None
    perms = [a for n in m.graph.node for a in n.attribute if a.name == "perm"]
    assert len(perms) > 3 and len({id(a.ints) for a in perms}) == len(perms)
    assert m.SerializeToString() == data
