"""Protobuf's message methods beyond field access (copies, pickles, sizes, presence,
unknown fields) on ONNX messages, held to what protobuf does with the reference's.

A loaded message reads from a mapped file; `copy.deepcopy`, `copy.copy` and `pickle` must
still work (protobuf's messages allow all three) and give a message of its own: the same
bytes as the reference's copy, independent of the original, and, for a copy, still able
to read the external data of the original's model.  `ByteSize` (converters ask it to
decide on external data) must be the reference's, and free while a model is unchanged.
"""

from __future__ import annotations

import copy
import pickle

import numpy as np
import onnx
import pytest
from onnx import helper as oh
from onnx import numpy_helper

import irmodel
from irmodel._files.external_data import read_external_data


@pytest.fixture(scope="module")
def sample(node_corpus) -> list:
    """Every 20th model of the reference corpus: ~100 models of every kind of field."""
    return node_corpus[::20]


@pytest.mark.parametrize("how", ["deepcopy", "copy", "pickle"])
def test_a_copy_has_the_bytes_of_the_references_copy(sample, how):
    make = {"deepcopy": copy.deepcopy, "copy": copy.copy,
            "pickle": lambda m: pickle.loads(pickle.dumps(m))}[how]
    for name, data in sample:
        ours = make(irmodel.loads(data))
        theirs = make(onnx.load_model_from_string(data))
        assert type(ours) is irmodel.ModelProto, name
        assert irmodel.dumps(ours) == theirs.SerializeToString(), name


def test_a_copy_of_a_mapped_model_is_independent(tmp_path):
    src = _model_file(tmp_path)
    m = irmodel.load(src)
    ref = onnx.load(src)
    for c, rc in ((copy.deepcopy(m.graph.node[1]), copy.deepcopy(ref.graph.node[1])),
                  (copy.copy(m.graph.node[1]), copy.copy(ref.graph.node[1]))):
        c.attribute[0].f = 5.0
        c.input.append("extra")
        rc.attribute[0].f = 5.0
        rc.input.append("extra")
        assert c.SerializeToString() == rc.SerializeToString()
    whole = copy.deepcopy(m)
    whole.graph.node[0].op_type = "Sigmoid"
    ref_whole = copy.deepcopy(ref)
    ref_whole.graph.node[0].op_type = "Sigmoid"
    assert irmodel.dumps(whole) == ref_whole.SerializeToString()
    assert irmodel.dumps(m) == ref.SerializeToString()  # the originals are untouched


def test_pickling_a_submessage_and_a_list_of_messages(tmp_path):
    m = irmodel.load(_model_file(tmp_path))
    ref = onnx.load(_model_file(tmp_path))
    node, nodes = pickle.loads(pickle.dumps((m.graph.node[2], list(m.graph.node))))
    assert type(node) is irmodel.NodeProto
    assert node.SerializeToString() == ref.graph.node[2].SerializeToString()
    assert [n.SerializeToString() for n in nodes] == [n.SerializeToString() for n in ref.graph.node]
    shared = m.graph.node[0]
    a, b = copy.deepcopy([shared, shared])
    assert a is b  # deepcopy's memo: one original, one copy


def test_a_copy_reads_the_external_data_of_the_originals_model(tmp_path):
    weights = np.arange(4096, dtype=np.float32).reshape(64, 64)
    model = oh.make_model(oh.make_graph(
        [oh.make_node("Relu", ["w"], ["y"])], "g", [],
        [oh.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [64, 64])],
        [numpy_helper.from_array(weights, "w")]))
    path = tmp_path / "ext.onnx"
    onnx.save_model(model, str(path), save_as_external_data=True, all_tensors_to_one_file=True,
                    location="ext.data", size_threshold=0)
    m = irmodel.load(str(path))
    for c in (copy.deepcopy(m), copy.copy(m)):
        tensor = c.graph.initializer[0]
        assert bytes(read_external_data(tensor)) == weights.tobytes()
    alone = copy.deepcopy(m.graph.initializer[0])  # a tensor copied out of its model
    assert bytes(read_external_data(alone)) == weights.tobytes()
    # A pickle carries bytes only: the unpickled tensor knows no directory, and says so
    # (the documented error) unless it is given one.
    unpickled = pickle.loads(pickle.dumps(m.graph.initializer[0]))
    with pytest.raises(irmodel.ExternalDataError):
        read_external_data(unpickled)
    assert bytes(read_external_data(unpickled, str(tmp_path))) == weights.tobytes()


