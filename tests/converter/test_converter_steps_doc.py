"""docs/version-converter-steps.md is what tools/gen_converter_steps.py writes today."""

from __future__ import annotations

from generated_files import assert_generated_file_is_current  # noqa: E402


def test_step_list_is_regenerated_identically():
    assert_generated_file_is_current("gen_converter_steps.py")
