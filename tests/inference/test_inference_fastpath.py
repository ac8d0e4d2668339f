"""The node pass from spans with cached outcomes (`irmodel.inference.nodepass`) gives the
full path's answers: the same bytes from `infer_shapes` (every type, every ``unk__N``
name in its order, the propagated values seen by later nodes), the same errors (strict
mode's list with node index and name, ``check_type``'s hard errors).

Each model is inferred twice, with the fast paths on for every graph
(``use_fast_paths(True, threshold=0)``) and off (the full path for every node), and the results compared.  The models: the
reference's node-test corpus with each graph's nodes repeated (the copy's nodes see the
same input types, so they hit the cache and must replay its fresh names), generated
models (`irmodel.fuzz.generate`), and hand-made ones where a later node of a cached kind
must miss or must propagate: other input types, an initializer with data, a Reshape to
an initializer shape, Constants, shape arithmetic, attributes that differ where the rule
looks and where it does not, sub-graphs, declared types that conflict on a hit.
"""

from __future__ import annotations

import warnings

import pytest

import irmodel
from irmodel import helper
from irmodel._wireview import nodes as wire_nodes
from irmodel._wireview.fastpath import use_fast_paths
from irmodel.inference import InferenceError, engine, infer_shapes, nodepass, outcomes, slot

onnx = pytest.importorskip("onnx")

FLOAT, INT64 = 1, 7
_PROCESS_NODE = engine.Scope.process_node  # the engine's own (the tests wrap it to count calls)
MODES = [dict(data_prop=True), dict(data_prop=True, strict_mode=True, check_type=True), dict()]


def _outcome(data: bytes, **kw):
    try:
        return irmodel.dumps(infer_shapes(irmodel.loads(data), **kw))
    except InferenceError as exc:
        return ("error", [(p.code, p.path, p.node_name, p.op_type, p.message) for p in exc.problems])


def both(data: bytes, monkeypatch, **kw):
    """``(fast, full, nodes the full path inferred with the pass on, with it off)``."""
    calls = [0]

    def counted(self, node, keep=None):
        calls[0] += 1
        return _PROCESS_NODE(self, node, keep)

    monkeypatch.setattr(engine.Scope, "process_node", counted)
    use_fast_paths(True, threshold=0)
    fast = _outcome(data, **kw)
    fast_calls = calls[0]
    calls[0] = 0
    use_fast_paths(False)
    full = _outcome(data, **kw)
    use_fast_paths(True)
    return fast, full, fast_calls, calls[0]


def assert_same(data: bytes, monkeypatch, expect_hits: bool = True, **kw):
    for mode in [kw] if kw else MODES:
        fast, full, fast_calls, full_calls = both(data, monkeypatch, **mode)
        assert fast == full, mode
        if expect_hits:
            assert fast_calls < full_calls, "the pass took no node from the cache"
    return fast


# -- model building -------------------------------------------------------------------------

def _vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def _model(nodes, inputs, outputs=(), inits=(), value_info=(), opset=18):
    g = helper.make_graph(nodes, "g", inputs, list(outputs), list(inits), value_info=list(value_info))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    return irmodel.dumps(m)


def _ints(name, values, dims=None):
    return helper.make_tensor(name, INT64, [len(values)] if dims is None else dims, values)


def _floats(name, dims):
    n = 1
    for d in dims:
        n *= d
    return helper.make_tensor(name, FLOAT, dims, [0.5] * n)


# -- the reference corpus, each graph's nodes twice ---------------------------------------------

def _doubled(data: bytes) -> bytes:
    m = onnx.load_from_string(data)
    g = m.graph
    del g.value_info[:]
    for o in g.output:
        o.ClearField("type")
    produced = {o for n in g.node for o in n.output if o}
    copies = []
    for n in g.node:
        c = onnx.NodeProto()
        c.CopyFrom(n)
        c.name = n.name + "_again" if n.name else ""
        for i, name in enumerate(c.input):
            if name in produced:
                c.input[i] = name + "__again"
        for i, name in enumerate(c.output):
            if name:
                c.output[i] = name + "__again"
        copies.append(c)
    g.node.extend(copies)
    return m.SerializeToString()


@pytest.fixture(scope="module")
def doubled_corpus(node_corpus) -> list:
    return [(name, _doubled(data)) for name, data in node_corpus]


@pytest.mark.slow
@pytest.mark.parametrize("mode,stride", [(0, 1), (1, 3)])
def test_corpus_doubled(doubled_corpus, monkeypatch, mode, stride):
    """Every model with ``data_prop``; every third one strict with ``check_type`` (time)."""
    kw = MODES[mode]
    assert_doubled_agree(doubled_corpus[::stride], monkeypatch, **kw)


def assert_doubled_agree(cases, monkeypatch, **kw) -> None:
    """Every doubled model infers the same with the pass on and off, and the repeated
    halves were taken from the cache (not every node: data, sub-graphs, ...)."""
    differ = []
    fast_total = full_total = 0
    for name, data in cases:
        fast, full, fast_calls, full_calls = both(data, monkeypatch, **kw)
        fast_total += fast_calls
        full_total += full_calls
        if fast != full:
            differ.append((name, fast if isinstance(fast, tuple) else len(fast),
                           full if isinstance(full, tuple) else len(full)))
    assert not differ, differ[:20]
    assert fast_total < full_total * 0.75


def test_generated_models(monkeypatch):
    from irmodel.fuzz.generate import random_model

    for seed in range(60):
        data = irmodel.dumps(random_model(seed, max_nodes=30))
        for kw in MODES:
            fast, full, _, _ = both(data, monkeypatch, **kw)
            assert fast == full, (seed, kw)


