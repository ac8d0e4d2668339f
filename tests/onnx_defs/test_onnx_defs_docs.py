"""Doc strings of the schemas: the committed file is what the generator makes, and every
schema's ``doc`` is onnx's."""

from __future__ import annotations

import os

import onnx.defs

from irmodel import defs
from irmodel.defs import docs

from generated_files import assert_generated_file_is_current  # noqa: E402


def test_regenerating_the_docs_gives_the_committed_file_byte_for_byte():
    assert docs.DOCS_FILE.endswith(os.path.join("irmodel", "defs", "opschema_docs.json"))
    assert_generated_file_is_current("gen_opschema_docs.py")


# That the docs file ships: tests/defs/test_defs.py (every table of defs/ is declared package
# data) and tests/test_wheel.py (it is in the installed wheel).


def test_every_schema_has_onnx_doc():
    ours = {(s.domain, s.name, s.since_version): s.doc for s in defs.get_all_schemas_with_history()}
    ref = {(s.domain, s.name, s.since_version): s.doc for s in onnx.defs.get_all_schemas_with_history()}
    assert ours == ref


def test_a_constructed_schema_has_the_doc_it_was_given_as_onnx():
    for doc in ("", "what it does"):
        assert defs.OpSchema("x", "", 1, doc).doc == onnx.defs.OpSchema("x", "", 1, doc).doc


def test_the_contrib_schemas_have_no_doc():
    assert {s.doc for s in defs.get_contrib_schemas()} == {None}
