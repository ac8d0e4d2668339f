#!/usr/bin/python3
"""OSS-Fuzz harness: our decoder and protobuf's (upb, via onnx's generated ModelProto) on
the same bytes must accept the same inputs and decode them to the same JSON form.

The known, documented difference is not a finding (`KNOWN`): a group holding a field
numbered 0, which upb skips without looking inside while we (and protobuf's C++ parser,
which onnx's checker and onnxruntime use) refuse it.  Anything else raises
`Disagreement`, which the fuzzer reports as a crash.  See fuzz/RESULTS.md.
"""

import os
import sys

os.environ.setdefault("PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION", "upb")

import _harness

with _harness.instrumented():
    import irmodel
    import onnx
    from google.protobuf import json_format
    from google.protobuf.message import DecodeError as RefDecodeError


class Disagreement(AssertionError):
    """Our decoder and upb disagree on these bytes."""


def known(data: bytes, ours_error: Exception | None, ref_error: Exception | None) -> str | None:
    """The name of the documented difference these outcomes are, if any."""
    if ours_error is not None and ref_error is None and "field number 0" in str(ours_error):
        return "field 0 inside a group: upb accepts, we and C++ protobuf refuse"
    return None


def TestOneInput(data: bytes) -> None:
    ours = ref = ours_error = ref_error = None
    try:
        ours = irmodel.to_dict(irmodel.loads(data))
    except irmodel.DecodeError as exc:
        ours_error = exc
    try:
        ref = json_format.MessageToDict(onnx.ModelProto.FromString(data), preserving_proto_field_name=True)
    except RefDecodeError as exc:
        ref_error = exc
    if (ours_error is None) != (ref_error is None):
        if known(data, ours_error, ref_error) is None:
            raise Disagreement(f"ours: {ours_error or 'accepts'}; upb: {ref_error or 'accepts'}")
    elif ours_error is None and ours != ref:
        raise Disagreement("both accept, decoded differently")


if __name__ == "__main__":
    sys.exit(_harness.main(TestOneInput))
