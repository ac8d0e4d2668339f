"""Scan hints (`wirefmt.ScanHints`, `wirefmt.scangen`): wirefmt names no type of the layer above, the hints
that layer passes are checked, change only speed (never what a read gives), and are part
of the code cache's stamp (changing one never loads code written for the old one)."""

from __future__ import annotations

import pathlib
import re

import onnx
import pytest
from onnx import helper

import wirefmt
from irmodel.messages import REGISTRY, SCAN_HINTS
from wirefmt import ScanHints, scangen, scansource
from wirefmt.containers import MessageList, RepeatedMessages
from wirefmt.scan import _SCANNER_HELPERS

WIREFMT = pathlib.Path(wirefmt.__file__).resolve().parent


def test_wirefmt_names_no_onnx_type():
    # Every ONNX message and enum type by its outermost name (nested ones start with it).
    names = sorted({name.split(".")[0] for name in (*REGISTRY.messages, *REGISTRY.enums)})
    assert "NodeProto" in names and "Version" in names
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, names)) + r")\b")
    found = [f"{path.name}:{i}: {m.group(0)}"
             for path in sorted(WIREFMT.rglob("*.py"))
             for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             for m in pattern.finditer(line)]
    assert found == []


class _DictCache:
    def __init__(self) -> None:
        self.data: dict = {}

    def load(self, key):
        return self.data.get(key)

    def save(self, key, data):
        self.data[key] = data


def _node_make_child(hints: dict, cache):
    cls = wirefmt.build_classes(REGISTRY, module="hinttest", code_cache=cache, scan_hints=hints)["NodeProto"]
    return scangen.build_scanner(cls, REGISTRY, _SCANNER_HELPERS, "make_child").__code__


@pytest.mark.parametrize("type_name, change", [
    ("AttributeProto", {"hot_order": ("name", "i")}), ("GraphProto", {"runs": ("node", "initializer")}),
    ("NodeProto", {"eager_items": ()}), ("NodeProto", {"eager_span": 4097}),
    ("AttributeProto", {"eager_empty": ("ints",)}), ("NodeProto", {"memo": True})],
    ids=lambda c: next(iter(c)) if isinstance(c, dict) else c)
def test_a_changed_hint_changes_the_stamp(type_name, change):
    spec = REGISTRY.messages[type_name]
    before = scangen.hints_by_type(REGISTRY, SCAN_HINTS)[type_name]
    after = scangen.hints_by_type(REGISTRY, {type_name: {**before, **change}})[type_name]
    assert after != before
    for which in ("make_child", "scan"):
        assert scangen._stamp(spec, REGISTRY, which, after) != scangen._stamp(spec, REGISTRY, which, before)


def test_code_cached_under_other_hints_is_not_loaded():
    cache = _DictCache()
    first = _node_make_child(SCAN_HINTS, cache)
    [(key, stored)] = cache.data.items()
    assert 4096 in first.co_consts
    # Same stamp length, so the same key: only the stored stamp tells the entries apart.
    hints = {**SCAN_HINTS, "NodeProto": {**SCAN_HINTS["NodeProto"], "eager_span": 4097}}
    again = _node_make_child(hints, cache)
    assert list(cache.data) == [key] and cache.data[key] != stored
    assert 4097 in again.co_consts and 4096 not in again.co_consts
    assert _node_make_child(hints, cache) == again  # and that entry is used as it is


def _model_bytes() -> bytes:
    nodes = [helper.make_node("Conv", [f"t{i}", "w"], [f"t{i + 1}"], name=f"n{i}", strides=[1, 1],
                              kernel_shape=[3, 3], group=1, alpha=0.5, mode="same")
             for i in range(70)]
    init = [helper.make_tensor("w", onnx.TensorProto.FLOAT, [2], [1.0, 2.0])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("t0", onnx.TensorProto.FLOAT, [1])],
                              [helper.make_tensor_value_info("t70", onnx.TensorProto.FLOAT, [1])], init)
    return helper.make_model(graph).SerializeToString()


def _walk(model) -> list:
    return [(n.op_type, list(n.input), list(n.output),
             [(a.name, a.type, a.f, a.i, a.s, list(a.ints), list(a.floats), list(a.strings)) for a in n.attribute])
            for n in model.graph.node]


