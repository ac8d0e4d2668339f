"""Shared by the tests that register schemas in both registries (onnx's and ours).

onnx's registry cannot forget a domain, nor narrow an opset range it widened, for the
rest of the process; later tests (the schema table's generator among them) read those
ranges.  So the tests register only in domains both know, inside their ranges, and
`ranges_unchanged` (autouse where imported) checks that both registries' ranges are as
they were after each test.
"""

from __future__ import annotations

import onnx.defs
import pytest

from irmodel import defs


@pytest.fixture(autouse=True)
def ranges_unchanged():
    before = (dict(onnx.defs.C.schema_version_map()), defs.schema_version_map())
    yield
    assert (dict(onnx.defs.C.schema_version_map()), defs.schema_version_map()) == before
