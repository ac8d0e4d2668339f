"""Every public name of onnx's pure-Python modules exists in irmodel under the same path,
with the same parameters and defaults, except what docs/differences.md lists.

The names come from the installed reference by introspection (``__all__``, plus every
function or class a module defines under a public name), so a new onnx release's names
show up here by themselves.  The expected absences are the rows of docs/differences.md
whose first cell is a backticked ``onnx.`` path.
"""

from __future__ import annotations

import __future__
import importlib
import inspect
import os
import re
import types

import pytest

import irmodel

DIFFERENCES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                           "docs", "differences.md")
MODULES = ["onnx", "onnx.helper", "onnx.numpy_helper", "onnx.external_data_helper", "onnx.serialization",
           "onnx.model_container", "onnx.onnx_pb", "onnx.onnx_data_pb", "onnx.onnx_operators_pb"]
_ROW = re.compile(r"^\|\s*`(onnx(?:\.\w+)+)`\s*\|")


def _public_names(module: types.ModuleType) -> list[str]:
    """``__all__``, and every public name the module itself defines: its functions and
    classes (cached ones too), its constants and type aliases; not what it imported
    (modules, other modules' functions and classes, ``typing``'s forms, ``__future__``).
    An alias module of protobuf's generated code (``onnx_pb``) defines nothing itself:
    all it re-exports counts (messages, enums, constants, ``DESCRIPTOR``)."""
    names = set(getattr(module, "__all__", ()))
    alias_module = module.__name__.endswith("_pb")
    for name, value in vars(module).items():
        if name.startswith("_") or name == "TYPE_CHECKING" or isinstance(value, (types.ModuleType, __future__._Feature)):
            continue
        defined_in = getattr(value, "__module__", None)
        if alias_module:
            names.add(name)
        elif callable(value) and not isinstance(value, (types.GenericAlias, types.UnionType)):
            if defined_in == module.__name__:
                names.add(name)
        elif defined_in != "typing":
            names.add(name)
    return sorted(names)


def _reference_names() -> list[str]:
    out = []
    for modname in MODULES:
        module = importlib.import_module(modname)
        out.extend(f"{modname}.{n}" for n in _public_names(module))
    # onnx's shorter aliases of load_model, save_model and load_model_from_string.
    out.extend(f"onnx.{n}" for n in ("load", "save", "load_from_string"))
    return sorted(set(out))


def _listed_absences() -> set[str]:
    with open(DIFFERENCES, encoding="utf-8") as f:
        return {m.group(1) for line in f if (m := _ROW.match(line))}


def _ours(path: str):
    """The irmodel object at onnx's ``path`` (AttributeError when absent)."""
    parts = path.split(".")[1:]
    obj = irmodel
    for part in parts:
        obj = getattr(obj, part)
    return obj


REFERENCE = _reference_names()


def test_every_public_name_is_present_or_listed_as_a_difference():
    listed = _listed_absences()
    missing = []
    for path in REFERENCE:
        try:
            _ours(path)
        except (AttributeError, ImportError):
            if path not in listed:
                missing.append(path)
    assert not missing, f"{len(missing)} of onnx's {len(REFERENCE)} public names are missing: {missing}"


def test_every_listed_absence_is_really_absent():
    present = []
    for path in sorted(_listed_absences()):
        try:
            _ours(path)
        except (AttributeError, ImportError):
            continue
        present.append(path)
    assert not present, f"docs/differences.md lists these as missing, but irmodel has them: {present}"


def _parameters(fn) -> list[inspect.Parameter] | None:
    try:
        return list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return None


@pytest.mark.parametrize("path", [p for p in REFERENCE if p.split(".")[-1] not in ("TYPE_CHECKING",)])
def test_functions_take_onnxs_parameters_with_onnxs_defaults(path):
    """onnx's parameters come first, in order, with the same names, kinds and defaults;
    irmodel may add parameters after them only with defaults (so no onnx call breaks)."""
    reference = importlib.import_module(path.rsplit(".", 1)[0])
    theirs = getattr(reference, path.rsplit(".", 1)[1])
    if not inspect.isfunction(theirs) or path in _listed_absences():
        return
    ours = _ours(path)
    expected, got = _parameters(theirs), _parameters(ours)
    assert expected is not None and got is not None
    assert [(p.name, p.kind, p.default) for p in got[:len(expected)]] == \
        [(p.name, p.kind, p.default) for p in expected], f"{path}: {inspect.signature(ours)}"
    extra = got[len(expected):]
    assert all(p.default is not inspect.Parameter.empty or p.kind == p.VAR_KEYWORD for p in extra), path


@pytest.mark.parametrize("name", ["helper", "numpy_helper", "external_data_helper", "serialization",
                                  "model_container", "checker", "defs"])
def test_submodules_are_attributes_of_the_package_as_in_onnx(name):
    module = getattr(irmodel, name)
    assert module is importlib.import_module(f"irmodel.{name}")


def test_dated_ir_versions_and_onnx_ml_are_onnxs():
    import onnx

    for name in [n for n in dir(onnx) if n.startswith("IR_VERSION")]:
        assert getattr(irmodel, name) == getattr(onnx, name), name
    assert irmodel.ONNX_ML is True
    with pytest.raises(AttributeError):
        irmodel.IR_VERSION_1999_1_1
    with pytest.raises(AttributeError):
        irmodel.no_such_submodule
