"""The encoder over the whole reference corpus: copy-through and full re-encoding.

``dumps(loads(b))`` copies the untouched bytes; ``dumps(from_dict(to_dict(m)))`` builds a
fresh tree with no original bytes at all, so every field is re-encoded by our writer.
Both must give what protobuf gives: the file's own bytes, which protobuf wrote (checked
against the reference's re-serialization too, so a non-canonical file would show up as
a corpus problem, not as ours).
"""

from __future__ import annotations

import pytest

import irmodel

from reference_helpers import reference_message

#: Every test here runs with the generated scanners and with the generic scan loop.
pytestmark = pytest.mark.usefixtures("scan_path")


def _parsed(type_name: str, data: bytes):
    ref = reference_message(type_name)
    ref.ParseFromString(data)
    return ref


def test_copy_through_gives_the_input_back(corpus):
    for name, type_name, data in corpus:
        assert irmodel.dumps(irmodel.loads(data, type_name)) == data, name


@pytest.mark.slow
def test_full_re_encode_gives_the_input_back(corpus):
    for name, type_name, data in corpus:
        rebuilt = irmodel.from_dict(irmodel.to_dict(irmodel.loads(data, type_name)), type_name)
        assert rebuilt._start < 0  # nothing to copy: every byte below comes from the encoder
        assert irmodel.dumps(rebuilt) == data, name


def test_the_corpus_is_canonical_protobuf(corpus):
    for name, type_name, data in corpus:
        assert _parsed(type_name, data).SerializeToString() == data, name


def test_full_re_encode_through_camel_case_keys(node_corpus):
    from google.protobuf import json_format

    for name, data in node_corpus[::10]:
        ref = _parsed("ModelProto", data)
        camel = json_format.MessageToDict(ref)  # lowerCamelCase keys, as protobuf writes by default
        assert irmodel.dumps(irmodel.from_dict(camel, "ModelProto")) == data, name
