"""What the coverage-guided campaign (fuzz/campaign_atheris.py) found in irmodel, one test
each, and the boundary each finding was about, checked against the reference.

fuzz_ref_diff, 2026-11-26: wirefmt refused nested groups one level sooner than protobuf
(campaign reproducer fuzz/findings/atheris-ref-diff-nesting-100.bin: 100 unknown groups
inside a graph output).  protobuf (upb here; C++ the same) counts one level per message
and per group, known or unknown, the root being level 0, and reads level 100 at most:
the levels of messages and groups add up along a path.  wirefmt counted a group's level
twice (`reader.skip_group` was passed the group's level and counted the group again).
The tests below hold every wirefmt reader to protobuf on both sides of the boundary:
99, 100 and 101 levels of messages, of groups, and of the two mixed.
"""

from __future__ import annotations

import os

import pytest

import irmodel
import wirefmt
from irmodel.fuzz.spans import SpanTree
from wirefmt import MAX_DEPTH, encode_varint
from wirefmt.raw import walk
from wirefmt.scan import use_generated_scanners

from repo_paths import REPO as ROOT  # noqa: E402

onnx = pytest.importorskip("onnx")


def _ld(number: int, payload: bytes) -> bytes:
    return encode_varint(number << 3 | 2) + encode_varint(len(payload)) + payload


def _groups(n: int, number: int = 2, inner: bytes = b"") -> bytes:
    """``n`` nested groups (field ``number``: unknown to every ONNX type) around ``inner``."""
    start, end = encode_varint(number << 3 | 3), encode_varint(number << 3 | 4)
    return start * n + inner + end * n


#: Message fields from a ModelProto down, one level each: graph, graph.input,
#: value_info.type, then TypeProto.sequence_type / Sequence.elem_type alternately.
def _message_path(levels: int) -> list[int]:
    return ([7, 11, 2] + [4, 1] * MAX_DEPTH)[:levels]


def _model(messages: int, inner: bytes = b"") -> bytes:
    """A ModelProto whose deepest message is ``messages`` levels below the root, holding ``inner``."""
    data = inner
    for number in reversed(_message_path(messages)):
        data = _ld(number, data)
    return data


def _upb_accepts(data: bytes) -> bool:
    try:
        onnx.ModelProto.FromString(data)
    except Exception:  # noqa: BLE001 - upb's DecodeError; anything else fails the comparison below
        return False
    return True


def _ours_accepts(data: bytes) -> bool:
    try:
        decoded = irmodel.to_dict(irmodel.loads(data))
    except irmodel.DecodeError:
        return False
    assert decoded == irmodel.to_dict(irmodel.loads(irmodel.dumps(irmodel.loads(data))))
    assert irmodel.dumps(irmodel.loads(data)) == data  # unchanged: written back byte for byte
    return True


# (messages, groups inside the deepest message): totals of 99, 100 and 101 levels
CASES = [(m, total - m) for total in (99, 100, 101) for m in (0, 1, 2, 3, 4, 50, total - 1, total)]


@pytest.mark.parametrize("generated", [True, False], ids=["generated", "generic"])
@pytest.mark.parametrize(("messages", "groups"), CASES)
def test_nesting_is_accepted_exactly_where_protobuf_accepts_it(messages, groups, generated):
    data = _model(messages, _groups(groups))
    expected = messages + groups <= MAX_DEPTH
    assert _upb_accepts(data) == expected  # the reference's boundary, as documented above
    use_generated_scanners(generated)
    try:
        assert _ours_accepts(data) == expected
    finally:
        use_generated_scanners(True)


@pytest.mark.parametrize("levels", [99, 100, 101])
def test_groups_at_every_message_level_count_by_path_not_in_sum(levels):
    """Groups beside the chain of messages, 10 deep at each level: only the deepest path counts."""
    data = b""
    path = _message_path(levels - 10)
    for depth in reversed(range(len(path) + 1)):
        data = (_ld(path[depth], data) if depth < len(path) else b"") + _groups(10)
    assert _upb_accepts(data) == (levels <= MAX_DEPTH) == _ours_accepts(data)


@pytest.mark.parametrize("groups", [99, 100, 101, 5000])
def test_raw_views_read_groups_as_the_decoder_does(groups):
    """`wirefmt.raw.walk` (``irmodel raw``) and the wire mutator's span tree read the same levels."""
    data = _groups(groups)
    if groups <= MAX_DEPTH:
        items = list(walk(data))
        assert sum(i.kind == "group" for i in items) == groups
        tree = SpanTree(data, None, None)
        assert tree.root.tail == len(data)  # every byte parsed
    else:
        with pytest.raises(wirefmt.DecodeError, match=f"nesting deeper than {MAX_DEPTH}"):
            list(walk(data))
        assert SpanTree(data, None, None).root.tail == 0  # refused as a whole, as the decoder does


def test_an_unknown_length_delimited_field_is_not_a_level():
    """protobuf does not parse an unknown payload, so nesting inside it is not counted."""
    data = _model(MAX_DEPTH, _ld(99, _groups(MAX_DEPTH)))
    assert _upb_accepts(data) and _ours_accepts(data)


@pytest.mark.parametrize("groups", [94, 95, 96])
def test_the_encoder_writes_moved_groups_exactly_where_protobuf_reads_them(groups):
    """A node read at level 2 with unknown groups below it, moved to level 5 (into the
    graph of graph.node[0].attribute[0].g) and changed, so it is re-encoded with its
    unknown fields copied: written only if 5 + groups levels fit, as protobuf reads them."""
    source = irmodel.loads(_ld(7, _ld(1, _ld(4, b"Relu") + _groups(groups))))
    model = irmodel.loads(_ld(7, _ld(1, _ld(5, _ld(6, b"")))))
    subgraph = model.graph.node[0].attribute[0].g  # level 4
    subgraph.node.append(source.graph.node[0])
    subgraph.node[-1].name = "moved"
    if 5 + groups <= MAX_DEPTH:
        data = irmodel.dumps(model)
        assert _upb_accepts(data) and _ours_accepts(data)
    else:
        with pytest.raises(irmodel.EncodeError, match=f"deeper than {MAX_DEPTH}"):
            irmodel.dumps(model)


def test_the_references_accept_100_nested_groups_and_refuse_101():
    onnx.ModelProto.FromString(_groups(100))  # upb
    onnx.shape_inference.infer_shapes(_groups(100))  # C++ protobuf parses the bytes
    with pytest.raises(Exception):  # noqa: B017, PT011 - upb's DecodeError
        onnx.ModelProto.FromString(_groups(101))
    with pytest.raises(irmodel.DecodeError):
        irmodel.loads(_groups(101))


def test_100_nested_groups_decode_as_protobuf_decodes_them():
    assert irmodel.to_dict(irmodel.loads(_groups(100))) == {}  # unknown fields are not in the dict
    assert irmodel.dumps(irmodel.loads(_groups(100))) == _groups(100)


def test_the_campaign_reproducer_decodes_as_protobuf_decodes_it():
    from reference_helpers import reference_dict

    with open(os.path.join(ROOT, "fuzz", "findings", "atheris-ref-diff-nesting-100.bin"), "rb") as f:
        data = f.read()
    assert irmodel.to_dict(irmodel.loads(data)) == reference_dict("ModelProto", data)
