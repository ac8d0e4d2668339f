"""irmodel.fuzz.wire: every mutation kind does exactly what it claims, by two readers.

Each mutant is checked with our reader (wirefmt) and with protobuf's: its wire-level
reader (an ``Empty`` message keeps every field as an unknown field, which
``UnknownFieldSet`` lists with numbers, wire types and values), its varint decoder, and
``onnx.ModelProto.FromString`` where the claim is about the model.  "Enclosing lengths
stay consistent" is checked by descending from the top to the edited message, parsing
every level completely on the way, with both readers.
"""

from __future__ import annotations

import math
import struct

import onnx
import pytest
from google.protobuf import empty_pb2
from google.protobuf.internal import decoder as pb_decoder
from google.protobuf.message import DecodeError as PbDecodeError
from google.protobuf.unknown_fields import UnknownFieldSet
from hypothesis import given, settings, strategies as st

import irmodel
from irmodel.fuzz.onnx_schema import model_mutator
from irmodel.fuzz.sample_model import sample_model_bytes
from irmodel.fuzz.wire import KINDS, WireMutator
from wirefmt import DecodeError, MAX_DEPTH, encode_varint, iter_fields, read_varint
from wirefmt.limits import MAX_TAG_LENGTH_BYTES

SEEDS = range(10)


@pytest.fixture(scope="module")
def original() -> bytes:
    return sample_model_bytes()


@pytest.fixture(scope="module")
def mutator() -> WireMutator:
    return model_mutator()


# -- the two readers, one message level at a time --------------------------------------

def ours_level(buf, start: int, end: int, depth: int = 0) -> list:
    """``[(number, wire_type, value)]``; groups as nested lists, LEN values as bytes."""
    out = []
    for f in iter_fields(buf, start, end, depth):
        if f.wire_type == 3:
            out.append((f.number, 3, ours_level(buf, f.start, f.end, depth + 1)))
        elif f.wire_type == 2:
            out.append((f.number, 2, bytes(buf[f.start:f.end])))
        else:
            out.append((f.number, f.wire_type, f.value))
    return out


def _pb_fields(ufs) -> list:
    out = []
    for f in ufs:
        if f.wire_type == 3:
            out.append((f.field_number, 3, _pb_fields(f.data)))
        else:
            out.append((f.field_number, f.wire_type, bytes(f.data) if f.wire_type == 2 else f.data))
    return out


def pb_level(data: bytes) -> list:
    """The same list, read by protobuf (raises protobuf's DecodeError)."""
    return _pb_fields(UnknownFieldSet(empty_pb2.Empty.FromString(data)))


def descend_ours(data: bytes, path: tuple) -> tuple[int, int, int]:
    """``(start, end, depth)`` of the message at ``path``; every level above parses completely."""
    start, end, depth = 0, len(data), 0
    for i in path:
        fields = list(iter_fields(data, start, end, depth))
        f = fields[i]
        assert f.wire_type in (2, 3)
        start, end, depth = f.start, f.end, depth + 1
    return start, end, depth


def descend_pb(data: bytes, path: tuple):
    """The bytes (or, inside a group, the field list) of the message at ``path``, by protobuf."""
    current = data
    for i in path:
        fields = pb_level(current) if isinstance(current, bytes) else current
        number, wt, value = fields[i]
        assert wt in (2, 3)
        current = value
    return current


def both_levels(data: bytes, path: tuple) -> tuple[list, list]:
    """The field list of the message at ``path``, by our reader and by protobuf's."""
    start, end, depth = descend_ours(data, path)
    ours = ours_level(data, start, end, depth)
    inner = descend_pb(data, path)
    pb = pb_level(inner) if isinstance(inner, bytes) else inner
    return ours, pb


def ours_error(data: bytes, path: tuple) -> DecodeError:
    """The error our reader raises for the message at ``path`` (levels above parse)."""
    start, end, depth = descend_ours(data, path)
    with pytest.raises(DecodeError) as info:
        ours_level(data, start, end, depth)
    return info.value


def pb_rejects_level(data: bytes, path: tuple) -> bool:
    inner = descend_pb(data, path)
    assert isinstance(inner, bytes)
    try:
        pb_level(inner)
    except PbDecodeError:
        return True
    return False


