"""Context-dependent function bodies built in Python equal the ones onnx builds.

For every schema and version we build for, over the node test cases of that operator
(their attributes and input types) plus variants of element types and attributes: our
FunctionProto equals onnx's ``get_context_dependent_function_with_opset_version``
byte for byte (its doc_string aside), and where onnx refuses (empty body) we return
None.  Then the built body, used as a model-local function, infers as the reference
infers onnx's body.
"""

from __future__ import annotations

import warnings

import pytest

import irmodel
from irmodel import defs
from irmodel.defs.bodies import BUILDERS, build_function_body, missing_builders
from irmodel.inference import infer_shapes

onnx = pytest.importorskip("onnx")
from onnx import helper as oh, shape_inference  # noqa: E402

_FLOATS = (1, 10, 11, 16)


# Attribute settings each operator is also tried with (beyond the corpus's and removal of each).
_ATTRIBUTE_VARIANTS: dict[str, list[dict]] = {
    "NegativeLogLikelihoodLoss": [{"reduction": r} for r in ("none", "sum", "mean")]
    + [{"ignore_index": -1}, {"ignore_index": 2, "reduction": "none"}, {"ignore_index": 0, "reduction": "sum"}],
    "SoftmaxCrossEntropyLoss": [{"reduction": "sum"}, {"ignore_index": 1}, {"ignore_index": 1, "reduction": "none"}],
    "CenterCropPad": [{"axes": [0]}, {"axes": [-1, 0]}],
    "DepthToSpace": [{"mode": m, "blocksize": k} for m in ("DCR", "CRD", "crd", "") for k in (1, 3)]
    + [{"blocksize": k} for k in (0, -2, 3037000499, 3037000500, 1 << 40)] + [{"mode": 7}],
    "Range": [{"stash_type": 16}],
    "Bernoulli": [{"dtype": 1 << 40}, {"dtype": (1 << 32) + 7}, {"dtype": 1 << 31}],  # read as int32
    "Attention": [{"is_causal": 1}, {"softcap": 2.5}, {"scale": 0.1}, {"softmax_precision": 11},
                  {"softmax_precision": 7}, {"left_window_size": 2}, {"right_window_size": 1},
                  {"left_window_size": 1, "right_window_size": 0}, {"left_window_size": -2},
                  {"is_causal": 1, "left_window_size": 3}, {"q_num_heads": 2, "kv_num_heads": 2}]
    + [{"qk_matmul_output_mode": m} for m in range(5)],
    "CausalConvWithState": [{"activation": a} for a in ("silu", "swish", "none", "relu")],
    "LinearAttention": [{"update_rule": r} for r in ("linear", "gated", "delta", "gated_delta", "other")]
    + [{"scale": 0.5}, {"scale": 0.0}, {"q_num_heads": 4, "kv_num_heads": 2}, {"q_num_heads": 3, "kv_num_heads": 2},
       {"q_num_heads": 0}, {"kv_num_heads": -1}, {"q_num_heads": 2.0}],
    "RotaryEmbedding": [{"interleaved": 1}, {"interleaved": 0, "rotary_embedding_dim": 4}, {"num_heads": 2}],
}
_ATTRIBUTE_VARIANTS["SpaceToDepth"] = _ATTRIBUTE_VARIANTS["DepthToSpace"]


def _sequence_map_bodies() -> list[dict]:
    """SequenceMap bodies beyond the corpus's: no outputs, no inputs, an output typed as a
    sequence, one with a value_info and an initializer, and a body attribute that is no graph."""
    x = oh.make_tensor_value_info("x", 1, ["n"])
    y = oh.make_tensor_value_info("y", 1, ["n"])
    ident = oh.make_node("Identity", ["x"], ["y"])
    seq_out = oh.make_tensor_sequence_value_info("y", 1, None)
    with_extras = oh.make_graph([oh.make_node("Add", ["x", "c"], ["y"])], "b", [x], [y],
                                initializer=[oh.make_tensor("c", 1, [1], [1.0])],
                                value_info=[oh.make_tensor_value_info("c", 1, [1])])
    return [{"body": oh.make_graph([ident], "b", [x], [])}, {"body": oh.make_graph([ident], "b", [], [y])},
            {"body": oh.make_graph([ident], "b", [x], [seq_out])}, {"body": with_extras},
            {"body": oh.make_graph([ident], "b", [x], [oh.make_empty_tensor_value_info("y")])}, {"body": 3}]


_ATTRIBUTE_VARIANTS["SequenceMap"] = _sequence_map_bodies()


