"""Properties over generated models (hypothesis): every value of a valid model extracts into
a valid model; prefixing and inlining keep a model valid; arbitrary messages make the
surgery raise its documented errors only."""

from __future__ import annotations

import onnx
from hypothesis import HealthCheck, given, settings, strategies as st

import irmodel
from irmodel import compose, inliner, utils
from irmodel.fuzz.strategies import messages, valid_models

_SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))


def _reference_valid(model) -> None:
    onnx.checker.check_model(onnx.ModelProto.FromString(irmodel.dumps(model)), full_check=True)


@_SETTINGS
@given(valid_models(max_nodes=8), st.integers(0, 1000))
def test_any_value_extracts_into_a_valid_model(model, pick):
    data = irmodel.dumps(model)
    inferred = irmodel.infer_shapes(irmodel.loads(data))
    values = [o for n in inferred.graph.node for o in n.output if o]
    # values whose inferred type can be a graph output (a tensor type needs a shape, as
    # the checker says: inference leaves some, such as a Loop's scan outputs, without one)
    typed = {v.name for v in list(inferred.graph.value_info) + list(inferred.graph.output)
             if v.type.WhichOneof("value") is not None
             and (v.type.WhichOneof("value") != "tensor_type" or v.type.tensor_type.HasField("shape"))}
    values = [v for v in values if v in typed]
    if not values:
        return
    out = values[pick % len(values)]
    inputs = [v.name for v in inferred.graph.input]
    part = utils.Extractor(inferred).extract_model(inputs, [out])
    irmodel.check_model(part, full_check=True)
    _reference_valid(part)


@_SETTINGS
@given(valid_models(max_nodes=8))
def test_prefixing_and_inlining_keep_models_valid(model):
    _reference_valid(compose.add_prefix(model, "p/"))
    _reference_valid(inliner.inline_local_functions(model))


_ERRORS = (ValueError, TypeError)  # SurgeryError, ValidationError and DecodeError are ValueErrors


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(messages("ModelProto", max_depth=4, max_items=3))
def test_arbitrary_models_raise_only_documented_errors(model):
    g = model.graph
    names = [o for n in g.node for o in n.output][:2]
    for action in (
        lambda: inliner.inline_local_functions(model),
        lambda: inliner.inline_selected_functions(model, [], exclude=True),
        lambda: compose.add_prefix(model, "p"),
        lambda: compose.expand_out_dim(model, 0),
        lambda: utils.Extractor(model).extract_model([v.name for v in g.input], names),
    ):
        try:
            action()
        except _ERRORS:
            pass
