"""One test per checker rule: an invalid model lists that rule's code at the right path.

Each case edits a small valid model (built with irmodel's API) so that it breaks one
rule, and asserts that `irmodel.check_model` lists the rule's code at the expected path
and that ``onnx.checker.check_model`` rejects the same bytes too (the verdicts agree),
and that the message starts with the reference's wording.  Rules that are ours alone
(nesting limits, undecodable parts, onnx-data.proto values) are tested without the
reference.
"""

from __future__ import annotations

import os

import pytest

import irmodel
from irmodel import AttributeProto, TensorProto, helper
from irmodel.checker import codes
from repo_paths import REPO

FLOAT = TensorProto.FLOAT


def base_model(ir_version: int = 10, opset: int = 18) -> irmodel.ModelProto:
    """x -> Relu -> r; (r, w) -> Add -> y; y -> LeakyRelu(alpha) -> z."""
    nodes = [
        helper.make_node("Relu", ["x"], ["r"], name="relu"),
        helper.make_node("Add", ["r", "w"], ["y"], name="add"),
        helper.make_node("LeakyRelu", ["y"], ["z"], name="leaky", alpha=0.1),
    ]
    w = helper.make_tensor("w", FLOAT, [3], b"\0" * 12, raw=True)
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", FLOAT, [2, 3])],
                              [helper.make_tensor_value_info("z", FLOAT, [2, 3])], [w])
    return helper.make_model(graph, ir_version=ir_version, opset_imports=[helper.make_opsetid("", opset)])


def problems(model, **kwargs) -> list:
    try:
        irmodel.check_model(model, **kwargs)
    except irmodel.ValidationError as exc:
        return exc.problems
    return []


def reference_rejects(data, **kwargs) -> str | None:
    """onnx's message when it rejects ``data`` (bytes or a path), None when it accepts it."""
    import onnx

    try:
        onnx.checker.check_model(data, **kwargs)
    except Exception as exc:  # noqa: BLE001 - ValidationError, or InferenceError from ParseData
        return str(exc)
    return None


def _words(text: str) -> str:
    return " ".join(text.split())


def assert_rule(model_or_path, code: str, path: str, **kwargs) -> list:
    """The model has problem ``code`` at ``path``, and onnx rejects it as well."""
    found = problems(model_or_path, **kwargs)
    assert (code, path) in [(p.code, p.path) for p in found], [str(p) for p in found]
    data = (model_or_path if isinstance(model_or_path, (str, bytes))
            else irmodel.dumps(model_or_path))
    ref = reference_rejects(data, **kwargs)
    assert ref is not None, f"onnx accepts what we reject: {[str(p) for p in found]}"
    return found


def _graph_attr(name: str, graph) -> AttributeProto:
    return helper.make_attribute(name, graph)


def _if_node(branch) -> list:
    """A Constant condition and an If with ``branch`` as both branches."""
    return [helper.make_node("Constant", [], ["c"], value=helper.make_tensor("cv", TensorProto.BOOL, [], [True])),
            helper.make_node("If", ["c"], ["if_out"], then_branch=branch, else_branch=branch)]


# -- (code, path, edit) cases: the edit breaks exactly that rule (others may follow from it) ----

def _set(obj, **fields):
    for k, v in fields.items():
        setattr(obj, k, v)


def _add_node(m, node):
    m.graph.node.append(node)


def _sparse(m, values_dims=(3,), values=(1.0, 2.0, 3.0), idx_type=TensorProto.INT64, idx_dims=(3,),
            idx=(1, 5, 9), dims=(2, 5), with_indices=True):
    sp = irmodel.SparseTensorProto()
    sp.values = helper.make_tensor("sp", FLOAT, list(values_dims), list(values))
    if with_indices:
        sp.indices = helper.make_tensor("idx", idx_type, list(idx_dims), list(idx))
    sp.dims.extend(dims)
    m.graph.sparse_initializer.append(sp)


