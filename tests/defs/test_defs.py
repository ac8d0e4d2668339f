"""irmodel.defs against onnx.defs: the committed table, every field of every schema, lookups.

Expected values all come from the installed reference (onnx==1.23.2); nothing is pasted.
"""

from __future__ import annotations

import configparser
import fnmatch
import json
import os
import subprocess
import sys

import onnx
import onnx.defs
import pytest

import irmodel
from irmodel import defs
from irmodel.defs import registry

from repo_paths import REPO as ROOT  # noqa: E402
from generated_files import assert_generated_file_is_current  # noqa: E402


@pytest.fixture(scope="module")
def reference() -> dict:
    """onnx's schemas by (domain, name, since_version)."""
    return {(s.domain, s.name, s.since_version): s
            for s in onnx.defs.get_all_schemas_with_history()}


@pytest.fixture(scope="module")
def max_version() -> int:
    return max(hi for _lo, hi in onnx.defs.C.schema_version_map().values())


# -- (a) the committed table is what the generator makes from the installed reference -------

def test_regenerating_the_table_gives_the_committed_file_byte_for_byte():
    assert registry.DATA_FILE.endswith(os.path.join("irmodel", "defs", "opschemas.json"))
    assert_generated_file_is_current("gen_opschemas.py")


def test_the_table_records_the_reference_release_it_came_from():
    assert defs.reference_version() == onnx.__version__


def test_the_data_file_is_declared_as_package_data():
    config = configparser.ConfigParser()
    config.read(os.path.join(ROOT, "setup.cfg"))
    declared = config["options.package_data"]["irmodel.defs"].replace(",", " ").split()
    folder = os.path.dirname(defs.__file__)
    tables = [f for f in os.listdir(folder) if f.endswith(".json")]
    assert os.path.basename(registry.DATA_FILE) in tables and len(tables) >= 2
    # Every table the package reads ships in the wheel (tests/test_wheel.py checks the wheel).
    assert all(any(fnmatch.fnmatch(f, pattern) for pattern in declared) for f in tables), (tables, declared)
    assert os.path.dirname(registry.DATA_FILE) == os.path.dirname(defs.__file__)


# -- (b) every field of every schema equals onnx.defs' ----------------------------------------

def _dump(message) -> bytes:
    return irmodel.dumps(message)


def _param_fields(p, ref: bool) -> tuple:
    if ref:
        return (p.name, p.type_str, p.option.value, p.is_homogeneous, p.min_arity,
                p.differentiation_category.value)
    return (p.name, p.type_str, p.option, p.is_homogeneous, p.min_arity,
            p.differentiation_category)


def _differences(ours, ref, max_version: int) -> list:
    """Every field of DEFS_API.md on which ``ours`` and onnx's ``ref`` disagree."""
    out = []

    def check(field, a, b):
        if a != b:
            out.append(f"{ref.domain}:{ref.name}-{ref.since_version} {field}: "
                       f"{repr(a)[:100]} != {repr(b)[:100]}")

    for field in ("name", "domain", "since_version", "deprecated", "min_input", "max_input",
                  "min_output", "max_output", "has_type_and_shape_inference_function",
                  "has_data_propagation_function", "has_function",
                  "has_context_dependent_function", "non_deterministic"):
        check(field, getattr(ours, field), getattr(ref, field))
    check("support_level", ours.support_level, ref.support_level.value)
    check("node_determinism", ours.node_determinism, ref.node_determinism.value)
    check("inputs", [_param_fields(p, False) for p in ours.inputs],
          [_param_fields(p, True) for p in ref.inputs])
    check("outputs", [_param_fields(p, False) for p in ours.outputs],
          [_param_fields(p, True) for p in ref.outputs])
    check("type_constraints",
          [(c.type_param_str, c.allowed_type_strs) for c in ours.type_constraints],
          [(c.type_param_str, list(c.allowed_type_strs)) for c in ref.type_constraints])
    for c in ref.type_constraints:
        found = ours.type_constraint(c.type_param_str)
        check(f"type_constraint({c.type_param_str!r})",
              found and (found.type_param_str, found.allowed_type_strs),
              (c.type_param_str, list(c.allowed_type_strs)))
    check("attributes (names, in order)", list(ours.attributes), list(ref.attributes))
    for name, ra in ref.attributes.items():
        oa = ours.attributes.get(name)
        if oa is None:
            continue
        check(f"attribute {name}", (oa.name, oa.type, oa.required),
              (ra.name, ra.type.value, ra.required))
        check(f"attribute {name} default_value", _dump(oa.default_value),
              ra.default_value.SerializeToString())
    check("function_opset_versions", ours.function_opset_versions,
          tuple(ref.function_opset_versions))
    check("context_dependent_function_opset_versions",
          ours.context_dependent_function_opset_versions,
          tuple(ref.context_dependent_function_opset_versions))
    check("all_function_opset_versions", ours.all_function_opset_versions,
          tuple(ref.all_function_opset_versions))
    body = ours.function_body
    check("function_body", None if body is None else _dump(body),
          ref.function_body.SerializeToString() if ref.has_function else None)
    for v in range(0, max_version + 2):
        body = ours.get_function_with_opset_version(v)
        check(f"get_function_with_opset_version({v})", b"" if body is None else _dump(body),
              ref.get_function_with_opset_version(v))
    return out