# -- hand-made models: where a later node must miss, propagate or fail ---------------------------

def test_other_input_types_miss(monkeypatch):
    nodes = [helper.make_node("Relu", ["x"], ["a"]), helper.make_node("Relu", ["a"], ["b"]),
             helper.make_node("Relu", ["y"], ["c"]), helper.make_node("Relu", ["c"], ["d"]),
             helper.make_node("Relu", ["z"], ["e"]), helper.make_node("Relu", ["e"], ["f"])]
    data = _model(nodes, [_vi("x", FLOAT, ["N", 3]), _vi("y", FLOAT, [2, 3]), _vi("z", INT64, None)])
    out = assert_same(data, monkeypatch)
    m = irmodel.loads(out)
    assert [vi.name for vi in m.graph.value_info] == ["a", "b", "c", "d", "e", "f"]
    shapes = {vi.name: [d.dim_value or d.dim_param for d in vi.type.tensor_type.shape.dim]
              for vi in m.graph.value_info}
    assert shapes["b"] == ["N", 3] and shapes["d"] == [2, 3]
    assert m.graph.value_info[5].type.tensor_type.elem_type == INT64


def test_fresh_names_replayed_in_order(monkeypatch):
    # NonZero's output has an unknown dim: each hit must name it afresh, in node order.
    nodes = []
    for i in range(6):
        nodes.append(helper.make_node("NonZero", ["x"], [f"nz{i}"]))
        nodes.append(helper.make_node("Transpose", [f"nz{i}"], [f"t{i}"]))
    data = _model(nodes, [_vi("x", FLOAT, [2, 3])], value_info=[_vi("nz3", INT64, [2, "unk__4"])])
    out = assert_same(data, monkeypatch)
    text = irmodel.dumps(irmodel.loads(out))
    assert b"unk__4" in text and b"unk__6" in text


def test_initializer_with_data_and_reshape_to_initializer(monkeypatch):
    inits = [_ints("s1", [6]), _ints("s2", [3, 2]), _ints("s3", [-1, 3]), _floats("w", [2, 3])]
    nodes = [helper.make_node("Reshape", ["x", "s1"], ["r1"]),
             helper.make_node("Reshape", ["x", "s2"], ["r2"]),
             helper.make_node("Reshape", ["x", "s3"], ["r3"]),
             helper.make_node("Reshape", ["x", "s2"], ["r4"]),
             helper.make_node("Add", ["x", "w"], ["a1"]),
             helper.make_node("Add", ["x", "w"], ["a2"]),
             helper.make_node("Add", ["s1", "s1"], ["a3"]),
             helper.make_node("Add", ["s2", "s2"], ["a4"]),
             helper.make_node("Reshape", ["x", "a4"], ["r5"])]
    out = assert_same(_model(nodes, [_vi("x", FLOAT, [2, 3])], inits=inits), monkeypatch)
    shapes = {vi.name: [d.dim_value for d in vi.type.tensor_type.shape.dim]
              for vi in irmodel.loads(out).graph.value_info}
    assert shapes["r1"] == [6] and shapes["r2"] == [3, 2] and shapes["r3"] == [2, 3] and shapes["r4"] == [3, 2]


def test_constants_and_shape_arithmetic(monkeypatch):
    nodes = []
    for i, dims in enumerate(([2, 3], [3, 2], [6, 1], [1, 6])):
        nodes += [helper.make_node("Constant", [], [f"c{i}"], value=_ints(f"v{i}", dims)),
                  helper.make_node("Reshape", ["x", f"c{i}"], [f"r{i}"]),
                  helper.make_node("Shape", [f"r{i}"], [f"s{i}"]),
                  helper.make_node("Gather", [f"s{i}", "zero"], [f"g{i}"], axis=0),
                  helper.make_node("Unsqueeze", [f"g{i}", "axes"], [f"u{i}"]),
                  helper.make_node("Concat", [f"u{i}", "minus1"], [f"cat{i}"], axis=0),
                  helper.make_node("Reshape", ["y", f"cat{i}"], [f"out{i}"]),
                  helper.make_node("Cast", [f"cat{i}"], [f"cast{i}"], to=FLOAT),
                  helper.make_node("Add", [f"cat{i}", f"cat{i}"], [f"sum{i}"]),
                  helper.make_node("Size", ["x"], [f"size{i}"])]
    inits = [helper.make_tensor("zero", INT64, [], [0]), _ints("axes", [0]), _ints("minus1", [-1])]
    data = _model(nodes, [_vi("x", FLOAT, [2, 3]), _vi("y", FLOAT, ["N", 6])], inits=inits)
    assert_same(data, monkeypatch)
    out = assert_same(data, monkeypatch, data_prop=True)
    shapes = {vi.name: [d.dim_value or d.dim_param for d in vi.type.tensor_type.shape.dim]
              for vi in irmodel.loads(out).graph.value_info}
    # Each Reshape reads the first dim its Constant's shape gave, propagated on hits too.
    assert [shapes[f"out{i}"][0] for i in range(4)] == [2, 3, 6, 1]


def test_one_dimensional_values_are_propagated_on_hits(monkeypatch):
    # A 1-D tensor of known length gets unknown values; a hit must still propagate them.
    nodes = []
    for i in range(5):
        nodes += [helper.make_node("Add", ["v", "v"], [f"a{i}"]),
                  helper.make_node("Mul", [f"a{i}", "v"], [f"m{i}"]),
                  helper.make_node("Reshape", ["x", f"m{i}"], [f"r{i}"])]
    assert_same(_model(nodes, [_vi("v", INT64, [2]), _vi("x", FLOAT, [2, 3])]), monkeypatch)


