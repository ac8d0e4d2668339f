"""onnx's own unit tests, run with ``onnx`` resolved to irmodel (see onnx_suite_runner.py).

One test per file of `SUITE_FILES`: every one of its tests passes, except the failures
docs/differences.md lists; a listed failure that passes now fails this test too, so that
the list stays exact.  The files run once per session, side by side (a few minutes in
all; the first run also fetches onnx's source distribution with pip and caches it).
"""

from __future__ import annotations

import pytest

import onnx_suite_runner as runner


@pytest.fixture(scope="module")
def suite_runs(tmp_path_factory) -> dict:
    return runner.run_files(runner.SUITE_FILES, str(tmp_path_factory.mktemp("onnx-suite")))


@pytest.mark.slow
@pytest.mark.parametrize("file", runner.SUITE_FILES)
def test_onnx_test_file_passes_except_the_documented_differences(file, suite_runs):
    verdict = runner.judge(file, suite_runs[file], runner.expected_failures())
    print(verdict.explain().splitlines()[0])
    assert verdict.outcomes, f"{file} recorded no outcome at all"
    assert verdict.ok, verdict.explain()
