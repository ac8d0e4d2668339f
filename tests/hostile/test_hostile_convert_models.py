"""The builders of `hostile_models` (issue 31's cases): at their small sizes each gives
bytes that irmodel decodes to what protobuf decodes them to, with the structure the
builder's docstring promises."""

from __future__ import annotations

import os

import pytest

import irmodel

import hostile_models as hm

SMALL = [c for c in hm.CASES if not c.needs_dir]


@pytest.mark.parametrize("case", SMALL, ids=lambda c: c.name)
def test_small_case_decodes_as_protobuf_decodes_it(case):
    from google.protobuf import json_format
    from onnx import ModelProto

    data = case.bytes_at(case.small)
    ours = irmodel.to_dict(irmodel.loads(data))
    theirs = json_format.MessageToDict(ModelProto.FromString(data), preserving_proto_field_name=True)
    assert ours == theirs
    assert irmodel.dumps(irmodel.loads(data)) == data  # unchanged spans are written back as read


def test_every_class_of_the_issue_has_a_case():
    classes = {hm.INTERNAL, hm.PROPAGATED, hm.SYMBOLIC, hm.LARGE, hm.REFUSED, hm.APPARENT, hm.DIFFER}
    assert {c.klass for c in hm.CASES} == classes
    assert len(hm.CASES_BY_NAME) == len(hm.CASES)


@pytest.mark.parametrize("name, count", [("concat_chain", 61), ("relu_chain", 2000), ("empty_nodes", 5000),
                                         ("neg_chain", 991), ("broadcast_equalities", 200)])
def test_chains_have_the_size_asked(name, count):
    case = hm.CASES_BY_NAME[name]
    assert len(irmodel.loads(case.bytes_at(case.small)).graph.node) == count


def test_wide_cases_have_the_width_asked():
    node = irmodel.loads(hm.many_attributes(3000)).graph.node[0]
    assert len(node.attribute) == 3000 and len({a.name for a in node.attribute}) == 3000
    assert len(irmodel.loads(hm.many_outputs(1000)).graph.node[0].output) == 1000
    sparse = irmodel.loads(hm.sparse_rank(1000)).graph.sparse_initializer[0]
    assert len(sparse.dims) == 1000 and list(sparse.indices.dims) == [1, 1000]
    fn = irmodel.loads(hm.functions_with_if(99))
    assert [f.name for f in fn.functions] == [f"f{i}" for i in range(99)]


def test_sparse_hole_model_writes_a_hole(tmp_path):
    case = hm.CASES_BY_NAME["sparse_hole_model"]
    data = case.bytes_at(64 << 20, str(tmp_path))
    st = os.stat(tmp_path / hm.HOLE_FILE)
    assert st.st_size == 64 << 20
    assert st.st_blocks * 512 < 1 << 20  # (a file system without holes would fail here, loudly)
    t = irmodel.loads(data).graph.initializer[0]
    assert {e.key: e.value for e in t.external_data} == {"location": hm.HOLE_FILE, "offset": "0", "length": "16"}


def test_full_sizes_are_the_issues():
    full = {c.name: c.full for c in hm.CASES}
    assert full["empty_nodes"] == 2_000_000 and full["relu_chain"] == 200_000
    assert full["many_attributes"] == 300_000 and full["sparse_hole_model"] == 6 << 30
    assert full["layernorm_stash_type"] == 2 ** 63 - 1