def test_attributes_differing_where_the_rule_looks_or_not(monkeypatch):
    nodes = []
    for i, (alpha, trans) in enumerate([(0.5, 1), (0.25, 1), (0.5, 0), (0.125, 0), (2.0, 1)]):
        nodes.append(helper.make_node("Gemm", ["a", "b"], [f"g{i}"], alpha=alpha, transB=trans))
    for i, axis in enumerate([0, 1, 0, -1]):
        nodes.append(helper.make_node("Concat", ["a", "a"], [f"c{i}"], axis=axis))
        nodes.append(helper.make_node("Softmax", ["a"], [f"s{i}"], axis=axis))
    data = _model(nodes, [_vi("a", FLOAT, [3, 3]), _vi("b", FLOAT, [3, 3])])
    out = assert_same(data, monkeypatch)
    shapes = {vi.name: [d.dim_value for d in vi.type.tensor_type.shape.dim]
              for vi in irmodel.loads(out).graph.value_info}
    assert shapes["c0"] == [6, 3] and shapes["c1"] == [3, 6] and shapes["c3"] == [3, 6]


def test_two_inputs_with_an_empty_name(monkeypatch):
    # Two input names are read inline: an empty one keys the outcome apart (which inputs are empty).
    nodes = []
    for i, ins in enumerate([["a", ""], ["a", "m"], ["a", ""], ["", "m"], ["a", "m"], ["", "m"]]):
        nodes.append(helper.make_node("Clip", ins, [f"c{i}"]))
    data = _model(nodes, [_vi("a", FLOAT, [3, "N"]), _vi("m", FLOAT, [])])
    out = assert_same(data, monkeypatch, expect_hits=False)
    typed = [vi.name for vi in irmodel.loads(out).graph.value_info]
    assert typed == [node.output[0] for node in nodes if node.input[0]]  # Clip without its input: untyped


def test_collector_paused_for_the_pass_and_resumed(monkeypatch):
    # The pass pauses the cyclic collector, collects the young generation after every
    # COLLECT_EVERY full-path nodes, and leaves the collector as it found it: on, off,
    # or with the caller's frozen objects still frozen; also when inference raises.
    import gc
    nodes = [helper.make_node("Relu", ["a"], ["r0"])] + [
        helper.make_node("Relu" if i % 2 else "Neg", [f"r{i}"], [f"r{i + 1}"]) for i in range(12)]
    data = _model(nodes, [_vi("a", FLOAT, [2, "N"])])
    bad = _model([helper.make_node("Add", ["a", "b"], ["c"])], [_vi("a", FLOAT, [2]), _vi("b", FLOAT, [3])])
    use_fast_paths(True, threshold=0)
    monkeypatch.setattr(nodepass, "COLLECT_EVERY", 1)
    young = []

    def seen(phase, info):
        if phase == "start" and info["generation"] == 0:
            young.append(gc.isenabled())

    assert gc.isenabled()
    gc.callbacks.append(seen)
    try:
        infer_shapes(irmodel.loads(data))
        assert young and not any(young)  # collected by the pass itself, the collector paused
        assert gc.isenabled() and gc.get_freeze_count() == 0
        with pytest.raises(InferenceError):
            infer_shapes(irmodel.loads(bad), strict_mode=True)
        assert gc.isenabled()
        gc.disable()
        try:
            infer_shapes(irmodel.loads(data))
            assert not gc.isenabled()
        finally:
            gc.enable()
        gc.freeze()
        try:
            frozen = gc.get_freeze_count()
            young.clear()
            infer_shapes(irmodel.loads(data))
            assert gc.get_freeze_count() >= frozen and gc.isenabled()
        finally:
            gc.unfreeze()
    finally:
        gc.callbacks.remove(seen)
    assert assert_same(data, monkeypatch, data_prop=True)


def test_float_attributes_masked_only_where_the_rule_does_not_look(monkeypatch):
    # Gemms whose alpha differs share an outcome by their masked kind (`by_masked`) while
    # the rule does not read alpha; a rule that reads it (patched in here) must see each
    # node's own value: the same bytes as the full path, each shape from its alpha.
    from irmodel.inference import lookup
    from irmodel.inference.types import TensorType
    alphas = [0.5, 0.5, 0.75, 0.25, 0.5, 0.75]  # with betas that all differ: hits through the variants
    nodes = [helper.make_node("Gemm", ["a", "b"], [f"g{i}"], alpha=alpha, beta=i + 1.0, transB=1)
             for i, alpha in enumerate(alphas)]
    data = _model(nodes, [_vi("a", FLOAT, [3, 3]), _vi("b", FLOAT, [3, 3])])
    out = assert_same(data, monkeypatch)
    assert all([d.dim_value for d in vi.type.tensor_type.shape.dim] == [3, 3]
               for vi in irmodel.loads(out).graph.value_info)
    real = lookup.inference_function

    def reading_alpha(domain, op_type, since_version):
        fn = real(domain, op_type, since_version)
        if op_type != "Gemm":
            return fn

        def gemm(ctx):
            fn(ctx)
            ctx.set_output(0, TensorType(FLOAT, (int(ctx.attr("alpha").f * 4),)))
        return gemm

    monkeypatch.setattr(lookup, "inference_function", reading_alpha)
    out = assert_same(data, monkeypatch, expect_hits=False)
    shapes = {vi.name: [d.dim_value for d in vi.type.tensor_type.shape.dim] for vi in irmodel.loads(out).graph.value_info}
    assert shapes == {f"g{i}": [int(alpha * 4)] for i, alpha in enumerate(alphas)}