def test_the_table_holds_exactly_the_schemas_onnx_registers(reference):
    ours = [(s.domain, s.name, s.since_version) for s in defs.get_all_schemas_with_history()]
    assert ours == sorted(reference)
    assert len(ours) == len(set(ours))


def test_every_field_of_every_schema_equals_onnx(reference, max_version):
    problems = []
    for (domain, name, version), ref in reference.items():
        problems += _differences(defs.get_schema(name, version, domain), ref, max_version)
    assert problems == [], "\n".join(problems[:30])


def test_get_all_schemas_gives_the_newest_version_of_each_op():
    ours = sorted((s.domain, s.name, s.since_version) for s in defs.get_all_schemas())
    ref = sorted((s.domain, s.name, s.since_version) for s in onnx.defs.get_all_schemas())
    assert ours == ref


def test_opset_versions_and_domain_ranges_equal_onnx():
    assert defs.onnx_opset_version() == onnx.defs.onnx_opset_version()
    assert defs.onnx_ml_opset_version() == onnx.defs.onnx_ml_opset_version()
    version_map = onnx.defs.C.schema_version_map()
    for domain, expected in version_map.items():
        assert defs.domain_version_range(domain) == tuple(expected)
    for domain in ("ai.onnx", "com.microsoft", "x"):
        assert domain not in version_map
        assert defs.domain_version_range(domain) is None


def test_domain_constants_equal_onnx():
    for name in ("ONNX_DOMAIN", "ONNX_ML_DOMAIN", "AI_ONNX_PREVIEW_DOMAIN",
                 "AI_ONNX_PREVIEW_TRAINING_DOMAIN"):
        assert getattr(defs, name) == getattr(onnx.defs, name)


def test_enum_codes_equal_onnx():
    pairs = [(defs.FormalParameterOption, onnx.defs.OpSchema.FormalParameterOption),
             (defs.DifferentiationCategory, onnx.defs.OpSchema.DifferentiationCategory),
             (defs.SupportType, onnx.defs.OpSchema.SupportType),
             (defs.NodeDeterminism, onnx.defs.OpSchema.NodeDeterminism)]
    for ours, ref in pairs:
        assert {m.name: m.value for m in ours} == {k: v.value for k, v in ref.__members__.items()}


def test_is_infinite_agrees_with_onnx(reference):
    values = {s.max_input for s in reference.values()} | {s.max_output for s in reference.values()}
    for v in values | {0, 1, -1}:
        assert defs.OpSchema.is_infinite(v) == onnx.defs.OpSchema.is_infinite(v)


# -- (c) get_schema / has_schema over a grid, what they return and what they raise ------------

def _lookup(get, *args):
    """``("ok", domain, name, since_version)`` or ``("error", message)``."""
    try:
        s = get(*args)
    except (onnx.defs.SchemaError, defs.SchemaError) as exc:
        return ("error", str(exc))
    return ("ok", s.domain, s.name, s.since_version)


def test_get_schema_and_has_schema_agree_with_onnx_over_a_grid(reference, max_version):
    names = sorted({name for _d, name, _v in reference} | {"NoSuchOp", "conv", ""})
    # com.microsoft is irmodel's second table (onnxruntime's contrib schemas): tests/defs/test_contrib_defs.py
    domains = sorted({d for d, _n, _v in reference}) + ["ai.onnx", "com.example", "ONNX"]
    versions = list(range(-1, max_version + 2)) + [2**31 - 1, -2**31]
    mismatches = []
    for domain in domains:
        for name in names:
            calls = [(name, v, domain) for v in versions] + [(name, domain)]
            for args in calls:
                ref = _lookup(onnx.defs.get_schema, *args)
                if _lookup(defs.get_schema, *args) != ref:
                    mismatches.append(("get_schema", args))
                if defs.has_schema(*args) != onnx.defs.has(*args):
                    mismatches.append(("has_schema", args))
    assert mismatches == [], mismatches[:20]


