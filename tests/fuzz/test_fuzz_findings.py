"""What the coverage-guided campaign (fuzz/campaign_atheris.py) found in irmodel, one test
each, failing until fixed (the modules are others': xfail with the reason, strict).

fuzz_ref_diff, 2026-11-26: our decoder refuses nested groups one level sooner than both
reference parsers.  protobuf's recursion limit lets a message hold 100 nested levels below
the root (C++: the depth budget of 100 is spent one per level and refused below zero; upb
the same); wirefmt refuses the 100th.  Found as 100 unknown groups inside a graph output
(campaign reproducer fuzz/findings/atheris-ref-diff-nesting-100.bin); minimal form here.
"""

from __future__ import annotations

import os

import pytest

import irmodel

from repo_paths import REPO as ROOT  # noqa: E402


def _nested_groups(n: int) -> bytes:
    """``n`` nested unknown groups (field 2, wire type 3) at the root of a ModelProto."""
    return b"\x13" * n + b"\x14" * n


def test_the_references_accept_100_nested_groups_and_refuse_101():
    onnx = pytest.importorskip("onnx")
    onnx.ModelProto.FromString(_nested_groups(100))  # upb
    onnx.shape_inference.infer_shapes(_nested_groups(100))  # C++ protobuf parses the bytes
    with pytest.raises(Exception):  # noqa: B017, PT011 - upb's DecodeError
        onnx.ModelProto.FromString(_nested_groups(101))
    with pytest.raises(irmodel.DecodeError):
        irmodel.loads(_nested_groups(101))


@pytest.mark.xfail(strict=True, raises=irmodel.DecodeError,
                   reason="wirefmt refuses nesting one level sooner than protobuf (C++ and upb): "
                          "100 nested groups are refused as 'nesting deeper than 100'")
def test_100_nested_groups_decode_as_protobuf_decodes_them():
    irmodel.to_dict(irmodel.loads(_nested_groups(100)))


@pytest.mark.xfail(strict=True, raises=irmodel.DecodeError,
                   reason="the same off-by-one, as the campaign found it (inside a graph output)")
def test_the_campaign_reproducer_decodes():
    with open(os.path.join(ROOT, "fuzz", "findings", "atheris-ref-diff-nesting-100.bin"), "rb") as f:
        irmodel.loads(f.read())
