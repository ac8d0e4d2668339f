"""Built-in targets of the differential runner: functions ``(data: bytes) -> digest source``.

Each runs in a worker process (`irmodel.fuzz._worker`), so it may crash or hang.  It
returns what it decoded, in a form comparable across parsers (the runner hashes it), or
None when there is nothing to compare; it raises to reject the input.

The parsers (``ours``, ``upb``, ``protobuf-python``) return the model's JSON form:
`irmodel.to_dict` is protobuf's ``MessageToDict(..., preserving_proto_field_name=True)``,
so equal decodings give equal digests.  (Unknown fields are not part of that form, so a
difference in them alone is not seen as "content differs".)  The checker, the shape
inference and onnxruntime pass the bytes to C++ as they are, so their own parser reads
them, and return nothing to compare.
"""

from __future__ import annotations


def ours(data: bytes):
    """``irmodel.loads`` and a full walk (every field decoded, as `irmodel.to_dict` does)."""
    import irmodel  # noqa: PLC0415  (imported in the worker, not by the runner)

    return irmodel.to_dict(irmodel.loads(data))


def ours_roundtrip(data: bytes):
    """Decode, re-encode every field, decode again: both decodings must be equal.

    Raises `RoundTripError` (not a DecodeError, so the runner counts it as an ``error``,
    a bug of ours) when the second decoding differs from the first or when the re-encoded
    bytes do not decode.  Returns the decoding, like `ours`.
    """
    import irmodel  # noqa: PLC0415

    first = irmodel.to_dict(irmodel.loads(data))
    again = irmodel.from_dict(first)
    encoded = irmodel.dumps(again)
    try:
        second = irmodel.to_dict(irmodel.loads(encoded))
    except irmodel.DecodeError as exc:
        raise RoundTripError(f"re-encoded bytes do not decode: {exc}") from None
    if second != first:
        raise RoundTripError("the re-encoded model decodes differently")
    return first


class RoundTripError(Exception):
    """``ours-roundtrip`` found a model that does not survive decode, encode, decode."""


def protobuf(data: bytes):
    """``onnx.ModelProto.FromString`` with whichever backend the worker's environment selects."""
    import onnx  # noqa: PLC0415
    from google.protobuf import json_format  # noqa: PLC0415

    return json_format.MessageToDict(onnx.ModelProto.FromString(data), preserving_proto_field_name=True)


def protobuf_backend() -> str:
    """The protobuf backend in this process (``upb`` or ``python``)."""
    from google.protobuf.internal import api_implementation  # noqa: PLC0415

    return api_implementation.Type()


def onnx_checker(data: bytes) -> None:
    """``onnx.checker.check_model`` on the bytes (parsed by onnx's C++ protobuf)."""
    import onnx  # noqa: PLC0415

    onnx.checker.check_model(data)


def onnx_full_checker(data: bytes) -> None:
    """``onnx.checker.check_model(full_check=True)``: the checker, then strict shape inference."""
    import onnx  # noqa: PLC0415

    onnx.checker.check_model(data, full_check=True)


def onnx_shape_inference(data: bytes) -> None:
    """``onnx.shape_inference.infer_shapes`` on the bytes."""
    import onnx  # noqa: PLC0415

    onnx.shape_inference.infer_shapes(data)


def onnxruntime_session(data: bytes) -> None:
    """An onnxruntime ``InferenceSession`` created from the bytes (CPU provider)."""
    import onnxruntime  # noqa: PLC0415

    options = onnxruntime.SessionOptions()
    options.log_severity_level = 4
    options.intra_op_num_threads = 1
    onnxruntime.InferenceSession(data, options, providers=["CPUExecutionProvider"])
