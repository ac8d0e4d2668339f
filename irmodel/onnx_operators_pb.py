"""onnx.onnx_operators_pb: the messages of ``onnx-operators.proto`` (see `irmodel.onnx_pb`)."""

from __future__ import annotations

from .messages import OperatorProto, OperatorSetProto  # noqa: F401
