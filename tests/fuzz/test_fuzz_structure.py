"""irmodel.fuzz.structure: each operation changes exactly what its Mutation says.

Every mutant is read twice, by our reader and by protobuf's (onnx_pb2): at the edited
message the claimed change holds, and once the edited field is cleared in the input and
the mutant, the two are equal (nothing else changed).  The post-processors, the atheris
callables (both mutators) and our own decoder, checker and inference on mutants (only our
errors) are tested after.
"""

from __future__ import annotations

import math
import subprocess
import sys

import onnx
import pytest
from hypothesis import HealthCheck, given, settings

import irmodel
from wirefmt import DecodeError
from irmodel.fuzz import strategies as ist
from irmodel.fuzz import onnx_schema, structure, wire
from irmodel.fuzz.generate import model_bytes
from irmodel.fuzz.rng import FastRandom
from irmodel.fuzz.sample_model import sample_model_bytes
from irmodel.fuzz.structure import OPERATIONS, StructureMutator
from wirefmt import DecodeError, encode_varint
from wirefmt.schema import FLOAT
from wirefmt.values import to_float32

SEEDS = range(30)


@pytest.fixture(scope="module")
def inputs() -> list:
    return [sample_model_bytes()] + [model_bytes(s, "valid") for s in range(3)]


def pb(data: bytes) -> onnx.ModelProto:
    m = onnx.ModelProto()
    m.ParseFromString(data)
    return m


def at(msg, path: tuple):
    for name, index in path:
        msg = getattr(msg, name) if index < 0 else getattr(msg, name)[index]
    return msg


def values(msg, name: str, ours: bool) -> list:
    """The field's values as a list (empty: absent), comparable across both readers."""
    spec = type(msg)._fields[name] if ours else msg.DESCRIPTOR.fields_by_name[name]
    repeated = spec.repeated if ours else spec.is_repeated
    if repeated:
        return [_plain(v) for v in getattr(msg, name)]
    return [_plain(getattr(msg, name))] if msg.HasField(name) else []


def _plain(v):
    if hasattr(v, "SerializeToString"):
        return v.SerializeToString()
    if isinstance(v, float) and math.isnan(v):
        return "nan"
    return bytes(v) if isinstance(v, memoryview) else v


def readers(data: bytes):
    """The two readers' views: ours (irmodel) and protobuf's."""
    return (irmodel.loads(data), True), (pb(data), False)


def rest_equal(before: bytes, after: bytes, path: tuple, name: str) -> None:
    """With field ``name`` of the message at ``path`` cleared in both, input == mutant (both readers)."""
    for (old, ours), (new, _) in zip(readers(before), readers(after)):
        at(old, path).ClearField(name)
        at(new, path).ClearField(name)
        if ours:  # our messages keep unknown fields and have no call to drop them: compare the JSON form
            assert irmodel.to_dict(old) == irmodel.to_dict(new)
        else:
            old.DiscardUnknownFields()
            new.DiscardUnknownFields()
        assert old == new or ours


def mutants(inputs, kind: str):
    mutator = StructureMutator(post_processors=())
    for data in inputs:
        for seed in SEEDS:
            out, m = mutator.mutant(data, FastRandom(seed), kind)
            if m is not None:
                yield data, out, m


def test_add_field_sets_an_absent_field_or_appends_one_element(inputs):
    for before, after, m in mutants(inputs, "add_field"):
        for (old, ours), (new, _) in zip(readers(before), readers(after)):
            a, b = values(at(old, m.path), m.field, ours), values(at(new, m.path), m.field, ours)
            if m.detail["index"] < 0:
                assert a == [] and len(b) <= 1  # set; a proto2 default value stays present
                assert at(new, m.path).HasField(m.field)
            else:
                assert b[:-1] == a and len(b) == len(a) + 1 == m.detail["index"] + 1
        rest_equal(before, after, m.path, m.field)


def test_delete_field_removes_exactly_one_occurrence(inputs):
    for before, after, m in mutants(inputs, "delete_field"):
        for (old, ours), (new, _) in zip(readers(before), readers(after)):
            a, b = values(at(old, m.path), m.field, ours), values(at(new, m.path), m.field, ours)
            i = m.detail["index"]
            if i < 0:
                assert len(a) == 1 and b == []
            else:
                assert b == a[:i] + a[i + 1:]
        rest_equal(before, after, m.path, m.field)