def test_doc_strings_names_and_unusual_nodes(monkeypatch):
    long_name = "v" * 200
    nodes = [helper.make_node("Relu", ["x"], ["a"], doc_string="first"),
             helper.make_node("Relu", ["x"], ["b"], doc_string="second", name="n"),
             helper.make_node("Relu", ["x"], [long_name]),
             helper.make_node("Relu", [long_name], ["c"]),
             helper.make_node("Unknown", ["x"], ["u"], domain="custom"),
             helper.make_node("Relu", ["u"], ["d"]),
             helper.make_node("Relu", ["x"], ["e"])]
    m = helper.make_model(helper.make_graph(nodes, "g", [_vi("x", FLOAT, [2])], []),
                          opset_imports=[helper.make_opsetid("", 18), helper.make_opsetid("custom", 1)])
    assert_same(irmodel.dumps(m), monkeypatch)


def test_errors_on_hits_have_their_node(monkeypatch):
    # The second Add's declared output conflicts with the cached outcome (a merge error on a
    # hit); the last Add fails its own rule.  Strict mode lists both, with index and name.
    nodes = [helper.make_node("Add", ["x", "x"], ["a"], name="first"),
             helper.make_node("Add", ["x", "x"], ["b"], name="second"),
             helper.make_node("Add", ["x", "x"], ["c"], name="third"),
             helper.make_node("Add", ["x", "y"], ["d"], name="bad")]
    data = _model(nodes, [_vi("x", FLOAT, [2, 3]), _vi("y", FLOAT, [4, 5])],
                  value_info=[_vi("b", FLOAT, [2, 4])])
    out = assert_same(data, monkeypatch, data_prop=True, strict_mode=True)
    assert out[0] == "error"
    assert [p[1:3] for p in out[1]] == [("graph.node[1]", "second"), ("graph.node[3]", "bad")]
    assert_same(data, monkeypatch, data_prop=True)


def test_check_type(monkeypatch):
    nodes = [helper.make_node("Relu", ["x"], ["a"]), helper.make_node("Relu", ["x"], ["b"]),
             helper.make_node("Relu", ["i"], ["c"])]
    data = _model(nodes, [_vi("x", FLOAT, [2]), _vi("i", 6, [2])])  # Relu(int32): allowed since 14
    assert_same(data, monkeypatch, check_type=True, strict_mode=True)
    data = _model(nodes, [_vi("x", FLOAT, [2]), _vi("i", 9, [2])])  # Relu(bool): a hard error
    out = assert_same(data, monkeypatch, check_type=True)
    assert out[0] == "error"


def test_sub_graphs(monkeypatch):
    def branch(name, value):
        return helper.make_graph([helper.make_node("Relu", ["x"], [f"{name}_r"]),
                                  helper.make_node("Add", [f"{name}_r", value], [f"{name}_out"])],
                                 name, [], [helper.make_tensor_value_info(f"{name}_out", FLOAT, None)])
    nodes = []
    for i in range(4):
        nodes.append(helper.make_node("If", ["cond"], [f"if{i}"], then_branch=branch(f"t{i}", "x"),
                                      else_branch=branch(f"e{i}", "y" if i % 2 else "x")))
        nodes.append(helper.make_node("Relu", [f"if{i}"], [f"r{i}"]))
    data = _model(nodes, [_vi("cond", 9, []), _vi("x", FLOAT, [2, 3]), _vi("y", FLOAT, [1, 3])])
    assert_same(data, monkeypatch)


def test_function_bodies_and_local_functions(monkeypatch):
    fn = helper.make_function("local", "Double", ["i"], ["o"], [helper.make_node("Add", ["i", "i"], ["o"])],
                              [helper.make_opsetid("", 18)])
    nodes = []
    for i in range(3):
        nodes += [helper.make_node("Double", ["x"], [f"d{i}"], domain="local"),
                  helper.make_node("Relu", [f"d{i}"], [f"r{i}"]),
                  helper.make_node("MeanVarianceNormalization", ["x"], [f"m{i}"])]  # a schema body
    g = helper.make_graph(nodes, "g", [_vi("x", FLOAT, [2, 3, 4, 5])], [])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18), helper.make_opsetid("local", 1)],
                          functions=[fn])
    assert_same(irmodel.dumps(m), monkeypatch)


def test_large_graph_takes_the_pass_by_default(monkeypatch):
    nodes = [helper.make_node("Relu", ["x" if i == 0 else f"t{i - 1}"], [f"t{i}"]) for i in range(200)]
    data = _model(nodes, [_vi("x", FLOAT, ["N", 4])])
    calls = [0]

    def counted(self, node, keep=None):
        calls[0] += 1
        return _PROCESS_NODE(self, node, keep)

    monkeypatch.setattr(engine.Scope, "process_node", counted)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = infer_shapes(irmodel.loads(data), data_prop=True)
    assert len(out.graph.value_info) == 200 and calls[0] < 5
    monkeypatch.undo()
    assert_same(data, monkeypatch)