def pb_varint(buf: bytes, pos: int) -> tuple[int, int]:
    return pb_decoder._DecodeVarint(buf, pos)


def mutants(mutator, data, kind):
    return [mutator.mutate(data, seed, kind=kind) for seed in SEEDS]


def same_both(data: bytes, path: tuple) -> list:
    ours, pb = both_levels(data, path)
    assert ours == pb
    return ours


# -- structural kinds --------------------------------------------------------------------

def test_every_kind_is_tested_here():
    tested = {name[len("test_"):] for name in globals() if name.startswith("test_")}
    assert set(KINDS) <= tested | {"overlong_varint", "overlong_length", "overlong_tag"}


def test_delete_field(mutator, original):
    for m in mutants(mutator, original, "delete_field"):
        before, after = same_both(original, m.path), same_both(m.data, m.path)
        assert after == before[:m.index] + before[m.index + 1:]
        assert before[m.index][0] == m.detail["number"]


def test_duplicate_field(mutator, original):
    for m in mutants(mutator, original, "duplicate_field"):
        before, after = same_both(original, m.path), same_both(m.data, m.path)
        i = m.index
        assert after == before[:i] + [before[i - 1]] + before[i:]


def test_insert_field(mutator, original):
    for m in mutants(mutator, original, "insert_field"):
        before, after = same_both(original, m.path), same_both(m.data, m.path)
        assert after[:m.index] + after[m.index + 1:] == before
        assert after[m.index][:2] == (m.detail["number"], m.detail["wire_type"])


def test_swap_fields(mutator, original):
    for m in mutants(mutator, original, "swap_fields"):
        before, after = same_both(original, m.path), same_both(m.data, m.path)
        i, j = m.index, m.detail["other"]
        expected = list(before)
        expected[i], expected[j] = before[j], before[i]
        assert after == expected


def test_change_wire_type(mutator, original):
    for m in mutants(mutator, original, "change_wire_type"):
        before, after = same_both(original, m.path), same_both(m.data, m.path)
        i = m.index
        assert after[:i] + after[i + 1:] == before[:i] + before[i + 1:]
        assert after[i][0] == before[i][0] == m.detail["number"]
        assert after[i][1] == m.detail["wire_type"] != before[i][1]
        onnx.ModelProto.FromString(m.data)  # a known field with a wrong wire type: kept as unknown


def test_duplicate_singular(mutator, original):
    for m in mutants(mutator, original, "duplicate_singular"):
        before, after = same_both(original, m.path), same_both(m.data, m.path)
        first = m.detail["first"]
        assert after[:m.index] + after[m.index + 1:] == before
        assert m.index > first
        assert after[m.index][:2] == before[first][:2]
        assert [f[0] for f in before].count(m.detail["number"]) == 1
        onnx.ModelProto.FromString(m.data)


def test_packed_to_unpacked(mutator, original):
    for m in mutants(mutator, original, "packed_to_unpacked"):
        before, after = same_both(original, m.path), same_both(m.data, m.path)
        i, n = m.index, m.detail["count"]
        assert before[i][1] == 2 and n >= 1
        assert after[:i] == before[:i] and after[i + n:] == before[i + 1:]
        assert {f[:2] for f in after[i:i + n]} in ({(m.detail["number"], 0)}, {(m.detail["number"], 5)},
                                                    {(m.detail["number"], 1)})
        assert onnx.ModelProto.FromString(m.data) == onnx.ModelProto.FromString(original)


def test_unpacked_to_packed(mutator, original):
    for m in mutants(mutator, original, "unpacked_to_packed"):
        before, after = same_both(original, m.path), same_both(m.data, m.path)
        i, n = m.index, m.detail["count"]
        assert after[:i] == before[:i] and after[i + 1:] == before[i + n:]
        assert after[i][:2] == (m.detail["number"], 2)
        run = before[i:i + n]
        assert all(f[:2] == run[0][:2] for f in run)
        width = {0: None, 1: 8, 5: 4}[run[0][1]]
        body = b"".join(encode_varint(v) if width is None else v.to_bytes(width, "little") for _, _, v in run)
        assert after[i][2] == body
        assert onnx.ModelProto.FromString(m.data) == onnx.ModelProto.FromString(original)


def _is_nan_bits(bits: int, width: int) -> bool:
    value = struct.unpack("<f" if width == 4 else "<d", bits.to_bytes(width, "little"))[0]
    return math.isnan(value)