def test_mutate_field_replaces_one_scalar_and_both_readers_agree_on_it(inputs):
    out_of_range = 0
    for before, after, m in mutants(inputs, "mutate_field"):
        (ours_new, _), (pb_new, _) = readers(after)
        a = values(at(ours_new, m.path), m.field, True)
        b = values(at(pb_new, m.path), m.field, False)
        if m.detail["out_of_range"]:
            out_of_range += 1
            # A closed enum keeps the value out of the field: both readers see it absent.
            assert a == b == []
            from google.protobuf.unknown_fields import UnknownFieldSet
            number = type(at(ours_new, m.path))._fields[m.field].number
            unknown = [(f.field_number, f.data) for f in UnknownFieldSet(at(pb_new, m.path))]
            assert (number, m.detail["value"] & ((1 << 64) - 1)) in unknown
            assert _wire_has(after, m)
        else:
            assert a == b and len(a) >= 1
            i = m.detail["index"]
            value = a[i if i >= 0 else 0]
            expected = _plain(m.detail["value"])
            if isinstance(expected, float) and type(at(ours_new, m.path))._fields[m.field].kind == FLOAT:
                expected = to_float32(expected)
            assert value == expected or (isinstance(value, float) and expected == "nan")
        rest_equal(before, after, m.path, m.field)
    assert out_of_range > 0


def _wire_has(data: bytes, m) -> bool:
    """The edited message's bytes hold the field with the out-of-range value (our raw reader)."""
    ours = irmodel.loads(data)
    msg = at(ours, m.path)
    spec = type(msg)._fields[m.field]
    probe = type(msg)()
    probe.MergeFrom(msg)
    raw = probe.SerializeToString()
    return encode_varint(spec.number << 3) + encode_varint(m.detail["value"] & ((1 << 64) - 1)) in raw


def test_copy_field_makes_the_target_equal_to_the_source(inputs):
    for before, after, m in mutants(inputs, "copy_field"):
        src_path, src_name, src_index = m.detail["source"]
        for (old, ours), (new, _) in zip(readers(before), readers(after)):
            source = values(at(old, src_path), src_name, ours)[src_index if src_index >= 0 else 0]
            assert values(at(new, m.path), m.field, ours) == [source]
        rest_equal(before, after, m.path, m.field)


def test_clone_field_appends_a_copy_of_a_value_of_the_same_type(inputs):
    for before, after, m in mutants(inputs, "clone_field"):
        src_path, src_name, src_index = m.detail["source"]
        for (old, ours), (new, _) in zip(readers(before), readers(after)):
            source = values(at(old, src_path), src_name, ours)[src_index if src_index >= 0 else 0]
            a, b = values(at(old, m.path), m.field, ours), values(at(new, m.path), m.field, ours)
            assert b == a + [source]
        rest_equal(before, after, m.path, m.field)


def test_crossover_takes_one_field_from_the_other_input(inputs):
    found = 0
    for seed in SEEDS:
        a, b = inputs[seed % len(inputs)], inputs[(seed + 1) % len(inputs)]
        ma = irmodel.loads(a)
        m = structure.crossover_messages(ma, irmodel.loads(b), FastRandom(seed))
        if m is None:
            continue
        found += 1
        after = ma.SerializeToString()
        src_path, src_name, src_index = m.detail["source"]
        for (old, ours), (new, _), (donor, _) in zip(readers(a), readers(after), readers(b)):
            source = values(at(donor, src_path), src_name, ours)[src_index if src_index >= 0 else 0]
            got = values(at(new, m.path), m.field, ours)
            if m.detail["index"] < 0:
                assert got == [source]
            else:
                assert got == values(at(old, m.path), m.field, ours) + [source]
        rest_equal(a, after, m.path, m.field)
    assert found >= len(SEEDS) // 2


def test_every_kind_applies_to_the_sample_model(inputs):
    for kind in OPERATIONS:
        assert any(True for _ in mutants(inputs[:1], kind)), kind


def test_post_processors_keep_versions_plausible_and_names_defined(inputs):
    mutator = StructureMutator()
    newest = irmodel.defs.onnx_opset_version()
    for seed in range(60):
        data = inputs[seed % len(inputs)]
        for _ in range(3):
            data, _m = mutator.mutant(data, FastRandom(seed))
        model = irmodel.loads(data)
        assert 3 <= model.ir_version <= irmodel.IR_VERSION
        default = [o.version for o in model.opset_import if o.domain in ("", "ai.onnx")]
        assert default and all(1 <= v <= newest for v in default)
        g = model.graph
        defined = {vi.name for vi in g.input} | {t.name for t in g.initializer}
        for node in g.node:
            assert all(not n or n in defined for n in node.input) or not defined
            defined.update(node.output)


@pytest.mark.parametrize("module", [structure, wire, onnx_schema])
def test_atheris_callables_are_deterministic_and_respect_max_size(module, inputs):
    a, b = inputs[0], inputs[1]
    for seed in range(20):
        m1 = module.custom_mutator(a, 4096, seed)
        assert m1 == module.custom_mutator(a, 4096, seed)
        assert len(m1) <= 4096
        c1 = module.custom_crossover(a, b, 1 << 16, seed)
        assert c1 == module.custom_crossover(a, b, 1 << 16, seed)
        assert len(c1) <= 1 << 16
        assert len(module.custom_mutator(a, 100, seed)) <= 100