def test_attribute_items():
    node = helper.make_node("Gemm", ["a", "b"], ["c"], alpha=0.5, transB=1)
    raw = irmodel.dumps(node)
    m = wire_nodes.node_pattern().fullmatch(raw)
    items = wire_nodes.attribute_items(m.group(5))
    assert set(items) == {"alpha", "transB"}
    assert wire_nodes.attribute_items(b"\x2a\x02\x0a\x80") is None  # a name's length past the end


# -- the write-back splice (`splice`): the bytes appending gives ---------------------------------

def _spliced_and_appended(data: bytes, monkeypatch, **kw):
    from irmodel.inference import splice
    calls = [0]
    real = splice.splice_value_infos

    def counted(model, fields, spans=None):
        done = real(model, fields, spans)
        calls[0] += done
        return done

    monkeypatch.setattr("irmodel.inference.api.splice_value_infos", counted)
    monkeypatch.setattr(splice, "SPLICE_RATIO", 1 << 40)  # whatever the entries' share
    spliced = _outcome(data, **kw)
    monkeypatch.setattr(splice, "MAX_SPLICE_BYTES", -1)
    appended = _outcome(data, **kw)
    monkeypatch.setattr(splice, "MAX_SPLICE_BYTES", 64 << 20)
    return spliced, appended, calls[0]


def length_field(number: int, payload: bytes) -> bytes:
    from irmodel.inference.types import length_field as field
    return field(number, payload)


def _graph_model(graph_fields: list) -> bytes:
    """A model (opset 18) whose graph is exactly these ``(number, bytes)`` fields, in this order."""
    graph = b"".join(length_field(n, v) for n, v in graph_fields)
    opset = length_field(8, b"\x10\x12")  # opset_import {version: 18}
    return b"\x08\x08" + length_field(7, graph) + opset  # ir_version 8


def _parts():
    relu = irmodel.dumps(helper.make_node("Relu", ["x"], ["a"]))
    neg = irmodel.dumps(helper.make_node("Neg", ["a"], ["b"]))
    x = irmodel.dumps(_vi("x", FLOAT, ["N", 3]))
    declared = irmodel.dumps(_vi("a", FLOAT, None))
    out = irmodel.dumps(helper.make_value_info("b", irmodel.TypeProto()))
    return relu, neg, x, declared, out, irmodel.dumps(helper.make_node("Relu", ["b"], ["c"]))


@pytest.mark.parametrize("layout,spliced", [
    ("canonical", True), ("value_info", True), ("after", True), ("doc", True),
    ("unordered", False), ("name_twice", False), ("unknown_field", False), ("padded_length", False)])
def test_splice_gives_the_appended_bytes(monkeypatch, layout, spliced):
    relu, neg, x, declared, out, last = _parts()
    fields = [(1, relu), (1, neg), (1, last), (2, b"g"), (11, x), (12, out)]
    if layout == "value_info":
        fields.append((13, declared))
    elif layout == "after":
        fields += [(13, declared), (16, irmodel.dumps(irmodel.StringStringEntryProto(key="k", value="v")))]
    elif layout == "doc":
        fields.insert(4, (10, b"doc"))
    elif layout == "unordered":
        fields = [(11, x)] + fields[:4] + fields[5:]
    elif layout == "name_twice":
        fields.insert(4, (2, b"h"))
    elif layout == "unknown_field":
        fields.append((20, b"?"))
    data = _graph_model(fields)
    if layout == "padded_length":  # the first node's length in two bytes: valid, not the shortest form
        graph = b"\x0a" + bytes([len(relu) | 0x80, 0]) + relu + b"".join(length_field(n, v) for n, v in fields[1:])
        data = b"\x08\x08" + length_field(7, graph) + length_field(8, b"\x10\x12")
    for kw in ({}, dict(data_prop=True)):
        a, b, calls = _spliced_and_appended(data, monkeypatch, **kw)
        assert a == b
        assert calls == (1 if spliced else 0), layout


def _layouts():
    """``(layout, graph fields, canonical)``: graphs laid out as our encoder writes them and not."""
    relu, neg, x, declared, out, last = _parts()
    base = [(1, relu), (1, neg), (1, last), (2, b"g"), (11, x), (12, out)]
    big = irmodel.dumps(_floats("w", [40]))  # an item of 2-byte length
    huge = irmodel.dumps(helper.make_tensor("h", FLOAT, [5000], b"\x00" * 20000, raw=True))  # 3-byte length
    meta = irmodel.dumps(irmodel.StringStringEntryProto(key="k", value="v"))
    yield "canonical", base, True
    yield "value_info", base + [(13, declared)], True
    yield "after", base + [(13, declared), (16, meta), (16, meta)], True
    yield "after_only", base + [(14, b""), (16, meta)], True
    yield "doc", base[:4] + [(10, b"doc")] + base[4:], True
    yield "long_items", base[:4] + [(5, big), (5, huge), (5, big)] + base[4:], True
    yield "no_nodes", [(2, b"g"), (5, big), (11, x)], True
    yield "empty", [], True
    yield "unordered", [(11, x)] + base[:4] + base[5:], False
    yield "node_after_name", base[:2] + [(2, b"g"), (1, last)] + base[4:], False
    yield "interleaved", [(1, relu), (5, big), (1, neg), (11, x)], False
    yield "name_twice", base[:4] + [(2, b"h")] + base[4:], False
    yield "doc_before_name", base[:3] + [(10, b"doc"), (2, b"g")] + base[4:], False
    yield "unknown_field", base + [(20, b"?")], False


