"""The schema tables agree with the reference's descriptors, field by field."""

from __future__ import annotations

import pytest

from irmodel.proto import REGISTRY
from wirefmt.schema import KIND_NAMES, ENUM, MESSAGE


def _reference_descriptors():
    import onnx
    from onnx import onnx_data_pb, onnx_operators_pb  # noqa: F401  (registers the messages)

    out = {}

    def walk(desc, prefix):
        name = prefix + desc.name
        out[name] = desc
        for nested in desc.nested_types:
            walk(nested, name + ".")

    for mod_msg in (onnx.ModelProto, onnx.SequenceProto, onnx.OperatorSetProto):
        for desc in mod_msg.DESCRIPTOR.file.message_types_by_name.values():
            walk(desc, "")
    return out


REFERENCE = _reference_descriptors()


def test_every_reference_message_is_in_the_schema_and_nothing_else():
    assert set(REFERENCE) == set(REGISTRY.messages)


@pytest.mark.parametrize("name", sorted(REFERENCE))
def test_fields_match_the_reference(name):
    desc = REFERENCE[name]
    spec = REGISTRY.message(name)
    ref = {}
    for f in desc.fields:
        kind = f.type
        type_name = None
        if kind == MESSAGE:
            type_name = f.message_type.full_name.removeprefix("onnx.")
        elif kind == ENUM:
            type_name = f.enum_type.full_name.removeprefix("onnx.")
        oneof = f.containing_oneof.name if f.containing_oneof else None
        ref[f.number] = (f.name, KIND_NAMES[kind], f.is_repeated, type_name, f.is_packed, oneof)
    ours = {f.number: (f.name, KIND_NAMES[f.kind], f.repeated, f.type_name, spec.is_packed(f), f.oneof)
            for f in spec.fields}
    assert ours == ref


def test_enums_match_the_reference():
    import onnx

    ref = {}
    for file in (onnx.ModelProto.DESCRIPTOR.file, onnx.SequenceProto.DESCRIPTOR.file,
                 onnx.OperatorSetProto.DESCRIPTOR.file):
        for e in file.enum_types_by_name.values():
            ref[e.name] = ({v.name: v.number for v in e.values}, e.is_closed)
        for m in file.message_types_by_name.values():
            for e in m.enum_types:
                ref[f"{m.name}.{e.name}"] = ({v.name: v.number for v in e.values}, e.is_closed)
    ours = {n: (dict(e.values), e.closed) for n, e in REGISTRY.enums.items()}
    assert ours == ref


def test_registry_references_resolve():
    REGISTRY.validate()


def test_all_28_data_types_are_known():
    import onnx

    ours = REGISTRY.enum("TensorProto.DataType").values
    assert len(ours) == 29  # UNDEFINED + 28
    assert ours == dict(onnx.TensorProto.DataType.items())


def test_the_specs_built_one_by_one_are_the_registrys():
    # The byte readers build only the specs they read (`message_spec`, `enum_spec`); the
    # registry, built on first access, hands out the same objects, and the numbers read
    # from the rows are the specs'.
    from irmodel import proto

    assert proto.message_spec("TensorProto") is REGISTRY.messages["TensorProto"]
    assert proto.enum_spec("TensorProto.DataType") is REGISTRY.enums["TensorProto.DataType"]
    for name, spec in REGISTRY.messages.items():
        assert proto.field_numbers(name) == {f.number for f in spec.fields}
        assert all(proto.field_number(name, f.name) == f.number for f in spec.fields)
    with pytest.raises(KeyError):
        proto.field_number("NodeProto", "no_such_field")
    with pytest.raises(AttributeError):
        proto.NO_SUCH_NAME  # noqa: B018
