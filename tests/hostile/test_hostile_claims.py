"""Issue 14, the README's claims made true: ``raw`` and ``dump`` stay linear on nested
groups (each group body is read once, whatever the nesting), and ``convert
--file-per-tensor`` gives a tensor whose name is no safe file name (300 characters,
invalid UTF-8, control characters) a random file name instead of failing.
"""

from __future__ import annotations

import os
import re

import numpy as np
import onnx
from hypothesis import given, settings, strategies as st

import irmodel
import wirefmt.raw as raw
import wirefmt.reader as reader
from irmodel import helper as h
from wirefmt import DecodeError, iter_fields

import rich_mutants as hm
from cli_helpers import run_cli


def _fields_read(monkeypatch, argv: list) -> int:
    """How many tags the wire reader reads while ``argv`` runs."""
    count = [0]
    real = reader.read_tag

    def counting(buf, pos, end):
        count[0] += 1
        return real(buf, pos, end)

    monkeypatch.setattr(reader, "read_tag", counting)
    monkeypatch.setattr(raw, "read_tag", counting)
    assert run_cli(argv)[0] == 0
    monkeypatch.undo()
    return count[0]


def test_raw_and_dump_read_each_tag_a_bounded_number_of_times_whatever_the_group_nesting(tmp_path, monkeypatch):
    """Work, counted in tags read: 99 nested groups around 2,000 fields cost about what
    one group around them costs (it was 99 times as much: 35 s for 1 MB)."""
    paths = {}
    for levels in (1, 99):
        paths[levels] = str(tmp_path / f"g{levels}.onnx")
        with open(paths[levels], "wb") as f:
            f.write(hm.nested_groups(levels, 2000))
    for command in (["raw"], ["raw", "--offsets"], ["dump"]):
        flat = _fields_read(monkeypatch, [*command, paths[1]])
        nested = _fields_read(monkeypatch, [*command, paths[99]])
        assert flat > 2000 and nested < 1.2 * flat, (command, flat, nested)  # was ~99 x flat


def test_raw_output_of_nested_groups_is_the_expected_tree(tmp_path):
    path = str(tmp_path / "g.onnx")
    with open(path, "wb") as f:
        f.write(hm.nested_groups(99, 3))
    lines = run_cli(["raw", path])[1].splitlines()
    assert lines[0] == "1: 8"
    assert [line.strip() for line in lines[1:100]] == ["100 {  # group"] * 99
    assert lines[100:103] == ["  " * 99 + "1: 1"] * 3
    assert [line.strip() for line in lines[103:]] == ["}"] * 99


_GROUPED = st.recursive(
    st.binary(max_size=6),
    lambda inner: st.tuples(st.integers(1, 3), st.lists(inner, max_size=3)).map(
        lambda t: hm._tag(t[0], 3) + b"".join(t[1]) + hm._tag(t[0], 4)),
    max_leaves=12)


def _outcome(fields_of, buf):
    """The fields a field iterator yields over ``buf`` and into every group's body, or the
    error it stops with."""
    out = []
    try:
        stack = [(0, len(buf), 0)]
        while stack:
            start, end, depth = stack.pop()
            for f in fields_of(buf, start, end, depth):
                out.append(tuple(f))
                if f.wire_type == 3:
                    stack.append((f.start, f.end, depth + 1))
    except DecodeError as exc:
        out.append(("error", exc.reason, exc.offset))
    return out


@settings(max_examples=300, deadline=None)
@given(st.lists(_GROUPED, max_size=4).map(b"".join))
def test_the_raw_walks_group_aware_reader_yields_what_iter_fields_yields(buf):
    """raw.walk reads fields with `raw._fields` (groups read once, remembered); it must
    agree with the reference reader `iter_fields` on every input, nested groups included."""
    groups = raw._GroupExtents()
    ours = _outcome(lambda b, s, e, d: raw._fields(b, s, e, d, groups), buf)
    assert ours == _outcome(iter_fields, buf)


def test_raw_of_malformed_groups_prints_the_valid_prefix_then_fails(tmp_path):
    path = str(tmp_path / "bad.onnx")
    with open(path, "wb") as f:
        f.write(hm._tag(1, 0) + b"\x08" + hm._tag(5, 3) + hm._tag(1, 0) + b"\x01")  # never closed
    status, out, err = run_cli(["raw", path])
    assert status == 1 and out == "1: 8\n" and "group 5 is not closed" in err


# -- a random file name for a tensor whose name is not a safe file name -------------------------------

def _model_with_names(directory, names) -> str:
    """A model with one 300-float initializer per name (names as bytes: they may be
    invalid UTF-8, which no builder writes), serialized by hand."""
    graph = hm._ld(2, b"g")
    for i, name in enumerate(names):
        tensor = irmodel.dumps(irmodel.from_array(np.full(300, float(i), np.float32), "p"))
        graph += hm._ld(5, tensor.replace(hm._ld(8, b"p"), hm._ld(8, name)))
    path = os.path.join(directory, "m.onnx")
    with open(path, "wb") as f:
        f.write(hm._tag(1, 0) + b"\x0a" + hm._ld(7, graph) + hm._ld(8, hm._tag(2, 0) + b"\x12"))
    return path


NAMES = ["n" * 300, "é" * 200, "ok_name", "bad\xffname", "esc\x1b]0;title\x07", "a/b", "..", "con:1"]


def test_convert_file_per_tensor_gives_unsafe_names_a_random_file_name(tmp_path):
    names = [n.encode("latin-1") if "\xff" in n else n.encode() for n in NAMES]
    path = _model_with_names(tmp_path, names)
    out = str(tmp_path / "out" / "m.onnx")
    os.mkdir(tmp_path / "out")
    status, stdout, err = run_cli(["convert", path, out, "--external-data", "--file-per-tensor",
                                   "--size-threshold", "0"])
    assert status == 0, err
    model = irmodel.load(out)
    locations = {}
    for t in model.graph.initializer:
        locations[t.name if isinstance(t.name, str) else bytes(t.name)] = \
            [e.value for e in t.external_data if e.key == "location"][0]
    assert locations["ok_name"] == "ok_name"
    for name, location in locations.items():
        if name != "ok_name":
            assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}", location), name
    for i, t in enumerate(model.graph.initializer):
        assert irmodel.to_array(t).tolist() == [float(i)] * 300
    onnx.load(out, load_external_data=False)  # (its loader fails on a non-UTF-8 tensor name)


def test_save_one_file_per_tensor_gives_a_300_character_name_a_random_file_name(tmp_path):
    w = irmodel.from_array(np.ones(300, np.float32), "n" * 300)
    m = h.make_model(h.make_graph([], "g", [], [], initializer=[w]))
    irmodel.save(m, str(tmp_path / "m.onnx"), save_as_external_data=True, all_tensors_to_one_file=False,
                 size_threshold=0)
    assert len([f for f in os.listdir(tmp_path) if re.fullmatch(r"[0-9a-f-]{36}", f)]) == 1
    assert irmodel.to_array(irmodel.load(str(tmp_path / "m.onnx")).graph.initializer[0]).sum() == 300
