"""onnx.onnx_pb: the messages, enums and constants of ``onnx.proto``, under onnx's module name.

For code that imports from ``onnx.onnx_pb`` (or ``onnx_data_pb``/``onnx_operators_pb``, the
other two alias modules): the classes are irmodel's (`irmodel.messages`).  protobuf's
generated ``DESCRIPTOR`` is not here: irmodel has no protobuf descriptors
(docs/differences.md).
"""

from __future__ import annotations

from .messages import CLASSES as _CLASSES, EXPERIMENTAL, STABLE, OperatorStatus, Version  # noqa: F401
from .proto import IR_VERSION  # noqa: F401

#: The messages that live in onnx-data.proto and onnx-operators.proto, not onnx.proto.
_ELSEWHERE = frozenset({"MapProto", "OptionalProto", "SequenceProto", "OperatorProto", "OperatorSetProto"})

globals().update({name: cls for name, cls in _CLASSES.items() if "." not in name and name not in _ELSEWHERE})
globals().update({name: value for name, value in Version.items() if name.startswith("IR_VERSION_")})
