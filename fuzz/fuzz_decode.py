#!/usr/bin/python3
"""OSS-Fuzz harness: our decoder on any bytes.  The only exception allowed is DecodeError;
anything else (IndexError, RecursionError, a hang...) is a bug.  See fuzz/README.md."""

import sys

import _harness

with _harness.instrumented():
    import irmodel


def TestOneInput(data: bytes) -> None:
    try:
        irmodel.to_dict(irmodel.loads(data))  # every field decoded, as a full walk does
    except irmodel.DecodeError:
        pass


if __name__ == "__main__":
    sys.exit(_harness.main(TestOneInput))