def _model_file(tmp_path) -> str:
    path = tmp_path / "m.onnx"
    if not path.exists():
        nodes = [oh.make_node("LeakyRelu", [f"t{i}"], [f"t{i + 1}"], name=f"n{i}", alpha=0.1 * (i + 1))
                 for i in range(3)]
        graph = oh.make_graph(nodes, "g", [oh.make_tensor_value_info("t0", onnx.TensorProto.FLOAT, [2])],
                              [oh.make_tensor_value_info("t3", onnx.TensorProto.FLOAT, [2])])
        onnx.save_model(oh.make_model(graph), str(path))
    return str(path)


def test_a_repeated_field_copied_or_pickled_alone_is_a_list_of_copies(tmp_path, scan_path):
    m = irmodel.load(_model_file(tmp_path))
    ref = onnx.load(_model_file(tmp_path))
    for seq, ref_seq in ((m.graph.node, ref.graph.node), (m.graph.node[0].attribute, ref.graph.node[0].attribute),
                         (m.graph.node[0].input, ref.graph.node[0].input)):
        for made in (copy.deepcopy(seq), pickle.loads(pickle.dumps(seq))):
            assert type(made) is list
            expected = [x.SerializeToString() if hasattr(x, "SerializeToString") else x for x in ref_seq]
            assert [x.SerializeToString() if hasattr(x, "SerializeToString") else x for x in made] == expected
            assert all(a is not b for a, b in zip(made, seq) if hasattr(a, "SerializeToString"))


def test_byte_size_matches_the_reference_and_reads_no_bytes_of_an_unchanged_model(sample, tmp_path):
    for name, data in sample:
        m, ref = irmodel.loads(data), onnx.load_model_from_string(data)
        assert m.ByteSize() == ref.ByteSize() == len(data), name
        m.graph.name = "renamed-graph"
        ref.graph.name = "renamed-graph"
        assert m.ByteSize() == ref.ByteSize() == len(irmodel.dumps(m)), name
    # An unchanged model answers from its span: the encoder is not even imported.
    import subprocess
    import sys

    path = _model_file(tmp_path)
    code = ("import sys, irmodel; m = irmodel.load(sys.argv[1]); n = m.ByteSize(); "
            "print(n, 'wirefmt.encoder' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code, path], capture_output=True, text=True, check=True).stdout
    assert out.split() == [str(onnx.load(path).ByteSize()), "False"]


def test_set_in_parent_and_discard_unknown_fields_on_a_model_as_the_reference(tmp_path):
    data = open(_model_file(tmp_path), "rb").read()
    m, ref = irmodel.loads(data), onnx.load_model_from_string(data)
    for vi in (m.graph.input[0], ref.graph.input[0]):  # a scalar: a shape present with no dims
        vi.type.tensor_type.ClearField("shape")
        vi.type.tensor_type.shape.SetInParent()
    assert m.graph.input[0].type.tensor_type.HasField("shape")
    assert irmodel.dumps(m) == ref.SerializeToString()
    # Unknown fields deep in the graph (a node's and an attribute's) and at the top.
    unknown = b"\xba\x3e\x03abc"  # field 999, length-delimited
    ref.graph.node[1].attribute[0].MergeFromString(unknown)
    ref.graph.node[2].MergeFromString(unknown)
    with_unknown = ref.SerializeToString() + unknown
    ours, theirs = irmodel.loads(with_unknown), onnx.load_model_from_string(with_unknown)
    assert irmodel.dumps(ours) == with_unknown
    ours.DiscardUnknownFields()
    theirs.DiscardUnknownFields()
    assert irmodel.dumps(ours) == theirs.SerializeToString() != with_unknown
