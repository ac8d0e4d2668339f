"""wirefmt: a generic, standard-library-only protobuf runtime without generated code.

It knows nothing of ONNX and opens no files.  A schema written as data (`MessageSpec`,
`FieldSpec`, `EnumSpec` in a `Registry`) gives lazy, copy-on-write message classes
(`build_classes`) that read any buffer (bytes, memoryview, mmap) by offset, encode
canonically (byte-identical to protobuf's serializer), and convert to and from
protobuf's JSON dict form.  Below that sit the schema-free layers: varints, field
reading, canonical value encoding, a streaming writer and a ``protoc --decode_raw``
style dump.
"""

from __future__ import annotations

from .encoder import dumps_message, write_message
from .enumtype import EnumType
from .errors import DecodeError, EncodeError, ParseError
from .jsonform import from_dict, to_dict
from .limits import MAX_DEPTH, MAX_FIELD_NUMBER, MAX_VARINT_BYTES
from .message import Message, build_classes
from .reader import Field, iter_fields, read_field, read_tag, skip_group, unpack_fixed, unpack_varints
from .scan import use_generated_scanners
from .schema import EnumSpec, FieldSpec, MessageSpec, Registry
from .varint import encode_varint, read_varint, zigzag_decode, zigzag_encode
from .writer import SpanCopier, StreamWriter, encode_packed_body, encode_scalar, tag

__all__ = [
    "DecodeError", "EncodeError", "ParseError", "MAX_DEPTH", "MAX_FIELD_NUMBER", "MAX_VARINT_BYTES",
    "Field", "iter_fields", "read_field", "read_tag", "skip_group", "unpack_fixed", "unpack_varints",
    "EnumSpec", "FieldSpec", "MessageSpec", "Registry", "encode_varint", "read_varint",
    "zigzag_decode", "zigzag_encode", "SpanCopier", "StreamWriter", "encode_packed_body",
    "encode_scalar", "tag", "Message", "build_classes", "EnumType", "use_generated_scanners",
    "dumps_message", "write_message", "to_dict", "from_dict",
]
