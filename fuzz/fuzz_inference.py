#!/usr/bin/python3
"""OSS-Fuzz harness: our shape inference (with data propagation and type checks) on any
bytes.  DecodeError and InferenceError (a ValidationError) are answers; anything else is a bug."""

import sys

import _harness

with _harness.instrumented():
    import irmodel


def TestOneInput(data: bytes) -> None:
    try:
        irmodel.infer_shapes(irmodel.loads(data), check_type=True, data_prop=True)
    except (irmodel.DecodeError, irmodel.ValidationError):
        pass


if __name__ == "__main__":
    sys.exit(_harness.main(TestOneInput))