def _modifier_graphs() -> list[dict]:
    """FlexAttention modifiers: identity, an If with a sub-graph, names that clash with the
    renamed ones, initializers, named nodes, two inputs (refused), no graph (refused)."""
    s = oh.make_tensor_value_info("s", 1, None)
    t = oh.make_tensor_value_info("t", 1, None)
    out = oh.make_tensor_value_info("o", 1, None)
    then = oh.make_graph([oh.make_node("Neg", ["s"], ["t"], name="neg")], "then", [], [t])
    other = oh.make_graph([oh.make_node("Identity", ["s"], ["t"])], "else", [], [t])
    nested = oh.make_graph(
        [oh.make_node("ReduceMax", ["s"], ["m"], keepdims=0, name="max"),
         oh.make_node("Greater", ["m", "zero"], ["c"]),
         oh.make_node("If", ["c"], ["t__ScoreMod_"], then_branch=then, else_branch=other),
         oh.make_node("Add", ["t__ScoreMod_", "m__ScoreMod_"], ["o"])],
        "mod", [s], [out],
        initializer=[oh.make_tensor("zero", 1, [], [0.0]), oh.make_tensor("m__ScoreMod_", 1, [], [1.0])])
    identity = oh.make_graph([], "id", [s], [s])
    scaled = oh.make_graph([oh.make_node("Mul", ["s", "s"], ["o"], name="sq")], "sq", [s], [out])
    two_in = oh.make_graph([oh.make_node("Add", ["s", "s2"], ["o"])], "two",
                           [s, oh.make_tensor_value_info("s2", 1, None)], [out])
    return [{"score_mod": nested}, {"prob_mod": nested}, {"score_mod": identity, "prob_mod": scaled},
            {"prob_mod": identity}, {"score_mod": scaled, "prob_mod": nested}, {"score_mod": two_in},
            {"prob_mod": 1.0}, {"softmax_precision": 11}, {"softmax_precision": 10}, {"softmax_precision": 7},
            {"softmax_precision": (1 << 32) + 11},
            {"scale": 0.25}]


_ATTRIBUTE_VARIANTS["FlexAttention"] = _modifier_graphs()


def _with_attributes(node, settings: dict):
    n = onnx.NodeProto()
    n.CopyFrom(node)
    for name, value in settings.items():
        kept = [a for a in n.attribute if a.name != name]
        del n.attribute[:]
        n.attribute.extend(kept)
        n.attribute.append(oh.make_attribute(name, value))
    return n


def _arity_variants(node, types):
    """Optional inputs and outputs left out: trailing ones dropped, middle ones named ""."""
    for k in range(1, len(node.input)):
        n = onnx.NodeProto()
        n.CopyFrom(node)
        del n.input[k:]
        yield n, types[:k]
        if k < len(node.input) - 1 or node.input[k]:
            n = onnx.NodeProto()
            n.CopyFrom(node)
            n.input[k] = ""
            yield n, types
    for k in range(1, len(node.output)):
        n = onnx.NodeProto()
        n.CopyFrom(node)
        del n.output[k:]
        yield n, types


def _variants(op, node, types):
    for elem in _FLOATS + (7, 9):  # element types the ops take, and others (refused or not)
        changed = []
        for t in types:
            c = onnx.TypeProto()
            c.CopyFrom(t)
            if c.HasField("tensor_type"):
                c.tensor_type.elem_type = elem
            changed.append(c)
        yield node, changed
    if len(types) > 1 and types[1].HasField("tensor_type"):  # the second input of another element type
        second = onnx.TypeProto()
        second.CopyFrom(types[1])
        second.tensor_type.elem_type = 11 if second.tensor_type.elem_type != 11 else 1
        yield node, [types[0], second] + list(types[2:])
    if types and types[0].HasField("tensor_type"):  # the first input's shape unknown, or of rank 2
        for rank in (None, 2):
            first = onnx.TypeProto()
            first.CopyFrom(types[0])
            first.tensor_type.ClearField("shape")
            if rank is not None:
                first.tensor_type.shape.dim.add().dim_value = 2
                first.tensor_type.shape.dim.add().dim_param = "n"
            yield node, [first] + list(types[1:])
    seq = onnx.TypeProto()
    seq.sequence_type.elem_type.tensor_type.elem_type = 1
    yield node, [seq] * len(types)  # not a tensor: refused, or read as element type 0
    yield node, []  # no types at all
    yield node, [onnx.TypeProto()] * len(types)  # types given but empty
    for attr in list(node.attribute):
        yield _without(node, attr.name), types
    for stash in (1, 11, 7):
        yield _with_attributes(node, {"stash_type": stash}), types
    n3 = onnx.NodeProto()
    n3.CopyFrom(node)
    for a in n3.attribute:
        if a.type == onnx.AttributeProto.FLOAT:
            a.f = 0.1  # not exact in float32
    yield n3, types
    for settings in _ATTRIBUTE_VARIANTS.get(op, []):
        yield _with_attributes(node, settings), types
    yield from _arity_variants(node, types)


