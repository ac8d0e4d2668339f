"""Normalised type strings (``FormalParameter.types``) against onnx's, on generated strings.

onnx normalises a parameter's type string when a schema is made (``OpSchema(...)``);
ours does the same on the text (`irmodel.defs.normalize_type_str`).  Both must accept the
same strings, spell them the same, and refuse the others with ValueError.
"""

from __future__ import annotations

import onnx.defs
from hypothesis import given, settings
from hypothesis import strategies as st

from irmodel import defs

ELEMENTS = sorted(defs.typestrings.ELEM_CODES) + ["T", "floaty", ""]
_space = st.sampled_from(["", " ", "  "])


def _wrap(kind: str, inner: st.SearchStrategy) -> st.SearchStrategy:
    return st.tuples(_space, _space, inner, _space).map(lambda p: f"{p[0]}{kind}{p[1]}({p[2]}){p[3]}")


_element = st.sampled_from(ELEMENTS)
_leaf = st.one_of(_element, _wrap("tensor", _element), _wrap("sparse_tensor", _element),
                  st.tuples(_space, _element, _space).map("".join))
TYPE_STRINGS = st.recursive(_leaf, lambda inner: st.one_of(
    _wrap("seq", inner), _wrap("optional", inner),
    st.tuples(_element, _space, inner).map(lambda p: f"map({p[0]},{p[1]}{p[2]})")), max_leaves=4)


def _reference(type_str: str):
    try:
        schema = onnx.defs.OpSchema("DDNorm", "", 1, inputs=[onnx.defs.OpSchema.FormalParameter("a", type_str)])
    except ValueError:
        return None
    return schema.inputs[0].types


def _ours(type_str: str):
    try:
        schema = defs.OpSchema("DDNorm", "", 1, inputs=[defs.OpSchema.FormalParameter("a", type_str)])
    except ValueError:
        return None
    return schema.inputs[0].types


@settings(max_examples=150, deadline=None)
@given(TYPE_STRINGS)
def test_type_strings_normalise_as_onnx(type_str):
    assert _ours(type_str) == _reference(type_str)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="seqmaptnsorfloaiuv(), 1268", max_size=24))
def test_any_text_is_normalised_or_refused_with_value_error(text):
    try:
        defs.normalize_type_str(text)
    except ValueError:
        pass


def test_every_allowed_type_of_every_schema_normalises_as_onnx():
    for schema in onnx.defs.get_all_schemas_with_history():
        for c in schema.type_constraints:
            for t in c.allowed_type_strs:
                assert {defs.normalize_type_str(t)} == _reference(t), (schema.name, t)
