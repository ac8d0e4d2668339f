"""`wirefmt.build_classes` gives a `ClassTable`: each class built the first time it is asked
for, and the whole table wherever something looks at the whole table.

Why it matters: a process that reads ONNX models builds a dozen of the 33 classes, and each
costs tens of microseconds of a small command's start (benchmarks/RESULTS.md).  What must
not change: one class per name (also under threads), the registry's order and every name
for whoever iterates, the classes of fields, and irmodel's dressing of a class (nested
types, enum values, the short repr) before anybody gets it.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time

import pytest

from wirefmt import build_classes
from wirefmt.schema import KIND_BY_NAME, MESSAGE, FieldSpec, MessageSpec, Registry

import irmodel
from irmodel.messages import CLASSES
from irmodel.proto import REGISTRY


def _registry() -> Registry:
    """A root with a child type, the child with a grandchild, and one more type beside them."""
    return Registry([
        MessageSpec("Root", (FieldSpec(1, "child", MESSAGE, type_name="Child"),
                             FieldSpec(2, "name", KIND_BY_NAME["string"]))),
        MessageSpec("Child", (FieldSpec(1, "leaf", MESSAGE, type_name="Leaf", repeated=True),)),
        MessageSpec("Leaf", (FieldSpec(1, "value", KIND_BY_NAME["int64"]),)),
        MessageSpec("Other", (FieldSpec(1, "value", KIND_BY_NAME["int64"]),)),
    ], [])


def _built(table) -> list:
    return [name for name in ("Root", "Child", "Leaf", "Other") if dict.__contains__(table, name)]


def test_a_class_is_built_when_asked_for_and_its_fields_classes_when_used():
    table = build_classes(_registry())
    assert _built(table) == []
    root = table["Root"]
    assert _built(table) == ["Root"]
    assert root._classes["child"] is table["Child"] and _built(table) == ["Root", "Child"]
    with pytest.raises(KeyError):
        root._classes["name"]  # a string field has no class
    data = b"\x0a\x04\x0a\x02\x08\x07\x12\x01x"  # child { leaf { value: 7 } } name: "x"
    assert root.FromString(data).child.leaf[0].value == 7 and _built(table) == ["Root", "Child", "Leaf"]


def test_whatever_looks_at_the_whole_table_sees_every_class_in_the_registrys_order():
    table = build_classes(_registry())
    table["Other"]
    table["Child"]
    assert len(table) == 4 and "Leaf" in table and "Nope" not in table and table.get("Nope") is None
    assert list(table) == ["Root", "Child", "Leaf", "Other"]
    assert list(table.values()) == [table[n] for n in ("Root", "Child", "Leaf", "Other")]
    assert dict(table) == {n: table[n] for n in table} == table.copy() and {**table} == dict(table.items())
    with pytest.raises(KeyError):
        table["Nope"]


def test_one_class_per_name_under_threads_and_dressed_before_anybody_gets_it():
    dressed: list = []

    def dress(name, cls):
        time.sleep(0.05)  # a slow dressing: the other threads ask meanwhile
        cls.dressed = True
        dressed.append(name)

    table = build_classes(_registry(), on_build=dress)
    got: list = []
    threads = [threading.Thread(target=lambda: got.append(table["Root"])) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(got) == 8 and all(c is got[0] for c in got) and all(c.dressed for c in got)
    assert dressed == ["Root"]


def test_irmodels_classes_are_dressed_as_protobufs_generated_ones():
    assert irmodel.TensorProto.FLOAT == 1 and irmodel.TensorProto.Segment is CLASSES["TensorProto.Segment"]
    assert irmodel.TypeProto.Tensor is CLASSES["TypeProto.Tensor"]
    assert irmodel.TensorProto.DataType.Name(1) == "FLOAT" and irmodel.AttributeProto.INTS == 7
    assert repr(irmodel.ModelProto()).startswith("ModelProto(")
    import irmodel.messages as messages

    assert set(messages.__all__) >= {n for n in REGISTRY.messages if "." not in n}
    assert all(getattr(messages, n) is CLASSES[n] for n in REGISTRY.messages if "." not in n)
    with pytest.raises(AttributeError):
        messages.NotAProto


def test_a_process_that_reads_a_model_builds_only_the_classes_it_reads(tmp_path):
    path = tmp_path / "m.onnx"
    model = irmodel.helper.make_model(irmodel.helper.make_graph(
        [irmodel.helper.make_node("Relu", ["x"], ["y"])], "g",
        [irmodel.helper.make_tensor_value_info("x", irmodel.TensorProto.FLOAT, [1])],
        [irmodel.helper.make_tensor_value_info("y", irmodel.TensorProto.FLOAT, [1])]))
    irmodel.save(model, str(path))
    code = ("import irmodel, irmodel.messages as M; m = irmodel.load(%r); [n.op_type for n in m.graph.node]; "
            "print(sorted(n for n in M.REGISTRY.messages if dict.__contains__(M.CLASSES, n)))" % str(path))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    built = eval(out)  # noqa: S307 - our own child's list of names
    assert {"ModelProto", "GraphProto", "NodeProto"} <= set(built)
    assert not {"SequenceProto", "MapProto", "OptionalProto", "OperatorSetProto", "TypeProto.Opaque"} & set(built)
