"""The run loop of the generated scan (`wirefmt.scan._span_run`, the ``runs`` scan hint): a graph's
``node``, ``initializer`` and ``value_info`` fields are read a whole run at a time.

Every input is decoded with the generated scanners and with the generic loop (the
reference behaviour); the two must agree exactly: the items and their spans, or the same
DecodeError (message, offset, path).  Valid inputs are compared with protobuf's as well.
"""

from __future__ import annotations

import onnx
import pytest

import irmodel
from wirefmt import DecodeError, use_generated_scanners
from wirefmt.varint import encode_varint


def _f(tag: int, payload: bytes) -> bytes:
    return bytes([tag]) + encode_varint(len(payload)) + payload


def _node(name: str) -> bytes:
    """A NodeProto field of a graph (field 1) whose node has this name."""
    return _f(0x0A, _f(0x1A, name.encode()))


def _model(graph: bytes, after: bytes = b"") -> bytes:
    """A ModelProto whose graph (field 7) is ``graph``, followed by ``after`` (its own fields)."""
    return b"\x08\x08" + _f(0x3A, graph) + after


_PRODUCER = _f(0x12, b"after the graph")  # ModelProto.producer_name: bytes behind the graph
_INIT = _f(0x2A, _f(0x42, b"w"))  # GraphProto.initializer, a TensorProto named "w"
_VINFO = _f(0x6A, _f(0x0A, b"v"))  # GraphProto.value_info, named "v"
_UNKNOWN = b"\xf8\x07\x01"  # field 127, varint 1: an unknown field, always the generic path
# Item lengths of one, two and three bytes (the node's length is its name's plus 3 or 4).
_SHORT, _TWO, _THREE = "a" * 20, "b" * 200, "c" * 20000

VALID = {
    "one node": _node("x"),
    "a run ending at the message end": b"".join(_node(f"n{i}") for i in range(70)),
    "lengths of one, two and three bytes": _node(_SHORT) + _node(_TWO) + _node(_THREE) + _node(_SHORT),
    "two-byte lengths only": _node(_TWO) + _node(_TWO + "x"),
    "a run interrupted by the name, then resumed": _node("a") + _node("b") + _f(0x12, b"g") + _node("c"),
    "interrupted by an unknown field": _node("a") + _UNKNOWN + _node("b") + _node("c"),
    "initializers and value_info in runs": _node("a") + _INIT + _INIT + _VINFO + _VINFO + _node("b"),
    "a run that is not first": _f(0x12, b"g") + _node("a") + _node("b"),
    "an empty node": _f(0x0A, b"") + _node("a"),
}


def _read(data: bytes, root: bool = False):
    """What a reader sees of the graph (in a model, or the root message itself): every
    node's name and span, or the DecodeError."""
    try:
        g = irmodel.GraphProto.FromString(data) if root else irmodel.loads(data).graph
        return ([(n.name, n._start, n._end) for n in g.node],
                [t.name for t in g.initializer], [v.name for v in g.value_info], g.name)
    except DecodeError as exc:
        return ("error", str(exc), exc.offset, exc.path)


def _both(data: bytes, root: bool = False):
    got = []
    for generated in (True, False):
        use_generated_scanners(generated)
        try:
            got.append(_read(data, root))
        finally:
            use_generated_scanners(True)
    assert got[0] == got[1]
    return got[0]


@pytest.mark.parametrize("graph", VALID.values(), ids=VALID.keys())
@pytest.mark.parametrize("after", [b"", _PRODUCER], ids=["graph last", "bytes after the graph"])
def test_runs_read_what_the_generic_scan_and_protobuf_read(graph, after):
    data = _model(graph, after)
    nodes, inits, vinfos, name = _both(data)
    ref = onnx.ModelProto.FromString(data).graph
    assert [n for n, _, _ in nodes] == [n.name for n in ref.node]
    assert inits == [t.name for t in ref.initializer] and vinfos == [v.name for v in ref.value_info]
    assert name == ref.name
    # each span is exactly the node's bytes
    for (_, a, b), ref_node in zip(nodes, ref.node):
        assert data[a:b] == ref_node.SerializeToString()


def _bad_graphs():
    ok = _node("a") + _node(_TWO)
    return {
        # the last node's one-byte length runs past the graph's end (into the bytes after it)
        "one-byte length past the end": ok + b"\x0a\x05\x1a\x01",
        # a two-byte length whose value runs past the end
        "two-byte length past the end": ok + b"\x0a\xc8\x01" + b"\x1a\x01a",
        # a two-byte length whose second byte is the graph's last: the length is cut short
        "length cut by the end": ok + b"\x0a\x80",
        "length of the last byte": ok + b"\x0a",
        # a three-byte length whose value runs past the end
        "three-byte length past the end": ok + b"\x0a\x80\x80\x01" + b"\x1a\x01a",
        # a varint length longer than ten bytes
        "overlong length": ok + b"\x0a" + b"\xff" * 11 + b"\x01",
    }


@pytest.mark.parametrize("graph", _bad_graphs().values(), ids=_bad_graphs().keys())
@pytest.mark.parametrize("after", [b"", _PRODUCER], ids=["graph last", "bytes after the graph"])
def test_broken_runs_raise_the_generic_scans_error(graph, after):
    data = _model(graph, after)
    got = _both(data)
    assert got[0] == "error" and got[3] is not None
    with pytest.raises(Exception):  # protobuf refuses it too  # noqa: B017,PT011 - its own error type
        onnx.ModelProto.FromString(data)


@pytest.mark.parametrize("cut", [1, 2, 3, 4, 5, 100, 205, 207, 208])
def test_a_run_cut_anywhere_raises_the_generic_scans_error(cut):
    # The graph is the root message and its buffer ends inside the run (in the second
    # node's tag, length or body, or the third's): reads past the end of the buffer.
    graph = _node("a") + _node(_TWO) + _node("c")
    n = len(_node("a")) + cut
    assert n < len(graph)
    assert _both(graph[:n], root=True)[0] == "error"


def test_a_graph_as_root_reads_its_runs():
    graph = VALID["lengths of one, two and three bytes"] + VALID["a run interrupted by the name, then resumed"]
    nodes = _both(graph, root=True)[0]
    ref = onnx.GraphProto.FromString(graph)
    assert [n for n, _, _ in nodes] == [n.name for n in ref.node]