def test_structure_mutants_and_crossovers_of_decodable_inputs_always_decode(inputs):
    for seed in range(40):
        a, b = inputs[seed % len(inputs)], inputs[(seed + 1) % len(inputs)]
        for data in (structure.custom_mutator(a, 1 << 20, seed), structure.custom_crossover(a, b, 1 << 20, seed)):
            pb(data)
            irmodel.loads(data).SerializeToString()


def test_schema_aware_wire_crossover_of_models_decodes_in_both_readers(inputs):
    for seed in range(40):
        data = onnx_schema.custom_crossover(inputs[seed % 4], inputs[(seed + 2) % 4], 1 << 20, seed)
        pb(data)
        assert irmodel.loads(data).SerializeToString()


def test_schemaless_wire_crossover_keeps_the_wire_format_well_formed(inputs):
    from google.protobuf import empty_pb2

    for seed in range(40):
        a, b = inputs[seed % 4], inputs[(seed + 2) % 4]
        data = wire.custom_crossover(a, b, 1 << 20, seed)
        empty_pb2.Empty.FromString(data)  # every field at the top level parses (all unknown)
        assert len(data) > len(a)


def test_undecodable_input_gets_a_wire_mutant():
    data = b"\x0a\xff\xff\xff\x0f"  # a length past the end
    out = structure.custom_mutator(data, 64, 3)
    assert out == structure.custom_mutator(data, 64, 3) and len(out) <= 64


def test_our_decoder_checker_and_inference_raise_only_our_errors_on_mutants(inputs):
    ours = (DecodeError, irmodel.ValidationError)
    for seed in range(80):
        data = inputs[seed % len(inputs)]
        mutant = (structure.custom_mutator if seed % 2 else onnx_schema.custom_mutator)(data, 1 << 20, seed)
        try:
            model = irmodel.loads(mutant)
            irmodel.check_model(model, full_check=True)
        except ours:
            pass
        try:
            irmodel.infer_shapes(mutant, check_type=True)
        except ours:  # InferenceError is a ValidationError
            pass


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ist.messages("ModelProto", max_depth=2))
def test_any_message_of_the_schema_is_read_alike_by_both_readers(model):
    data = model.SerializeToString()
    assert pb(data).SerializeToString() == irmodel.loads(data).SerializeToString()


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ist.valid_models(max_nodes=4))
def test_the_valid_model_strategy_gives_valid_models(model):
    irmodel.check_model(model, full_check=True)


def test_importing_the_fuzz_modules_does_not_import_hypothesis():
    code = ("import sys, irmodel.fuzz.structure, irmodel.fuzz.generate, irmodel.fuzz.wire; "
            "print('hypothesis' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_input_malformed_where_read_late_gets_a_wire_mutant_not_an_exception():
    """Packed float_data of 3 bytes in an initializer: the model decodes, the field fails
    only when a mutation reads it (found by the plain-loop smoke campaign)."""
    tensor = b"\x22\x03abc"  # TensorProto.float_data, packed, not a multiple of 4 bytes
    graph = b"\x2a" + bytes([len(tensor)]) + tensor  # GraphProto.initializer
    model = b"\x08\x08\x3a" + bytes([len(graph)]) + graph  # ir_version 8, ModelProto.graph
    with pytest.raises(DecodeError):
        list(irmodel.loads(model).graph.initializer[0].float_data)
    for seed in range(200):
        out = structure.custom_mutator(model, 4096, seed)
        assert isinstance(out, bytes) and len(out) <= 4096
        out = structure.custom_crossover(model, model, 4096, seed)
        assert isinstance(out, bytes) and len(out) <= 4096


def test_input_with_a_string_that_is_not_utf8_gets_a_mutant_not_an_exception():
    """proto2 strings may hold any bytes on the wire; copying one into a field whose setter
    checks UTF-8 must not escape as UnicodeDecodeError (found by the smoke campaign)."""
    node = b"\x0a\x01x" + b"\x12\x01y" + b"\x1a\x03n\xf4\x28" + b"\x22\x04Relu"  # name: bad UTF-8
    graph = b"\x0a" + bytes([len(node)]) + node + b"\x12\x03\xf4\x28g"  # graph name: bad UTF-8
    model = b"\x08\x08\x3a" + bytes([len(graph)]) + graph + b"\x42\x02\x10\x11"
    for seed in range(300):
        for kind in ("copy_field", "clone_field", None):
            out, _ = structure.StructureMutator(seed).mutant(model, kind=kind)
            assert isinstance(out, bytes)
        assert isinstance(structure.custom_mutator(model, 4096, seed), bytes)
        assert isinstance(structure.custom_crossover(model, model, 4096, seed), bytes)