def test_nan_payload(mutator, original):
    for m in mutants(mutator, original, "nan_payload"):
        bits, width = m.detail["bits"], m.detail["width"]
        assert _is_nan_bits(bits, width)
        assert m.data[m.offset:m.offset + width] == bits.to_bytes(width, "little")
        before, after = same_both(original, m.path), same_both(m.data, m.path)
        i = m.index
        assert after[:i] + after[i + 1:] == before[:i] + before[i + 1:]
        if m.detail["packed"]:
            assert len(after[i][2]) == len(before[i][2]) and bits.to_bytes(width, "little") in after[i][2]
        else:
            assert after[i][2] == bits
        onnx.ModelProto.FromString(m.data)


def test_interesting_varint(mutator, original):
    for m in mutants(mutator, original, "interesting_varint"):
        before, after = same_both(original, m.path), same_both(m.data, m.path)
        i = m.index
        assert after[i] == (m.detail["number"], 0, m.detail["value"])
        assert after[:i] + after[i + 1:] == before[:i] + before[i + 1:]


# -- redundant varint bytes --------------------------------------------------------------

def upb_accepts(data: bytes) -> bool:
    try:
        onnx.ModelProto.FromString(data)
    except PbDecodeError:
        return False
    return True


@pytest.mark.parametrize("kind", ["overlong_varint", "overlong_length", "overlong_tag"])
def test_overlong_varints_keep_their_value_in_more_bytes(mutator, original, kind):
    """A value varint may take up to 10 bytes; a tag or length at most 5 (`MAX_TAG_LENGTH_BYTES`):
    longer ones are refused by upb and by us, with the offset of the varint."""
    widths = set()
    for m in [mutator.mutate(original, seed, kind=kind) for seed in range(40)]:
        width, value = m.detail["width"], m.detail["value"]
        widths.add(width)
        assert m.size == width > len(encode_varint(value)) and width <= 10
        assert read_varint(m.data, m.offset, len(m.data)) == (value, m.offset + width)
        assert pb_varint(m.data, m.offset) == (value, m.offset + width)
        start, end, depth = descend_ours(m.data, m.path)
        ostart, oend, odepth = descend_ours(original, m.path)
        if kind == "overlong_varint" or width <= MAX_TAG_LENGTH_BYTES:
            assert ours_level(m.data, start, end, depth) == ours_level(original, ostart, oend, odepth)
            assert upb_accepts(m.data)
            assert onnx.ModelProto.FromString(m.data) == onnx.ModelProto.FromString(original)
            assert irmodel.to_dict(irmodel.loads(m.data)) == irmodel.to_dict(irmodel.loads(original))
        else:
            err = ours_error(m.data, m.path)
            assert err.offset == m.offset and f"longer than {MAX_TAG_LENGTH_BYTES} bytes" in err.reason
            with pytest.raises(DecodeError, match="longer than 5 bytes"):
                irmodel.to_dict(irmodel.loads(m.data))
            assert not upb_accepts(m.data)
    if kind != "overlong_varint":
        assert min(widths) <= MAX_TAG_LENGTH_BYTES < max(widths)  # both sides of the rule were tried


def test_varint_over_10_bytes(mutator, original):
    for m in mutants(mutator, original, "varint_over_10_bytes"):
        assert m.size == m.detail["width"] > 10
        assert all(b & 0x80 for b in m.data[m.offset:m.offset + 10])
        err = ours_error(m.data, m.path)
        assert err.offset == m.offset and "longer than 10" in err.reason
        with pytest.raises(PbDecodeError):
            pb_varint(m.data, m.offset)
        assert pb_rejects_level(m.data, m.path)


# -- bad tags ----------------------------------------------------------------------------

def _check_tag(m, original, reason: str) -> int:
    tag = m.detail["tag"]
    assert read_varint(m.data, m.offset, len(m.data)) == (tag, m.offset + m.size)
    assert pb_varint(m.data, m.offset) == (tag, m.offset + m.size)
    err = ours_error(m.data, m.path)
    if m.size > MAX_TAG_LENGTH_BYTES:  # a tag longer than 5 bytes is refused for that first
        reason = f"tag varint longer than {MAX_TAG_LENGTH_BYTES} bytes"
    assert err.offset == m.offset and reason in err.reason
    return tag


