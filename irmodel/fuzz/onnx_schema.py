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


_MODEL_MUTATOR: WireMutator | None = None


def _model_mutator() -> WireMutator:
    global _MODEL_MUTATOR
    if _MODEL_MUTATOR is None:
        _MODEL_MUTATOR = model_mutator()
    return _MODEL_MUTATOR


def custom_mutator(data: bytes, max_size: int, seed: int) -> bytes:
    """atheris ``custom_mutator`` over ONNX model bytes: schema-aware wire mutations."""
    return _model_mutator().mutate(data, seed, max_size=max_size).data


def custom_crossover(data1: bytes, data2: bytes, max_size: int, seed: int) -> bytes:
    """atheris ``custom_crossover`` over ONNX model bytes: a field of one spliced into a message
    of the same type in the other."""
    return _model_mutator().crossover(data1, data2, seed, max_size)