def _padded(fields: list) -> bytes:
    """``_graph_model`` with the first field's length written in two bytes (valid, not shortest)."""
    number, payload = fields[0]
    graph = bytes([number << 3 | 2, len(payload) | 0x80, 0]) + payload + b"".join(length_field(n, v) for n, v in fields[1:])
    return b"\x08\x08" + length_field(7, graph) + length_field(8, b"\x10\x12")


def _spliced_graph_state(g) -> dict:
    """What a graph holds after its scan: spans of its repeated fields, its strings, its bytes."""
    from wirefmt.message import exact_span, item_spans
    src, start, end = exact_span(g)
    state = {"bytes": bytes(src[start:end])}
    for f in type(g)._spec.fields:
        if f.repeated:
            spans = item_spans(g, f.name)
            state[f.name] = None if spans is None else [s - start for s in spans]
        elif f.name in g.__dict__:
            state[f.name] = g.__dict__[f.name]
    return state


def _entries(names):
    from irmodel.inference.types import TensorType, value_info_fields
    spans: list = []
    fields = value_info_fields([(n, TensorType(FLOAT, (2, "N"))) for n in names], spans)
    return fields, spans


@pytest.mark.parametrize("names", [["y"], ["y", "z" * 200, "w"]])
def test_spliced_graph_without_a_scan_is_what_a_scan_gives(names, monkeypatch):
    # The spliced graph made from the old graph's spans holds what a scan of its bytes
    # holds (same spans, strings, bytes), and the layouts the spans cannot prove
    # canonical are the ones the field walk rejects.
    from irmodel.inference import splice
    monkeypatch.setattr(splice, "SPLICE_RATIO", 1 << 40)
    fields, spans = _entries(names)
    for layout, graph_fields, canonical in _layouts():
        for data in [_graph_model(graph_fields)] + ([_padded(graph_fields)] if graph_fields else []):
            canonical = canonical and data == _graph_model(graph_fields)
            model = irmodel.loads(data)
            g = model.graph
            for f in type(g)._spec.fields:  # as inference reads them: every item list made
                if f.repeated:
                    getattr(g, f.name)
            src, start, end = exact_span_of(g)
            assert (splice.field_layout(g, start, end) is not None) == canonical, layout
            assert (splice.insertion_point(src, start, end) is not None) == canonical, layout
            if not canonical:
                assert not splice.splice_value_infos(irmodel.loads(data), fields, spans)
                continue
            arithmetic, scanned = irmodel.loads(data), irmodel.loads(data)
            assert splice.splice_value_infos(arithmetic, fields, spans)
            assert splice.splice_value_infos(scanned, fields)  # no spans: the new bytes are scanned
            assert _spliced_graph_state(arithmetic.graph) == _spliced_graph_state(scanned.graph), layout
            assert irmodel.dumps(arithmetic) == irmodel.dumps(scanned)
            assert [vi.name for vi in arithmetic.graph.value_info][-len(names):] == names
            expected = irmodel.loads(data)
            expected.graph.value_info.extend(irmodel.loads(length_field(7, fields), "ModelProto").graph.value_info)
            assert irmodel.dumps(arithmetic) == irmodel.dumps(expected)


def exact_span_of(g):
    from wirefmt.message import exact_span
    return exact_span(g)


def test_splice_falls_back_to_the_field_walk(monkeypatch):
    # A layout the spans do not prove (here: forced) takes the field walk and a scan: same bytes.
    from irmodel.inference import splice
    monkeypatch.setattr(splice, "field_layout", lambda g, start, end: None)
    monkeypatch.setattr(splice, "SPLICE_RATIO", 1 << 40)
    for layout, graph_fields, canonical in _layouts():
        data = _graph_model(graph_fields)
        fields, spans = _entries(["y"])
        model = irmodel.loads(data)
        assert splice.splice_value_infos(model, fields, spans) == canonical, layout
        if canonical:
            expected = irmodel.loads(data)
            expected.graph.value_info.extend(irmodel.loads(length_field(7, fields), "ModelProto").graph.value_info)
            assert irmodel.dumps(model) == irmodel.dumps(expected)
    relu, neg, x, declared, out, last = _parts()
    a, b, calls = _spliced_and_appended(_graph_model([(1, relu), (1, neg), (2, b"g"), (11, x)]), monkeypatch)
    assert a == b and calls == 1


def test_splice_with_sub_graph_entries(monkeypatch):
    branch = helper.make_graph([helper.make_node("Relu", ["x"], ["inner"]),
                                helper.make_node("Neg", ["inner"], ["branch_out"])],
                               "b", [], [helper.make_tensor_value_info("branch_out", FLOAT, None)])
    nodes = [helper.make_node("If", ["c"], ["y"], then_branch=branch, else_branch=branch),
             helper.make_node("Relu", ["y"], ["z"])]
    data = _model(nodes, [_vi("c", 9, []), _vi("x", FLOAT, [2])])
    a, b, calls = _spliced_and_appended(data, monkeypatch)
    assert a == b and calls == 0  # the sub-graphs gained entries: the model's graph is appended to
    data = _model([helper.make_node("Relu", ["x"], ["y"])], [_vi("x", FLOAT, [2])],
                  outputs=[_vi("y", FLOAT, None)])
    a, b, calls = _spliced_and_appended(data, monkeypatch)
    assert a == b and calls == 0  # nothing new: nothing spliced, the output's type merged