def test_tag_above_2_32(mutator, original):
    sizes = set()
    for m in mutants(mutator, original, "tag_above_2_32"):
        sizes.add(m.size)
        tag = _check_tag(m, original, "above the maximum")
        before = list(iter_fields(original, *descend_ours(original, m.path)))[m.index]
        assert tag >> 32 and tag & 0xFFFFFFFF == before.number << 3 | before.wire_type
        with pytest.raises(PbDecodeError):  # upb agrees (protobuf's pure-Python backend does not)
            onnx.ModelProto.FromString(m.data)
    assert MAX_TAG_LENGTH_BYTES in sizes and max(sizes) > MAX_TAG_LENGTH_BYTES  # both refusals tried


def test_field_number_0(mutator, original):
    for m in mutants(mutator, original, "field_number_0"):
        assert _check_tag(m, original, "field number 0") >> 3 == 0
        with pytest.raises(PbDecodeError):
            onnx.ModelProto.FromString(m.data)


def test_field_number_too_large(mutator, original):
    for m in mutants(mutator, original, "field_number_too_large"):
        assert _check_tag(m, original, "above the maximum") >> 3 >= 1 << 29


def test_wire_type_6_7(mutator, original):
    for m in mutants(mutator, original, "wire_type_6_7"):
        assert _check_tag(m, original, "invalid wire type") & 7 in (6, 7)
        with pytest.raises(PbDecodeError):
            onnx.ModelProto.FromString(m.data)
        assert pb_rejects_level(m.data, m.path)


# -- groups ------------------------------------------------------------------------------

def _tags(buf: bytes, start: int, end: int) -> list:
    """The tags of a run of fields of varint/empty values, by protobuf's decoder."""
    out, pos = [], start
    while pos < end:
        tag, pos = pb_varint(buf, pos)
        out.append(tag)
    return out


def test_unterminated_group(mutator, original):
    for m in mutants(mutator, original, "unterminated_group"):
        number = m.detail["number"]
        assert pb_varint(m.data, m.offset)[0] == number << 3 | 3
        start, end, depth = descend_ours(m.data, m.path)
        assert m.offset + m.size == end  # the group runs to the end of its message
        err = ours_error(m.data, m.path)
        assert f"group {number} is not closed" in err.reason and err.offset == end
        assert pb_rejects_level(m.data, m.path) if m.path else True
        with pytest.raises(PbDecodeError):
            onnx.ModelProto.FromString(m.data)


def test_mismatched_group(mutator, original):
    for m in mutants(mutator, original, "mismatched_group"):
        number, other = m.detail["number"], m.detail["end_number"]
        tags = [pb_varint(m.data, m.offset)[0], pb_varint(m.data, m.offset + m.size - len(encode_varint(other << 3)))[0]]
        assert tags == [number << 3 | 3, other << 3 | 4] and number != other
        err = ours_error(m.data, m.path)
        assert "does not match" in err.reason and m.offset <= err.offset < m.offset + m.size
        with pytest.raises(PbDecodeError):
            onnx.ModelProto.FromString(m.data)


def test_stray_end_group(mutator, original):
    for m in mutants(mutator, original, "stray_end_group"):
        assert _tags(m.data, m.offset, m.offset + m.size) == [m.detail["number"] << 3 | 4]
        err = ours_error(m.data, m.path)
        assert "unexpected end-group" in err.reason and err.offset == m.offset
        with pytest.raises(PbDecodeError):
            onnx.ModelProto.FromString(m.data)


def test_group_with_field_0(mutator, original):
    for m in mutants(mutator, original, "group_with_field_0"):
        inserted = m.data[m.offset:m.offset + m.size]
        # protobuf's reader sees one group, closed, whose first field has number 0
        (group,) = pb_level(inserted)
        assert group[:2] == (m.detail["number"], 3) and group[2][0][0] == 0
        err = ours_error(m.data, m.path)
        assert "field number 0" in err.reason and m.offset < err.offset < m.offset + m.size
        before = descend_ours(original, m.path)
        assert descend_ours(m.data, m.path)[1] - descend_ours(m.data, m.path)[0] == before[1] - before[0] + m.size


