"""The ONNX schema, for the fuzzers: the one place that knows where irmodel keeps it.

The registry of ONNX messages may move or be renamed; every fuzzing module that needs it
calls `onnx_registry` instead of importing it.
"""

from __future__ import annotations

from wirefmt import Registry

from .wire import WireMutator

#: The message type of an ONNX model file.
MODEL_TYPE = "ModelProto"


def onnx_registry() -> Registry:
    """The wirefmt registry of every ONNX message (onnx.proto, onnx-data, onnx-operators)."""
    from irmodel.proto import REGISTRY  # noqa: PLC0415  (the only import of it in irmodel.fuzz)
    return REGISTRY


def model_mutator(**options) -> WireMutator:
    """A schema-aware `WireMutator` for ONNX model files (options as `WireMutator`'s)."""
    return WireMutator(onnx_registry(), MODEL_TYPE, **options)