def _without(node, name: str):
    n = onnx.NodeProto()
    n.CopyFrom(node)
    kept = [a for a in n.attribute if a.name != name]
    del n.attribute[:]
    n.attribute.extend(kept)
    return n


_VARIED_PER_OPERATOR = 12


@pytest.fixture(scope="module")
def cases(node_corpus) -> list:
    """``[(domain, op, node bytes, [input TypeProto bytes])]`` from the corpus and variants.

    Every corpus case of an operator we build for; the variants are made from one corpus
    case per pattern of present inputs and outputs (up to `_VARIED_PER_OPERATOR` patterns
    per operator: Attention alone has 93 cases, mostly differing in values).
    """
    out = []
    for _, data in node_corpus:
        m = onnx.load_from_string(data)
        if len(m.graph.node) != 1 or (m.graph.node[0].domain, m.graph.node[0].op_type) not in BUILDERS:
            continue
        node = m.graph.node[0]
        types = {vi.name: vi.type for vi in m.graph.input}
        out.append((node.domain, node.op_type, node, [types.get(n, onnx.TypeProto()) for n in node.input]))
    patterns: dict = {}
    for domain, op, node, types in list(out):
        pattern = (tuple(bool(n) for n in node.input), tuple(bool(n) for n in node.output))
        seen = patterns.setdefault((domain, op), set())
        if pattern in seen or len(seen) >= _VARIED_PER_OPERATOR:
            continue
        seen.add(pattern)
        out.extend((domain, op, n, ts) for n, ts in _variants(op, node, types))
    unique = {(d, op, n.SerializeToString(), tuple(t.SerializeToString() for t in ts)) for d, op, n, ts in out}
    return [(d, op, n, list(ts)) for d, op, n, ts in sorted(unique)]


def _reference(domain: str, op: str, version: int, node: bytes, types: list) -> bytes:
    schema = onnx.defs.get_schema(op, version, domain)
    return schema.get_context_dependent_function_with_opset_version(version, node, types)


def _ours(domain: str, op: str, version: int, node: bytes, types: list):
    schema = defs.get_schema(op, version, domain)
    return build_function_body(schema, irmodel.loads(node, "NodeProto"),
                               [irmodel.loads(t, "TypeProto") for t in types], version)


def _versions():
    for s in defs.get_all_schemas_with_history():
        if (s.domain, s.name) in BUILDERS:
            for v in s.context_dependent_function_opset_versions:
                yield s.domain, s.name, v


@pytest.mark.slow
def test_every_built_body_equals_the_references(cases):
    compared = refused = raised = 0
    per_schema: dict = {}
    diffs = []
    for domain, op, version in _versions():
        for case_domain, case_op, node, types in cases:
            if (case_domain, case_op) != (domain, op):
                continue
            if op == "SequenceMap" and not (types and onnx.TypeProto.FromString(types[0]).WhichOneof("value")):
                # onnx 1.23.2 dereferences the missing type (a crash): ours refuses as for a tensor
                with pytest.raises(irmodel.ValidationError, match="Expected a sequence type for input 0"):
                    _ours(domain, op, version, node, types)
                raised += 1
                continue
            try:
                ref = _reference(domain, op, version, node, types)
            except (onnx.shape_inference.InferenceError, ValueError) as error:  # checked arithmetic, bad node
                with pytest.raises(irmodel.ValidationError) as ours_error:
                    _ours(domain, op, version, node, types)
                assert str(ours_error.value) in str(error), (str(ours_error.value), str(error))
                raised += 1
                continue
            ours = _ours(domain, op, version, node, types)
            if not ref:
                refused += 1
                if ours is not None:
                    diffs.append((op, version, "reference refuses", node, types))
                continue
            expected = onnx.FunctionProto.FromString(ref)
            if not expected.name:  # a builder that refused after writing nodes: onnx returns them
                refused += 1
                if ours is not None:
                    diffs.append((op, version, "reference refuses (half-built body)", node, types))
                continue
            expected.ClearField("doc_string")
            if ours is None or irmodel.dumps(ours) != expected.SerializeToString():
                diffs.append((op, version, node, types))
            compared += 1
            per_schema[(domain, op, version)] = per_schema.get((domain, op, version), 0) + 1
    assert not diffs, diffs[:3]
    assert compared > 100 and refused > 10 and raised > 0, (compared, refused, raised)
    unexercised = [k for k in _versions() if per_schema.get(k, 0) < 5]
    assert not unexercised, unexercised