def test_deep_group_nesting(mutator, original):
    for m in mutants(mutator, original, "deep_group_nesting"):
        number = m.detail["number"]
        levels = (m.size // len(encode_varint(number << 3))) // 2
        assert _tags(m.data, m.offset, m.offset + m.size) == [number << 3 | 3] * levels + [number << 3 | 4] * levels
        assert m.detail["depth"] > MAX_DEPTH
        err = ours_error(m.data, m.path)
        assert "nesting deeper than" in err.reason


# -- lengths and payloads ----------------------------------------------------------------

def test_length_past_end(mutator, original):
    for m in mutants(mutator, original, "length_past_end"):
        length = m.detail["length"]
        assert read_varint(m.data, m.offset, len(m.data))[0] == pb_varint(m.data, m.offset)[0] == length
        after_prefix = m.offset + m.size
        start, end, depth = descend_ours(m.data, m.path)
        assert length > end - after_prefix
        err = ours_error(m.data, m.path)
        assert err.offset == m.offset and "bytes remain" in err.reason
        assert pb_rejects_level(m.data, m.path)


def test_packed_wrong_length(mutator, original):
    for m in mutants(mutator, original, "packed_wrong_length"):
        before, after = same_both(original, m.path), same_both(m.data, m.path)
        field, i = after[m.index], m.index
        assert field[:2] == (m.detail["number"], 2) and len(field[2]) % m.detail["width"] != 0
        rest = after[:i] + after[i + 1:]
        assert rest == before or rest == before[:i] + before[i + 1:]  # inserted, or changed in place
        with pytest.raises(DecodeError, match="not a multiple"):
            irmodel.to_dict(irmodel.loads(m.data))
        with pytest.raises(PbDecodeError):
            onnx.ModelProto.FromString(m.data)


def test_invalid_utf8(mutator, original):
    for m in mutants(mutator, original, "invalid_utf8"):
        after = same_both(m.data, m.path)
        number, wt, payload = after[m.index]
        assert number == m.detail["number"] and wt == 2 and m.detail["bad"] in payload
        with pytest.raises(UnicodeDecodeError):
            payload.decode("utf-8")


def _max_depth(data: bytes, limit: int = MAX_DEPTH + 20) -> int:
    """Deepest nesting of length-delimited payloads that parse as messages, by protobuf."""
    best = 0
    stack = [(data, 1)]
    while stack:
        buf, depth = stack.pop()
        best = max(best, depth)
        if depth > limit:
            continue
        try:
            fields = pb_level(buf)
        except PbDecodeError:
            continue
        stack.extend((v, depth + 1) for _, wt, v in fields if wt == 2 and v)
    return best - 1


def test_deep_nesting(mutator, original):
    for m in mutants(mutator, original, "deep_nesting")[:4]:
        assert m.detail["depth"] > MAX_DEPTH
        assert _max_depth(m.data) >= m.detail["depth"]
        with pytest.raises(DecodeError, match="nesting deeper than"):
            irmodel.to_dict(irmodel.loads(m.data))
        with pytest.raises(PbDecodeError):
            onnx.ModelProto.FromString(m.data)


# -- the whole buffer ----------------------------------------------------------------------

def test_trailing_bytes(mutator, original):
    for m in mutants(mutator, original, "trailing_bytes"):
        extra = m.detail["extra"]
        assert m.data == original + extra and m.offset == len(original)
        assert onnx.ModelProto.FromString(m.data[:len(original)]) == onnx.ModelProto.FromString(original)
        if extra[0] == 0:
            err = ours_error(m.data, ())
            assert err.offset == len(original) and "field number 0" in err.reason
            with pytest.raises(PbDecodeError):
                onnx.ModelProto.FromString(m.data)


def test_truncate(mutator, original):
    for m in mutants(mutator, original, "truncate"):
        assert m.data == original[:m.detail["length"]] and len(m.data) < len(original)


# -- properties of the mutator itself ---------------------------------------------------------

def test_same_input_and_seed_give_the_same_mutant_and_a_fresh_mutator_agrees(mutator, original):
    fresh = model_mutator()
    for seed in range(200):
        a = mutator.mutate(original, seed)
        assert a == mutator.mutate(original, seed) == fresh.mutate(bytearray(original), seed)
        assert mutator(original, 1 << 20, seed) == a.data
    assert len({mutator(original, 1 << 20, seed) for seed in range(200)}) > 150


def test_random_kinds_keep_every_enclosing_level_parseable(mutator, original):
    """Whatever the kind, every message above the edited one still parses (both readers)."""
    seen = set()
    for seed in range(600):
        m = mutator.mutate(original, seed)
        seen.add(m.kind)
        if m.kind in ("truncate", "trailing_bytes"):
            continue
        descend_ours(m.data, m.path)
        descend_pb(m.data, m.path)
    assert seen == set(KINDS)


def test_max_size_is_respected_as_an_atheris_mutator_must(mutator, original):
    for seed in range(100):
        assert len(mutator(original, len(original), seed)) <= len(original)
        assert len(mutator(original, 10, seed)) <= 10


def test_a_kind_that_does_not_apply_says_so():
    with pytest.raises(ValueError, match="does not apply"):
        WireMutator().mutate(b"", 0, kind="delete_field")
    with pytest.raises(ValueError, match="unknown mutation kinds"):
        WireMutator(kinds=["no_such_kind"])


def test_mutants_of_mutants_stay_within_the_contract(mutator, original):
    """Mutating malformed input (a campaign's corpus fills with it) raises nothing."""
    data = original
    for seed in range(300):
        data = mutator(data, 4096, seed)
        assert isinstance(data, bytes) and len(data) <= 4096


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=200), st.integers(0, 1 << 32))
def test_schemaless_mutator_takes_any_bytes(data, seed):
    m = WireMutator().mutate(data, seed)
    assert m.kind in KINDS and isinstance(m.data, bytes)
    if m.kind in ("truncate", "trailing_bytes"):
        return
    if _group_on_path(data, m.path):
        # A group's end is found only by parsing its contents, so a malformation placed
        # inside it (a mismatched end, nesting past the limit, ...) makes every level that
        # holds the group unparseable: there the mutant must fail with our error, no other.
        try:
            descend_ours(m.data, m.path)
        except DecodeError:
            pass
        return
    descend_ours(m.data, m.path)