def test_splice_only_where_the_entries_are_a_large_share():
    from irmodel.inference import splice
    nodes = [helper.make_node("Relu", ["x"], ["y"])]
    small = irmodel.loads(_model(nodes, [_vi("x", FLOAT, [2])]))
    big = irmodel.loads(_model(nodes, [_vi("x", FLOAT, [2])], inits=[_floats("w", [64, 64])]))
    entry = irmodel.dumps(_vi("y", FLOAT, [2]))
    fields = b"\x6a" + bytes([len(entry)]) + entry
    assert splice.splice_value_infos(small, fields)
    assert not splice.splice_value_infos(big, fields)
    assert [vi.name for vi in small.graph.value_info] == ["y"] and not big.graph.value_info


def test_splice_on_the_corpus(node_corpus, monkeypatch):
    spliced = 0
    for name, data in node_corpus[::4]:
        a, b, calls = _spliced_and_appended(data, monkeypatch, data_prop=True)
        assert a == b, name
        spliced += calls
    assert spliced > 100


def test_value_info_fields_match_one_entry_each():
    from irmodel.inference.types import TensorType, SequenceType, UNSET, value_info_bytes, value_info_fields
    from irmodel.inference.types import length_field as field
    long_type = TensorType(1, tuple(f"dim_{i}" for i in range(40)))
    shared = TensorType(7, (2, "N"))
    entries = [("a", shared), ("b", shared), ("n" * 130, shared), ("é", long_type), ("\udcff", UNSET),
               (b"raw", SequenceType(shared)), ("c", long_type), ("d" * 127, TensorType(1, None))]
    expected = b"".join(field(13, value_info_bytes(n, t)) for n, t in entries)
    assert value_info_fields(entries) == expected
    entries += [("e", shared), ("f", shared), ("gg", shared), ("h", long_type)]  # runs of one type and length
    expected = b"".join(field(13, value_info_bytes(n, t)) for n, t in entries)
    spans: list = []
    assert value_info_fields(entries, spans) == expected
    assert value_info_fields([(n, slot.Slot(t)) for n, t in entries], slots=True) == expected
    scanned = irmodel.loads(field(7, expected), "ModelProto").graph
    from wirefmt.message import item_spans
    assert spans == [s - item_spans(scanned, "value_info")[0] + spans[0] for s in item_spans(scanned, "value_info")]
    assert [bytes(expected[a:b]) for a, b in zip(spans[0::2], spans[1::2])] == \
        [value_info_bytes(n, t) for n, t in entries]


def test_sub_graph_names_collected_from_the_bytes(monkeypatch):
    # A fresh name is made after sub-graphs whose declared dims use unk__0 and unk__1:
    # the collection (nodes with graphs only, `nodes_with_graphs`) must still see them.
    def branch(name, dim):
        return helper.make_graph([helper.make_node("Relu", ["x"], [f"{name}_out"])], name, [],
                                 [helper.make_tensor_value_info(f"{name}_out", FLOAT, [dim])])
    nodes = [helper.make_node("Constant", [], ["k"], value=_ints("kv", [1, 2])),
             helper.make_node("If", ["c"], ["y"], then_branch=branch("t", "unk__0"), else_branch=branch("e", "unk__1")),
             helper.make_node("NonZero", ["x"], ["nz"]), helper.make_node("Relu", ["nz"], ["r"])]
    data = _model(nodes, [_vi("c", 9, []), _vi("x", FLOAT, [None])])
    out = assert_same(data, monkeypatch, expect_hits=False, data_prop=True)
    fresh = {d.dim_param for vi in irmodel.loads(out).graph.value_info if vi.name in ("nz", "r")
             for d in vi.type.tensor_type.shape.dim}
    assert fresh and not fresh & {"unk__0", "unk__1"}


# -- outcomes keyed by the input values (Constants, shape arithmetic) ---------------------------

def _layer(i: int, target: list, const_kind: str = "tensor"):
    """A decoder-like layer: a Constant shape, Reshape by it, and the shape arithmetic
    (Shape, Gather, Unsqueeze, Concat) whose propagated value is a later Reshape's and
    Expand's target."""
    if const_kind == "tensor":
        const = helper.make_node("Constant", [], [f"c{i}"], value=_ints("shape", target))
    else:
        const = helper.make_node("Constant", [], [f"c{i}"], value_ints=target)
    return [const,
            helper.make_node("Reshape", ["x", f"c{i}"], [f"r{i}"]),
            helper.make_node("Shape", [f"r{i}"], [f"s{i}"]),
            helper.make_node("Gather", [f"s{i}", "zero"], [f"g{i}"], axis=0),
            helper.make_node("Unsqueeze", [f"g{i}", "axes"], [f"u{i}"]),
            helper.make_node("Concat", [f"u{i}", "minus1"], [f"cat{i}"], axis=0),
            helper.make_node("Reshape", ["y", f"cat{i}"], [f"out{i}"]),
            helper.make_node("Concat", [f"u{i}", f"u{i}"], [f"two{i}"], axis=0),
            helper.make_node("Expand", ["z", f"two{i}"], [f"exp{i}"])]


def _layers_model(targets: list, const_kind: str = "tensor") -> bytes:
    nodes = []
    for i, target in enumerate(targets):
        nodes += _layer(i, target, const_kind)
    inits = [helper.make_tensor("zero", INT64, [], [0]), _ints("axes", [0]), _ints("minus1", [-1])]
    inputs = [_vi("x", FLOAT, [2, 3]), _vi("y", FLOAT, ["N", 6]), _vi("z", FLOAT, [1, 1])]
    return _model(nodes, inputs, inits=inits)


