#!/usr/bin/python3
"""OSS-Fuzz harness: our checker on any bytes.  It may refuse them (DecodeError) or report
problems (ValidationError); any other exception is a bug."""

import sys

import _harness

with _harness.instrumented():
    import irmodel


def TestOneInput(data: bytes) -> None:
    try:
        irmodel.check_model(irmodel.loads(data))
    except (irmodel.DecodeError, irmodel.ValidationError):
        pass


if __name__ == "__main__":
    sys.exit(_harness.main(TestOneInput))
