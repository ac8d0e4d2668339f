#!/usr/bin/python3
"""OSS-Fuzz harness: decode, re-encode every field, decode again; both decodings must be
equal (`irmodel.fuzz.targets.ours_roundtrip` raises RoundTripError otherwise).  Also: the
untouched model must write back its input bytes exactly."""

import sys

import _harness

with _harness.instrumented():
    import irmodel
    from irmodel.fuzz.targets import ours_roundtrip


def TestOneInput(data: bytes) -> None:
    try:
        ours_roundtrip(data)
    except irmodel.DecodeError:
        return
    if irmodel.dumps(irmodel.loads(data)) != data:
        raise AssertionError("an untouched model did not write back its input bytes")


if __name__ == "__main__":
    sys.exit(_harness.main(TestOneInput))