def _reference_shapes(data: bytes) -> dict:
    """The reference's inferred shapes (with data propagation), by value name."""
    m = onnx.shape_inference.infer_shapes(onnx.load_from_string(data), data_prop=True)
    return {vi.name: [d.dim_value if d.HasField("dim_value") else d.dim_param or None
                      for d in vi.type.tensor_type.shape.dim] for vi in m.graph.value_info}


def _our_shapes(data: bytes) -> dict:
    return {vi.name: [d.dim_value if d.HasField("dim_value") else d.dim_param or None
                      for d in vi.type.tensor_type.shape.dim] for vi in irmodel.loads(data).graph.value_info}


@pytest.mark.parametrize("const_kind", ["tensor", "ints"])
def test_repeated_layers_with_the_same_constants_hit(monkeypatch, const_kind):
    data = _layers_model([[3, 2]] * 8, const_kind)
    fast, full, fast_calls, full_calls = both(data, monkeypatch, data_prop=True)
    assert fast == full
    # The first layer takes the full path; the other seven replay its outcomes, values included.
    assert fast_calls <= full_calls // 4
    ours, ref = _our_shapes(fast), _reference_shapes(data)
    for i in range(8):
        for name in (f"out{i}", f"exp{i}", f"cat{i}", f"r{i}"):
            assert ours[name] == ref[name] and None not in ref[name], name
    assert_same(data, monkeypatch)


@pytest.mark.parametrize("const_kind", ["tensor", "ints"])
def test_repeated_layers_with_different_constants(monkeypatch, const_kind):
    # Same shapes, different values: each value has its own outcome; repeats of one hit it.
    targets = [[3, 2], [2, 3], [6, 1], [1, 6], [3, 2], [2, 3], [6, 1], [1, 6]]
    data = _layers_model(targets, const_kind)
    fast, full, fast_calls, full_calls = both(data, monkeypatch, data_prop=True)
    assert fast == full and fast_calls < full_calls
    ours, ref = _our_shapes(fast), _reference_shapes(data)
    for i, target in enumerate(targets):
        assert ref[f"r{i}"] == target
        for name in (f"out{i}", f"exp{i}", f"cat{i}", f"r{i}"):
            assert ours[name] == ref[name], name
    assert_same(data, monkeypatch)


def test_constants_of_one_shape_with_different_values(monkeypatch):
    # Each kind of Constant value twice, with a different value of the same type and shape.
    nodes = []
    for i, (key, a, b) in enumerate([("value_ints", [1, 2, 3], [4, 5, 6]), ("value_int", 4, 5),
                                     ("value_float", 0.5, -0.0), ("value_floats", [0.5, 1.0], [0.0, -0.0]),
                                     ("value", _ints("t", [2, 3]), _ints("t", [3, 2])),
                                     ("value", helper.make_tensor("f", FLOAT, [2], [0.0, 1.0]),
                                      helper.make_tensor("f", FLOAT, [2], [-0.0, 1.0]))]):
        for j, v in enumerate((a, b, a, b)):
            nodes.append(helper.make_node("Constant", [], [f"k{i}_{j}"], **{key: v}))
            if key == "value" and i == 4:
                nodes.append(helper.make_node("Reshape", ["x", f"k{i}_{j}"], [f"r{i}_{j}"]))
            nodes.append(helper.make_node("Shape", [f"k{i}_{j}"], [f"s{i}_{j}"]))
            nodes.append(helper.make_node("Add", [f"k{i}_{j}", f"k{i}_{j}"], [f"a{i}_{j}"]))
    data = _model(nodes, [_vi("x", FLOAT, [2, 3])])
    fast = assert_same(data, monkeypatch)
    ours, ref = _our_shapes(fast), _reference_shapes(data)
    assert ours["r4_0"] == ref["r4_0"] == [2, 3] and ours["r4_1"] == ref["r4_1"] == [3, 2]


def test_output_with_a_value_already_takes_the_full_path(monkeypatch):
    # The same node twice (the second output name repeated): the full path's propagation
    # fails on the second ("already exists"), a replay must fail the same way.
    nodes = [helper.make_node("Shape", ["x"], ["s"])]
    for i in range(3):
        nodes.append(helper.make_node("Concat", ["s", "s"], ["c"], axis=0))
        nodes.append(helper.make_node("Concat", ["s", "s"], [f"c{i}"], axis=0))
    data = _model(nodes, [_vi("x", FLOAT, [2, 3])])
    assert_same(data, monkeypatch, data_prop=True)
    strict = assert_same(data, monkeypatch, data_prop=True, strict_mode=True)
    assert isinstance(strict, tuple) and strict[0] == "error"
    assert any("already exists" in problem[-1] for problem in strict[1])


def test_value_signature():
    scope = engine.Scope(engine.Run(engine.Options(), None, {}), {"": 18})
    scope.const_data["c"] = engine.ConstTensor(_ints("c", [1, 2]))
    scope.const_data["f"] = engine.ConstTensor(_floats("f", [2]))
    scope.shape_data["s"] = (1, "N", None)
    scope.shape_data["big"] = (1,) * (outcomes.MAX_SIGNED_VALUES + 1)
    assert outcomes.value_signature(scope, ["c", "s", "", "x"]) == (
        ((INT64, (2,), (1, 2)), None), (None, (1, "N", None)), (None, None), (None, None))
    assert outcomes.value_signature(scope, ["c", "f"]) is None
    assert outcomes.value_signature(scope, ["big"]) is None
    scope.const_data["c"] = engine.ConstTensor(_ints("c", [3, 4]))  # a new constant: signed anew
    assert outcomes.value_signature(scope, ["c"]) == (((INT64, (2,), (3, 4)), None),)