def _init(m):
    return m.graph.initializer[0]


def _function(m, name="F", inputs=("a",), outputs=("b",), nodes=None, opsets=(("", 18),), attributes=(),
              domain="local"):
    nodes = nodes if nodes is not None else [helper.make_node("Identity", ["a"], ["b"])]
    f = helper.make_function(domain, name, list(inputs), list(outputs), nodes,
                             [helper.make_opsetid(d, v) for d, v in opsets], list(attributes))
    m.functions.append(f)
    return f


def _subgraph_with_ref_attribute():
    attr = helper.make_attribute("alpha", 0.5)
    attr.ref_attr_name = "alpha_ref"
    inner = helper.make_node("LeakyRelu", ["x"], ["inner_out"])
    inner.attribute.append(attr)
    return helper.make_graph([inner], "branch", [], [helper.make_tensor_value_info("inner_out", FLOAT, None)])


CASES = [
    ("M101", "ir_version", lambda m: _set(m, ir_version=0)),
    ("M102", "ir_version", lambda m: _set(m, ir_version=irmodel.IR_VERSION + 1)),
    ("M103", "metadata_props[1]", lambda m: helper.set_model_props(m, {"k": "1"}) or
     m.metadata_props.add(key="k", value="2")),
    ("M104", "opset_import", lambda m: m.ClearField("opset_import")),
    ("M105", "opset_import", lambda m: _set(m, ir_version=2)),
    ("M106", "opset_import[0].version", lambda m: _set(m.opset_import[0], version=1 << 40)),
    ("G201", "graph.name", lambda m: _set(m.graph, name="")),
    ("G202", "graph.input[1]", lambda m: m.graph.input.append(helper.make_tensor_value_info("x", FLOAT, [1]))),
    ("G203", "graph.initializer[0]", lambda m: _set(_init(m), name="")),
    ("G204", "graph.initializer[1]", lambda m: m.graph.initializer.append(
        helper.make_tensor("w", FLOAT, [3], b"\0" * 12, raw=True))),
    ("G205", "graph.initializer[0]", lambda m: _set(m, ir_version=3)),
    ("G206", "graph.node[1].input[1]", lambda m: _set(m.graph.node[1], input=["r", "nowhere"])),
    ("G207", "graph.node[2].output[0]", lambda m: _set(m.graph.node[2], output=["r"])),
    ("G208", "graph.output[1]", lambda m: m.graph.output.append(helper.make_tensor_value_info("ghost", FLOAT, [1]))),
    ("V301", "graph.output[0]", lambda m: _set(m.graph.output[0], name="")),
    ("V302", "graph.input[0]", lambda m: m.graph.input[0].ClearField("type")),
    ("V303", "graph.input[0].type.tensor_type", lambda m: m.graph.input[0].type.tensor_type.ClearField("shape")),
    ("V304", "graph.input[0].type", lambda m: m.graph.input[0].type.ClearField("tensor_type") or
     _set(m.graph.input[0].type, denotation="IMAGE")),
    ("N401", "graph.node[0].op_type", lambda m: _set(m.graph.node[0], op_type="")),
    ("N402", "graph.node[3]", lambda m: _add_node(m, irmodel.NodeProto(op_type="Relu", name="lonely"))),
    ("N403", "graph.node[0].domain", lambda m: _set(m.graph.node[0], domain="com.example")),
    ("N404", "graph.node[2].attribute[1]", lambda m: m.graph.node[2].attribute.append(
        helper.make_attribute("alpha", 0.2))),
    ("N405", "graph.node[0].op_type", lambda m: _set(m.graph.node[0], op_type="Reluu")),
    ("N406", "graph.node[3].op_type", lambda m: _add_node(m, helper.make_node("Upsample", ["z", "w"], ["u"]))),
    ("N407", "graph.node[0]", lambda m: m.graph.node[0].input.append("x")),
    ("N408", "graph.node[0]", lambda m: m.graph.node[0].output.append("r2")),
    ("N409", "graph.node[1].input[0]", lambda m: _set(m.graph.node[1], input=["", "w"])),
    ("N410", "graph.node[3].output[0]", lambda m: _add_node(m, helper.make_node("Relu", ["z"], [""]))),
    ("N411", "graph.node[0].attribute[0]", lambda m: m.graph.node[0].attribute.append(
        helper.make_attribute("zz", 1))),
    ("N412", "graph.node[2].attribute[0]", lambda m: m.graph.node[2].attribute.__setitem__(
        0, helper.make_attribute("alpha", 1))),
    ("N413", "graph.node[3].attribute[0]", lambda m: _add_node(m, irmodel.NodeProto(
        op_type="Constant", output=["k"], attribute=[AttributeProto(name="value", type=AttributeProto.TENSOR)]))),
    ("N414", "graph.node[3]", lambda m: _add_node(m, helper.make_node("Cast", ["z"], ["zc"]))),
    ("A501", "graph.node[2].attribute[0].name", lambda m: _set(m.graph.node[2].attribute[0], name="")),
    ("A502", "graph.node[2].attribute[0].type", lambda m: m.graph.node[2].attribute[0].ClearField("type")),
    ("A503", "graph.node[2].attribute[0]", lambda m: _set(m.graph.node[2].attribute[0], i=3)
     or m.graph.node[2].attribute[0].ClearField("f")),
    ("A504", "graph.node[2].attribute[0]", lambda m: m.graph.node[2].attribute[0].floats.append(1.0)),
    ("A505", "graph.node[4].attribute[0].g.node[0].attribute[0]",
     lambda m: [m.graph.node.append(n) for n in _if_node(_subgraph_with_ref_attribute())]),
    ("T601", "graph.initializer[0]", lambda m: _init(m).ClearField("data_type")),
    ("T602", "graph.initializer[0]", lambda m: _set(_init(m), data_type=0)),
    ("T603", "graph.initializer[0].data_type", lambda m: _init(m).ClearField("raw_data") or
     _set(_init(m), data_type=99) or _init(m).float_data.extend([1.0, 2.0, 3.0])),
    ("T604", "graph.initializer[0].dims", lambda m: _set(_init(m), dims=[-3])),
    ("T605", "graph.initializer[0]", lambda m: _set(_init(m), dims=[0])),
    ("T606", "graph.initializer[0]", lambda m: _init(m).float_data.extend([1.0, 2.0, 3.0])),
    ("T607", "graph.initializer[0].raw_data", lambda m: _set(_init(m), data_type=TensorProto.STRING)),
    ("T608", "graph.initializer[0]", lambda m: _init(m).ClearField("raw_data") or
     _init(m).int64_data.extend([1, 2, 3])),
    ("T609", "graph.initializer[0].raw_data", lambda m: _set(_init(m), raw_data=b"\0" * 11)),
    ("T609", "graph.initializer[0].float_data", lambda m: _init(m).ClearField("raw_data") or
     _init(m).float_data.extend([1.0, 2.0])),
    ("T609", "graph.initializer[0].raw_data", lambda m: _set(_init(m), data_type=TensorProto.INT4,
                                                             dims=[5], raw_data=b"\0\0")),
    ("T612", "graph.initializer[0].raw_data", lambda m: _set(_init(m), data_type=TensorProto.FLOAT6E2M3,
                                                             dims=[3], raw_data=b"\0\0\x10")),
    ("T613", "graph.initializer[0].int32_data", lambda m: _init(m).ClearField("raw_data") or
     _set(_init(m), data_type=TensorProto.FLOAT6E3M2, dims=[2]) or _init(m).int32_data.extend([63, -1])),
    ("T610", "graph.initializer[0]", lambda m: _set(_init(m), data_location=TensorProto.EXTERNAL) or
     _init(m).external_data.add(key="location", value="w.bin")),
    ("T611", "graph.initializer[0]", lambda m: _init(m).ClearField("raw_data") or
     _set(_init(m), data_location=TensorProto.EXTERNAL)),
    ("S801", "graph.sparse_initializer[0]", lambda m: m.graph.sparse_initializer.append(
        irmodel.SparseTensorProto(dims=[2]))),
    ("S802", "graph.sparse_initializer[0].values", lambda m: _sparse(m, values_dims=(3, 1))),
    ("S803", "graph.sparse_initializer[0].dims", lambda m: _sparse(m, dims=())),
    ("S804", "graph.sparse_initializer[0].dims", lambda m: _sparse(m, dims=(2, 0))),
    ("S805", "graph.sparse_initializer[0].indices", lambda m: _sparse(m, idx_type=TensorProto.INT32)),
    ("S806", "graph.sparse_initializer[0].indices", lambda m: _sparse(m, idx_dims=(1, 1, 3))),
    ("S807", "graph.sparse_initializer[0].indices", lambda m: _sparse(m, idx_dims=(2,), idx=(1, 5))),
    ("S807", "graph.sparse_initializer[0].indices", lambda m: _sparse(m, idx_dims=(3, 3), idx=(0,) * 9)),
    ("S808", "graph.sparse_initializer[0].indices", lambda m: _sparse(m, idx=(1, 5, 10))),
    ("S808", "graph.sparse_initializer[0].indices", lambda m: _sparse(m, idx_dims=(3, 2),
                                                                      idx=(0, 1, 0, 2, 2, 0))),
    ("S809", "graph.sparse_initializer[0].indices", lambda m: _sparse(m, idx=(1, 1, 9))),
    ("S809", "graph.sparse_initializer[0].indices", lambda m: _sparse(m, idx_dims=(3, 2),
                                                                      idx=(0, 1, 0, 0, 1, 4))),
    ("S810", "graph.sparse_initializer[0]", lambda m: _sparse(m, with_indices=False)),
    ("S811", "graph.sparse_initializer[0].indices", lambda m: _sparse(m) or
     m.graph.sparse_initializer[0].indices.int64_data.append(4)),
    ("F902", "functions[1]", lambda m: _function(m) and _function(m)),
    ("F903", "functions[0]", lambda m: _function(m, nodes=[helper.make_node("F", ["a"], ["b"], domain="local")],
                                                opsets=(("", 18), ("local", 1)))),
    ("F905", "functions[0].name", lambda m: _function(m, name="")),
    ("F906", "functions[0].domain", lambda m: _function(m).ClearField("domain")),
    ("F907", "functions[0].input[1]", lambda m: _function(m, inputs=("a", "a"))),
    ("F908", "functions[0].output[1]", lambda m: _function(m, outputs=("b", "b"))),
    ("F909", "functions[0].attribute[1]", lambda m: _function(m, attributes=("p", "p"))),
    ("F910", "functions[0].node[0].input[0]", lambda m: _function(m, inputs=("q",))),
    ("F911", "functions[0].node[1].output[0]", lambda m: _function(m, nodes=[
        helper.make_node("Identity", ["a"], ["b"]), helper.make_node("Identity", ["a"], ["b"])])),
    ("F912", "functions[0].node[0].domain", lambda m: _function(m, opsets=(("other", 1),))),
    ("F913", "functions[0].node[0].domain", lambda m: _function(
        m, nodes=[helper.make_node("ReduceSum", ["a"], ["b"])], opsets=(("", 11),))),
]