def _group_on_path(data: bytes, path: tuple) -> bool:
    """Whether a container on ``path`` in the original input is a group (wire type 3)."""
    start, end, depth = 0, len(data), 0
    for i in path:
        fields = iter_fields(data, start, end, depth)  # lazily: the input may go bad after field i
        for _ in range(i + 1):
            f = next(fields)
        if f.wire_type == 3:
            return True
        start, end, depth = f.start, f.end, depth + 1
    return False


def test_a_malformed_group_mutant_fails_with_our_error_where_its_group_is_read():
    """The three inputs hypothesis found: a group (field 11) holding nothing, mutated inside."""
    for data, seed in ((b"[\\\x00", 1), (b"[\\", 224), (b"[\\", 94)):
        m = WireMutator().mutate(data, seed)
        assert _group_on_path(data, m.path)
        with pytest.raises(DecodeError):
            descend_ours(m.data, m.path)


def test_schemaless_mutator_finds_structure_in_a_model(original):
    schemaless = WireMutator()
    m = schemaless.mutate(original, 3, kind="field_number_0")
    err = ours_error(m.data, m.path)
    assert err.offset == m.offset
    assert len(schemaless.tree(original).containers) == len(model_mutator().tree(original).containers)


def test_the_wire_mutator_imports_only_wirefmt_and_the_standard_library():
    import ast
    import os
    import subprocess
    import sys

    import irmodel.fuzz

    own = {"wire", "wire_kinds", "spans", "rng", "_wire_internals"}
    folder = os.path.dirname(irmodel.fuzz.__file__)
    for name in own:
        tree = ast.parse(open(os.path.join(folder, name + ".py"), encoding="utf-8").read())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level:
                modules = [node.module] if node.module else [a.name for a in node.names]
                assert set(modules) <= own, (name, modules)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                tops = [a.name.split(".")[0] for a in node.names] if isinstance(node, ast.Import) \
                    else [node.module.split(".")[0]]
                assert all(t == "wirefmt" or t == "__future__" or t in sys.stdlib_module_names for t in tops), \
                    (name, tops)
    code = ("import sys, irmodel; assert 'irmodel.fuzz' not in sys.modules; import irmodel.fuzz.wire; "
            "bad = [m for m in sys.modules if m.split('.')[0] in ('numpy', 'onnx', 'google')]; "
            "assert not bad, bad")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
