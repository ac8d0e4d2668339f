"""wirefmt: a generic, standard-library-only protobuf runtime without generated code.

It knows nothing of ONNX and opens no files.  A schema written as data (`MessageSpec`,
`FieldSpec`, `EnumSpec` in a `Registry`) gives lazy, copy-on-write message classes
(`build_classes`) that read any buffer (bytes, memoryview, mmap) by offset, encode
canonically (byte-identical to protobuf's serializer), and convert to and from
protobuf's JSON dict form.  Below that sit the schema-free layers: varints, field
reading, canonical value encoding, a streaming writer and a ``protoc --decode_raw``
style dump.

The names below are imported from their modules on first use (module ``__getattr__``):
a program that only reads messages never imports the encoder, the writer or the JSON
form, and ``import wirefmt`` costs next to nothing.
"""

from __future__ import annotations

from .errors import DecodeError, EncodeError, ParseError
from .limits import MAX_DEPTH, MAX_FIELD_NUMBER, MAX_VARINT_BYTES

#: Public name -> the submodule that defines it.
_LAZY = {
    "dumps_message": "encoder", "write_message": "encoder",
    "EnumType": "enumtype",
    "from_dict": "jsonform", "to_dict": "jsonform",
    "Message": "message", "build_classes": "message", "exact_span": "message", "item_spans": "message",
    "items_in_buffer": "message", "shared_copy": "message",
    "ItemSources": "itemsource", "adopt_items": "itemsource", "item_sources": "itemsource",
    "Field": "reader", "iter_fields": "reader", "read_field": "reader", "read_tag": "reader",
    "skip_group": "reader", "unpack_fixed": "reader", "unpack_varints": "reader",
    "use_generated_scanners": "scan", "wrap_generated_scanners": "scan", "ScanHints": "scangen",
    "EnumSpec": "schema", "FieldSpec": "schema", "MessageSpec": "schema", "Registry": "schema",
    "encode_varint": "varint", "read_varint": "varint", "zigzag_decode": "varint", "zigzag_encode": "varint",
    "SpanCopier": "writer", "StreamWriter": "writer", "encode_packed_body": "writer", "encode_scalar": "writer",
    "tag": "writer",
}


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(__import__(f"{__name__}.{module}", fromlist=("_",)), name)
    globals()[name] = value
    return value


def __dir__() -> list:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "DecodeError", "EncodeError", "ParseError", "MAX_DEPTH", "MAX_FIELD_NUMBER", "MAX_VARINT_BYTES",
    "Field", "iter_fields", "read_field", "read_tag", "skip_group", "unpack_fixed", "unpack_varints",
    "EnumSpec", "FieldSpec", "MessageSpec", "Registry", "encode_varint", "read_varint",
    "zigzag_decode", "zigzag_encode", "SpanCopier", "StreamWriter", "encode_packed_body",
    "encode_scalar", "tag", "Message", "build_classes", "EnumType", "use_generated_scanners",
    "wrap_generated_scanners", "ScanHints",
    "exact_span", "item_spans", "items_in_buffer", "ItemSources", "item_sources", "adopt_items", "shared_copy",
    "dumps_message", "write_message", "to_dict",
    "from_dict",
]