@pytest.mark.parametrize("code, path, edit", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_rule_is_reported_at_its_path_and_onnx_rejects_too(code, path, edit):
    m = base_model()
    assert problems(m) == [] and reference_rejects(irmodel.dumps(m)) is None
    edit(m)
    found = assert_rule(m, code, path)
    assert all(p.code in codes.CODES for p in found)


@pytest.mark.parametrize("code, path, edit", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_error_text_starts_with_the_reference_wording(code, path, edit):
    """``str(error)`` starts with what onnx says, when the case has one problem only."""
    m = base_model()
    edit(m)
    found = problems(m)
    if len(found) != 1:
        return  # several problems: onnx names the first it meets, we sort by location
    ref = _words(reference_rejects(irmodel.dumps(m)))
    with pytest.raises(irmodel.ValidationError) as info:
        irmodel.check_model(m)
    ours = _words(str(info.value))
    assert ref[:30] == ours[:30], (ref, ours)


def test_every_code_has_a_rule_test_or_its_own_test():
    tested = {c[0] for c in CASES} | set(OWN_TESTS)
    assert tested == set(codes.CODES)


# -- rules tested on their own: limits, external data files, our own rules ----------------------

OWN_TESTS = ["F901", "F904", "X701", "X702", "X703", "X704", "X705", "X706", "X707", "G209",
             "D001", "D002", "D003", "D004", "D005", "B001"]


def test_too_many_functions_F901():
    m = base_model()
    f = helper.make_function("local", "F", ["a"], ["b"], [helper.make_node("Identity", ["a"], ["b"])],
                             [helper.make_opsetid("", 18)])
    data = irmodel.dumps(m) + b"".join(b"\xca\x01" + _varint(len(fb)) + fb
                                       for fb in [irmodel.dumps(f)] * 10_001)  # field 25: functions
    assert_rule(data, "F901", "functions")


def _varint(n: int) -> bytes:
    from wirefmt import encode_varint

    return encode_varint(n)


def _call_chain(m, length: int, reverse: bool = False):
    fs = []
    for k in range(length):
        body = ([helper.make_node(f"F{k + 1}", ["a"], ["b"], domain="local")] if k + 1 < length
                else [helper.make_node("Identity", ["a"], ["b"])])
        fs.append(helper.make_function("local", f"F{k}", ["a"], ["b"], body,
                                       [helper.make_opsetid("", 18), helper.make_opsetid("local", 1)]))
    m.functions.extend(fs[::-1] if reverse else fs)


def test_call_chain_of_150_functions_is_too_deep_F904():
    m = base_model()
    _call_chain(m, 150, reverse=True)
    found = problems(m)
    assert [(p.code, p.path) for p in found] == [("F904", "functions[149]")]
    assert "a chain of 150 calls starts at local::F0" in found[0].message
    assert reference_rejects(irmodel.dumps(m)) is not None


@pytest.mark.parametrize("reverse", [False, True])
def test_call_chain_of_100_functions_is_fine(reverse):
    m = base_model()
    _call_chain(m, 100, reverse)
    assert problems(m) == []
    assert reference_rejects(irmodel.dumps(m)) is None


@pytest.mark.parametrize("reverse", [False, True])
def test_call_chain_of_101_functions_is_too_deep_in_any_order(reverse):
    """101 functions in a chain break the limit whatever their order.  onnx walks its call
    graph in hash-map order and, in these two orders, misses the chain (a difference we
    keep: our verdict does not depend on the order)."""
    m = base_model()
    _call_chain(m, 101, reverse)
    assert [p.code for p in problems(m)] == ["F904"]


def _external_model(tmp_path, location: str, make_file=True) -> str:
    m = base_model()
    t = _init(m)
    t.ClearField("raw_data")
    t.data_location = TensorProto.EXTERNAL
    t.external_data.add(key="location", value=location)
    if make_file:
        (tmp_path / "w.bin").write_bytes(b"\0" * 12)
    path = str(tmp_path / "m.onnx")
    irmodel.save(m, path)
    return path


@pytest.mark.parametrize("code, location", [
    ("X701", ""), ("X702", "/etc/passwd"), ("X703", "../w.bin"), ("X703", "sub/../../w.bin"),
    ("X706", "missing.bin"), ("X706", "."),
])
def test_external_location_rules(tmp_path, code, location):
    path = _external_model(tmp_path, location)
    assert_rule(path, code, "graph.initializer[0].external_data[0]")


def test_external_symlink_X704(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "w.bin").write_bytes(b"\0" * 12)
    model_dir = tmp_path / "model"
    model_dir.mkdir()
    os.symlink(outside / "w.bin", model_dir / "link.bin")
    assert_rule(_external_model(model_dir, "link.bin", make_file=False), "X704",
                "graph.initializer[0].external_data[0]")


def test_external_through_symlinked_directory_X705(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "w.bin").write_bytes(b"\0" * 12)
    model_dir = tmp_path / "model"
    model_dir.mkdir()
    os.symlink(outside, model_dir / "sub")
    assert_rule(_external_model(model_dir, "sub/w.bin", make_file=False), "X705",
                "graph.initializer[0].external_data[0]")


def test_external_hard_link_X707(tmp_path):
    path = _external_model(tmp_path, "w.bin")
    os.link(tmp_path / "w.bin", tmp_path / "other.bin")
    assert_rule(path, "X707", "graph.initializer[0].external_data[0]")


def test_external_data_in_place_is_valid_and_not_read(tmp_path):
    path = _external_model(tmp_path, "w.bin")
    os.chmod(tmp_path / "w.bin", 0)  # stat works, reading would fail
    try:
        irmodel.check_model(path)
        assert reference_rejects(path) is None
    finally:
        os.chmod(tmp_path / "w.bin", 0o600)


def test_external_data_relative_to_the_directory_the_model_was_loaded_from(tmp_path, monkeypatch):
    path = _external_model(tmp_path, "w.bin")
    monkeypatch.chdir("/")
    irmodel.check_model(irmodel.load(path, load_external_data=False))
    with pytest.raises(irmodel.ValidationError) as info:  # bytes: relative to the current directory
        irmodel.check_model(open(path, "rb").read())
    assert [p.code for p in info.value.problems] == ["X706"]


def test_graphs_nested_deeper_than_the_limit_G209():
    """Only a tree built in memory by assignment can nest this deep: the decoder refuses
    such bytes, and helper functions copy through it (their copies fail as B001)."""
    g = irmodel.GraphProto(name="leaf")
    for _ in range(120):
        attr = irmodel.AttributeProto(name="then_branch", type=AttributeProto.GRAPH)
        attr.g = g
        g = irmodel.GraphProto(name="level", node=[irmodel.NodeProto(op_type="If", input=["z"], output=["o"],
                                                                    attribute=[attr])])
    m = base_model()
    m.graph = g
    found = problems(m)
    assert [p.code for p in found if p.code == "G209"] == ["G209"]
    assert found[-1].path.count(".g") == 101


def test_undecodable_node_B001_is_reported_and_the_rest_is_checked():
    from wirefmt import encode_varint

    def field(number, body):
        return encode_varint(number << 3 | 2) + encode_varint(len(body)) + body

    good = irmodel.dumps(base_model().graph)
    bad_node = field(1, b"\x22\x05ab")  # op_type: length 5, 2 bytes
    graph = good + bad_node + field(2, b"")  # and an empty name: G201
    data = irmodel.dumps(base_model())
    data = data.replace(field(7, good), field(7, graph))
    found = problems(data)
    assert ("B001", "graph.node[3]") in [(p.code, p.path) for p in found]
    assert ("G201", "graph.name") in [(p.code, p.path) for p in found]
    assert reference_rejects(data) is not None


def test_top_level_not_a_model_raises_decode_error():
    with pytest.raises(irmodel.DecodeError):
        irmodel.check_model(b"\x0a\x05ab")


@pytest.mark.parametrize("code, make", [
    ("D001", lambda: irmodel.SequenceProto(name="s", elem_type=5)),
    ("D001", lambda: irmodel.SequenceProto(name="s")),
    ("D002", lambda: irmodel.MapProto(name="m", key_type=TensorProto.FLOAT, values=irmodel.SequenceProto(elem_type=1))),
    ("D003", lambda: irmodel.MapProto(name="m", key_type=TensorProto.INT64, keys=[1], string_keys=[b"a"],
                                      values=irmodel.SequenceProto(elem_type=1))),
    ("D003", lambda: irmodel.MapProto(name="m", key_type=TensorProto.INT64, keys=[1],
                                      values=irmodel.SequenceProto(elem_type=1))),
    ("D004", lambda: irmodel.MapProto(name="m", key_type=TensorProto.INT64)),
])
def test_data_value_rules(code, make):
    from irmodel.checker import check_map, check_sequence

    value = make()
    check = check_sequence if isinstance(value, irmodel.SequenceProto) else check_map
    with pytest.raises(irmodel.ValidationError) as info:
        check(value)
    assert code in {p.code for p in info.value.problems}


def test_data_values_valid_and_nested_with_bad_tensor():
    from irmodel.checker import check_optional, check_sequence

    t = helper.make_tensor("t", FLOAT, [2], [1.0, 2.0])
    check_sequence(irmodel.SequenceProto(elem_type=1, tensor_values=[t]))
    check_optional(irmodel.OptionalProto(elem_type=0))
    bad = irmodel.TensorProto(name="t", data_type=FLOAT, dims=[3], float_data=[1.0, 2.0])
    with pytest.raises(irmodel.ValidationError) as info:
        check_optional(irmodel.OptionalProto(elem_type=3, sequence_value=irmodel.SequenceProto(
            elem_type=1, tensor_values=[bad])))
    assert [(p.code, p.path) for p in info.value.problems] == [
        ("T609", "optional.sequence_value.tensor_values[0].float_data")]


def test_data_nesting_limit_D005():
    from irmodel.checker import check_sequence

    s = irmodel.SequenceProto(elem_type=1)
    for _ in range(105):
        s = irmodel.SequenceProto(elem_type=3, sequence_values=[s])
    with pytest.raises(irmodel.ValidationError) as info:
        check_sequence(s)
    assert [p.code for p in info.value.problems] == ["D005"]


# -- several problems at once -------------------------------------------------------------------

def test_three_independent_problems_are_all_listed_in_location_order():
    m = base_model()
    m.metadata_props.add(key="k", value="1")
    m.metadata_props.add(key="k", value="2")                  # M103
    m.graph.node[1].input[1] = "nowhere"                       # G206
    m.graph.node[2].attribute.append(helper.make_attribute("beta", 1))  # N411
    with pytest.raises(irmodel.ValidationError) as info:
        irmodel.check_model(m)
    err = info.value
    assert [(p.code, p.path) for p in err.problems] == [
        ("M103", "metadata_props[1]"), ("G206", "graph.node[1].input[1]"),
        ("N411", "graph.node[2].attribute[1]")]
    assert err.problems[1].node_name == "add" and err.problems[1].op_type == "Add"
    text = str(err)
    assert text.startswith("Your model has duplicate keys in metadata_props.")
    assert "3 problems:" in text and all(p.message in text for p in err.problems)


def test_validation_error_from_a_message_still_works():
    err = irmodel.ValidationError("plain text")
    assert str(err) == "plain text" and err.problems[0].message == "plain text"
    assert isinstance(err, ValueError)


def test_docs_table_is_regenerated_from_the_code_table():
    from generated_files import assert_generated_file_is_current

    assert_generated_file_is_current("gen_checker_codes.py")
    with open(os.path.join(REPO, "docs", "checker-codes.md"), encoding="utf-8") as f:
        table = f.read()
    assert all(f"| {code} |" in table for code in codes.CODES)
