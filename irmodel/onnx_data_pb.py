"""onnx.onnx_data_pb: the messages of ``onnx-data.proto`` (see `irmodel.onnx_pb`)."""

from __future__ import annotations

from .messages import MapProto, OptionalProto, SequenceProto  # noqa: F401