def test_keyword_arguments_and_defaults_agree_with_onnx():
    cases = [((), {"op_type": "Conv", "max_inclusive_version": 10, "domain": ""}),
             (("LabelEncoder",), {"domain": "ai.onnx.ml"}),
             (("LabelEncoder", 3), {"domain": "ai.onnx.ml"}),
             (("LabelEncoder",), {}),
             (("Conv",), {}),
             (("Conv", True), {})]
    for args, kwargs in cases:
        assert _lookup(lambda: defs.get_schema(*args, **kwargs)) == \
            _lookup(lambda: onnx.defs.get_schema(*args, **kwargs)), (args, kwargs)


def test_a_numpy_integer_version_is_accepted_as_by_onnx():
    np = pytest.importorskip("numpy")
    for v in (np.int64(11), np.int32(5)):
        assert _lookup(defs.get_schema, "Conv", v) == _lookup(onnx.defs.get_schema, "Conv", v)


@pytest.mark.parametrize("args", [
    (None,), (b"Conv",), (1,), ("Conv", 1.0), ("Conv", "1", 1), ("Conv", 2**31),
    ("Conv", -2**31 - 1), ("Conv", 1, None), ("Conv", 1, b""), ("Conv", [1]),
])
def test_arguments_of_the_wrong_type_raise_type_error_as_in_onnx(args):
    with pytest.raises(TypeError):
        onnx.defs.get_schema(*args)
    with pytest.raises(TypeError):
        defs.get_schema(*args)
    with pytest.raises(TypeError):
        onnx.defs.has(*args)
    with pytest.raises(TypeError):
        defs.has_schema(*args)


def test_schema_error_is_a_lookup_error_and_names_what_was_asked():
    with pytest.raises(LookupError) as info:
        defs.get_schema("Conv", 0)
    assert isinstance(info.value, defs.SchemaError)
    with pytest.raises(onnx.defs.SchemaError) as ref:
        onnx.defs.get_schema("Conv", 0)
    assert str(info.value) == str(ref.value)


def test_normalize_domain_maps_only_ai_onnx_to_the_default_domain():
    assert defs.normalize_domain("ai.onnx") == ""
    for d in ("", "ai.onnx.ml", "com.microsoft", "AI.ONNX"):
        assert defs.normalize_domain(d) == d
    assert defs.is_onnx_domain("") and defs.is_onnx_domain("ai.onnx")
    assert not defs.is_onnx_domain("ai.onnx.ml")
    # what the checker does with it: "ai.onnx" finds the default domain's schemas
    assert defs.get_schema("Conv", 11, defs.normalize_domain("ai.onnx")).since_version == \
        onnx.defs.get_schema("Conv", 11, "").since_version


# -- immutability and fresh messages ------------------------------------------------------------

def test_schemas_cannot_be_changed_through_their_fields():
    s = defs.get_schema("Conv", 11)
    with pytest.raises(AttributeError):
        s.since_version = 1
    with pytest.raises(AttributeError):
        s.inputs[0].name = "Y"
    with pytest.raises(TypeError):
        s.attributes["group"] = None
    with pytest.raises(AttributeError):
        del s.type_constraints[0].type_param_str
    assert defs.get_schema("Conv", 11) is s


def test_default_values_and_bodies_are_new_messages_on_each_access():
    attr = defs.get_schema("Conv", 11).attributes["group"]
    first = attr.default_value
    first.i = 7
    assert attr.default_value.i == onnx.defs.get_schema("Conv", 11).attributes["group"].default_value.i
    schema = defs.get_schema("Relu", 14)
    body = schema.function_body
    body.name = "changed"
    assert schema.function_body.name == onnx.defs.get_schema("Relu", 14).function_body.name


# -- (d) import irmodel loads nothing -----------------------------------------------------------

