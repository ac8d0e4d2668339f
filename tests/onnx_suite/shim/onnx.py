"""``onnx`` resolved to irmodel, for running onnx's own unit tests against irmodel.

This file is put first on ``PYTHONPATH`` of the subprocess that runs one of onnx's test
files (see ``tests/onnx_suite/onnx_suite_runner.py``).  Importing it makes ``onnx`` *be*
the ``irmodel`` package (``sys.modules["onnx"] is irmodel``) and installs, first on
``sys.meta_path``, a finder that answers every ``onnx.X`` with the module ``irmodel.X``
itself (the same object, not a second copy).  A name irmodel lacks fails:
``import onnx.reference`` raises ``ModuleNotFoundError: No module named
'irmodel.reference'``, and ``from onnx import missing`` raises ``ImportError``.  Nothing
ever falls back to the real onnx, even where it is installed, so a passing test is
irmodel's pass.

The one exception is declared by the runner: ``ONNX_SUITE_STAND_INS`` names submodules
(comma-separated) that a test file imports at its top but irmodel does not have yet.
While ``irmodel.<name>`` cannot be imported, ``onnx.<name>`` is a stand-in module whose
every attribute access raises ``NotImplementedError``, so that the file's other tests
run and only those that use the module fail (docs/differences.md lists them).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import os
import sys
import types

import irmodel

_PREFIX = "onnx."


class _SameModuleLoader(importlib.abc.Loader):
    """Hands the import system an already-imported irmodel module under the onnx name."""

    def __init__(self, module: types.ModuleType) -> None:
        self._module = module
        self._spec = getattr(module, "__spec__", None)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        return self._module

    def exec_module(self, module: types.ModuleType) -> None:
        # module_from_spec set __spec__ to the alias's spec: give irmodel's back, so that
        # the module still knows itself as irmodel.X (pickling, reload, inspect).
        module.__spec__ = self._spec


class _StandIn(types.ModuleType):
    """A module irmodel does not have yet: importable, unusable, and saying so."""

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        raise NotImplementedError(f"irmodel has no {self.__name__.replace('onnx.', 'irmodel.')} yet "
                                  f"(a stand-in of the onnx test runner): {name} is not available")


_STAND_INS = {n for n in os.environ.get("ONNX_SUITE_STAND_INS", "").split(",") if n}


def _irmodel_module(name: str) -> types.ModuleType:
    try:
        return importlib.import_module("irmodel." + name)
    except ModuleNotFoundError as exc:
        if name not in _STAND_INS or exc.name != "irmodel." + name:
            raise
        return _StandIn("onnx." + name)


class _IrmodelFinder(importlib.abc.MetaPathFinder):
    """``onnx.X`` is ``irmodel.X``; anything irmodel lacks is an import error, never onnx's."""

    def find_spec(self, fullname: str, path: object = None, target: object = None):
        if fullname.startswith("irmodel.") and fullname[8:] in _STAND_INS:
            # ``from onnx import X`` asks for ``irmodel.X`` (the package's own name).
            if importlib.machinery.PathFinder.find_spec(fullname, irmodel.__path__) is not None:
                return None
            return importlib.machinery.ModuleSpec(fullname, _SameModuleLoader(_StandIn("onnx." + fullname[8:])))
        if not fullname.startswith(_PREFIX):
            return None
        module = _irmodel_module(fullname[len(_PREFIX):])
        return importlib.machinery.ModuleSpec(fullname, _SameModuleLoader(module))


sys.meta_path.insert(0, _IrmodelFinder())
sys.modules[__name__] = irmodel