def test_hints_change_how_fields_are_held_never_what_they_read():
    data = _model_bytes()
    reference = onnx.ModelProto.FromString(data)
    hinted = wirefmt.build_classes(REGISTRY, module="hinttest", scan_hints=SCAN_HINTS)["ModelProto"]
    plain = wirefmt.build_classes(REGISTRY, module="hinttest")["ModelProto"]
    a, b = hinted.FromString(data), plain.FromString(data)
    assert type(a.graph.node[0].attribute) is MessageList  # eager_items
    assert type(b.graph.node[0].attribute) is RepeatedMessages
    assert _walk(a) == _walk(b) == _walk(reference)
    assert a.SerializeToString() == b.SerializeToString() == data


@pytest.mark.parametrize("type_name, hints, message", [
    ("NoSuchProto", ScanHints(), "unknown message type"),
    ("NodeProto", ("attribute",), "not a dict"),
    ("NodeProto", {"run": ("attribute",)}, "not a dict with keys among hot_order, runs,"),
])
def test_hints_for_no_type_or_of_no_kind_are_refused_by_build_classes(type_name, hints, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        wirefmt.build_classes(REGISTRY, module="hinttest", scan_hints={type_name: hints})


@pytest.mark.parametrize("type_name, hints, message", [
    ("NodeProto", ScanHints(hot_order=("no_such_field",)), "hot_order 'no_such_field'"),
    ("NodeProto", ScanHints(runs=("input",)), "runs 'input' is not a repeated message field"),
    ("ModelProto", ScanHints(runs=("training_info",)), "numbered 1-15"),  # field 20: two-byte tag
    ("NodeProto", ScanHints(eager_items=("name",)), "eager_items 'name'"),
    ("AttributeProto", ScanHints(eager_empty=("tensors",)), "eager_empty 'tensors' is not a repeated scalar"),
    ("NodeProto", ScanHints(eager_items=("attribute",), eager_span=-1), "eager_span -1 is negative"),
])
def test_a_hint_that_cannot_apply_is_refused_before_any_source_is_written(type_name, hints, message):
    cache = _DictCache()
    cls = wirefmt.build_classes(REGISTRY, module="hinttest", code_cache=cache, scan_hints={type_name: hints})[type_name]
    for which in ("make_child", "scan"):
        with pytest.raises(ValueError, match=re.escape(message)):
            scangen.build_scanner(cls, REGISTRY, _SCANNER_HELPERS, which)
    with pytest.raises(ValueError, match=re.escape(message)):
        cls.FromString(b"")  # the first read of the type
    assert cache.data == {}  # so no entry is made under hints that cannot apply


def test_a_run_of_a_field_numbered_up_to_15_is_read_as_a_run():
    # TensorProto.external_data is field 13: a one-byte tag, so a run (no ONNX file needs it)
    hints = {"TensorProto": ScanHints(runs=("external_data",))}
    cls = wirefmt.build_classes(REGISTRY, module="hinttest", scan_hints=hints)["TensorProto"]
    data = helper.make_tensor("w", onnx.TensorProto.FLOAT, [1], [0.0]).SerializeToString()
    entries = b"".join(b"\x6a" + bytes([len(e)]) + e for e in (
        onnx.StringStringEntryProto(key=f"k{i}", value="v").SerializeToString() for i in range(5)))
    t = cls.FromString(data + entries)
    assert [(e.key, e.value) for e in t.external_data] == [(f"k{i}", "v") for i in range(5)]
    code = scangen.build_scanner(cls, REGISTRY, _SCANNER_HELPERS, "make_child").__code__
    assert "span_run" in code.co_names


def test_hints_get_every_key_and_the_generator_reads_names_as_tuples():
    given = {"GraphProto": ScanHints(runs=["node"]), "AttributeProto": {"eager_empty": ["ints"], "memo": 1}}
    by_type = scangen.hints_by_type(REGISTRY, given)
    assert by_type["GraphProto"] == {**scangen.NO_HINTS, "runs": ["node"]}
    assert list(by_type["GraphProto"]) == list(scangen.NO_HINTS)  # the order the stamp lists them in
    checked = scansource.checked_hints(REGISTRY.messages["AttributeProto"], by_type["AttributeProto"])
    assert checked == {**scangen.NO_HINTS, "eager_empty": ("ints",), "memo": True}