_IMPORT_PROBE = r"""
import json, sys
opened = []
sys.addaudithook(lambda event, args: opened.append(str(args[0])) if event == "open" else None)
import irmodel
result = {"numpy": "numpy" in sys.modules, "defs_imported": "irmodel.defs" in sys.modules}
import irmodel.defs
from irmodel.defs import registry
result["table_after_import"] = registry._table is not None
result["read_after_import"] = any(p.endswith("opschemas.json") for p in opened)
irmodel.defs.has_schema("Relu")
result["table_after_lookup"] = registry._table is not None
result["read_after_lookup"] = any(p.endswith("opschemas.json") for p in opened)
result["numpy_after_lookup"] = "numpy" in sys.modules
print(json.dumps(result))
"""


def test_import_irmodel_reads_no_schema_data_and_imports_no_numpy():
    done = subprocess.run([sys.executable, "-c", _IMPORT_PROBE], capture_output=True, text=True,
                          check=True, cwd=ROOT)
    result = json.loads(done.stdout)
    assert result == {"numpy": False, "defs_imported": False,
                      "table_after_import": False, "read_after_import": False,
                      # the probe sees the load when it happens
                      "table_after_lookup": True, "read_after_lookup": True,
                      "numpy_after_lookup": False}


# -- (e) the first load indexes records by their layout and parses each on request -----------

@pytest.mark.parametrize("path", [registry.DATA_FILE, registry.CONTRIB_DATA_FILE])
def test_the_lazy_index_holds_exactly_the_records_of_the_full_parse(path):
    with open(path, "rb") as f:
        data = f.read()
    lazy = registry._lazy_index(data)
    assert lazy is not None, "the generator's layout is no longer what _lazy_index reads"
    header, index = lazy
    parsed = json.loads(data)
    full = registry._Table(parsed)
    assert header == {k: v for k, v in parsed.items() if k != "schemas"}
    assert list(index) == list(full.index)
    for key, (versions, records) in full.index.items():
        assert index[key][0] == versions
        assert [json.loads(text) for text in index[key][1]] == records
        assert [registry._json_loads(text) for text in index[key][1]] == records


@pytest.mark.parametrize("text", [b'{"a": [1, -2.5e3, true, false, null, "x\\u00e9"]}', b" [] ",
                                  b'"\\ud83d\\ude00"', b"NaN", b"-Infinity", b"12", b"{}"])
def test_the_scanner_reads_json_as_json_loads(text):
    value = registry._json_loads(text)
    assert repr(value) == repr(json.loads(text))


@pytest.mark.parametrize("text", [b"", b"   ", b"[1,]", b'{"a" 1}', b"[1] [2]", b"tru", b"[1, 2"])
def test_the_scanner_refuses_what_json_loads_refuses(text):
    with pytest.raises(ValueError):
        json.loads(text)
    with pytest.raises(ValueError):
        registry._json_loads(text)


def _table_of(tmp_path, data: bytes) -> registry._Table:
    path = tmp_path / "table.json"
    path.write_bytes(data)
    return registry._read_table(str(path))


def _as_dict(table: registry._Table) -> dict:
    return {key: [(v, table.schema_at(entry, i).since_version, table.schema_at(entry, i).name)
                  for i, v in enumerate(entry[0])] for key, entry in table.index.items()}


@pytest.mark.parametrize("edit", ["compact", "escaped-name", "out-of-order", "truncated"])
def test_text_not_laid_out_as_the_generator_does_is_parsed_whole(tmp_path, edit):
    """Whatever the index cannot account for falls back to the full parse, with the same
    table (or the full parse's error), never a table missing a record."""
    with open(registry.DATA_FILE, "rb") as f:
        data = f.read()
    if edit == "compact":
        data = json.dumps(json.loads(data)).encode()
    elif edit == "escaped-name":  # the same name, spelled with a JSON escape
        data = data.replace(b'"name": "Relu",', b'"name": "Rel\\u0075",', 1)
    elif edit == "out-of-order":  # two records swapped
        parsed = json.loads(data)
        first = data.index(b'\n  {\n') + 1
        second = data.index(b'\n  {\n', first) + 1
        third = data.index(b'\n  {\n', second) + 1
        data = data[:first] + data[second:third - 2] + b",\n" + data[first:second - 2] + data[third - 2:]
        assert json.loads(data)["schemas"][0] == parsed["schemas"][1]
    else:
        data = data[:len(data) // 2]
    assert registry._lazy_index(data) is None
    if edit == "truncated":
        with pytest.raises(ValueError):
            _table_of(tmp_path, data)
        return
    table = _table_of(tmp_path, data)
    expected = registry._Table(json.loads(data))
    assert _as_dict(table) == _as_dict(expected)
    if edit == "escaped-name":
        assert ("", "Relu") in table.index