def test_versions_without_a_built_body_give_none():
    schema = defs.get_schema("GroupNormalization", 21, "")
    node = irmodel.loads(oh.make_node("GroupNormalization", ["X", "s", "b"], ["Y"], num_groups=2)
                         .SerializeToString(), "NodeProto")
    t = irmodel.loads(oh.make_tensor_type_proto(1, [2, 4]).SerializeToString(), "TypeProto")
    assert build_function_body(schema, node, [t, t, t], 20) is None
    assert build_function_body(schema, node, [t, t, t]) is not None  # the highest version
    relu = defs.get_schema("Relu", 14, "")
    assert build_function_body(relu, node, [t]) is None


def test_the_schemas_without_a_builder_are_listed_exactly():
    expected = sorted((s.domain, s.name, s.since_version) for s in onnx.defs.get_all_schemas_with_history()
                      if s.context_dependent_function_opset_versions
                      and (s.domain, s.name) not in BUILDERS)
    assert missing_builders(defs.get_all_schemas_with_history()) == expected
    assert expected == []  # every context-dependent body of onnx 1.23.2 has a builder


def _as_local_function(domain: str, op: str, version: int, node: bytes, types: list, body: bytes) -> bytes:
    """A model calling ``body`` as the model-local function ``local.<op>``."""
    f = onnx.FunctionProto.FromString(body)
    f.domain = "local"
    n = onnx.NodeProto.FromString(node)
    n.domain = "local"
    inputs = [oh.make_value_info(name, onnx.TypeProto.FromString(t)) for name, t in zip(n.input, types) if name]
    g = oh.make_graph([n], "g", inputs, [oh.make_empty_tensor_value_info(o) for o in n.output])
    imports = [oh.make_opsetid("", version), oh.make_opsetid("local", 1)]
    if domain:  # a preview operator: its body's default-domain operators at the current opset
        imports = [oh.make_opsetid("", onnx.defs.onnx_opset_version()), oh.make_opsetid(domain, version),
                   oh.make_opsetid("local", 1)]
    m = oh.make_model(g, functions=[f], opset_imports=imports)
    return m.SerializeToString()


_INFERRED_PER_SCHEMA = 30


def test_built_bodies_infer_as_the_reference_infers_its_bodies(cases):
    """Our body as a model-local function, inferred by us, against onnx's body inferred by onnx.

    Every fourth case, at most `_INFERRED_PER_SCHEMA` per schema version (the bodies
    themselves are compared on all of them above).
    """
    compared = typed = 0
    for domain, op, version in _versions():
        inferred = 0
        for case_domain, case_op, node, types in cases[::4]:
            if (case_domain, case_op) != (domain, op) or not types or inferred >= _INFERRED_PER_SCHEMA:
                continue
            if op == "SequenceMap" and not onnx.TypeProto.FromString(types[0]).WhichOneof("value"):
                continue  # the reference crashes: compared above
            try:
                ref_body = _reference(domain, op, version, node, types)
            except (onnx.shape_inference.InferenceError, ValueError):
                continue  # compared above
            if not ref_body or not onnx.FunctionProto.FromString(ref_body).name:
                continue
            inferred += 1
            ours_body = irmodel.dumps(_ours(domain, op, version, node, types))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    ref = shape_inference.infer_shapes(
                        onnx.load_from_string(_as_local_function(domain, op, version, node, types, ref_body)),
                        data_prop=True).graph
                except Exception:  # noqa: BLE001 - the reference refuses: ours must too
                    ref = None
            try:
                model = irmodel.loads(_as_local_function(domain, op, version, node, types, ours_body))
                ours = onnx.load_from_string(irmodel.dumps(infer_shapes(model, data_prop=True))).graph
            except irmodel.InferenceError:
                ours = None
            assert (ref is None) == (ours is None), (op, version)
            if ref is not None:
                assert [o.SerializeToString() for o in ours.output] == [o.SerializeToString() for o in ref.output]
                assert [v.SerializeToString() for v in ours.value_info] == \
                    [v.SerializeToString() for v in ref.value_info]
                typed += any(o.type.tensor_type.HasField("shape") for o in ref.output)
            compared += 1
    assert compared > 100 and typed > 50, (compared, typed)
