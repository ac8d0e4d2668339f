"""wirefmt: a generic, standard-library-only protobuf wire-format codec.

It knows nothing of ONNX.  Readers work over any buffer (bytes, memoryview, mmap) by
offset; writers produce canonical bytes (what protobuf's own serializer emits).
"""

from .errors import DecodeError, EncodeError
from .limits import MAX_DEPTH, MAX_FIELD_NUMBER, MAX_VARINT_BYTES
from .reader import Field, iter_fields, read_field, read_tag, skip_group, unpack_fixed, unpack_varints
from .schema import EnumSpec, FieldSpec, MessageSpec, Registry
from .varint import encode_varint, read_varint, zigzag_decode, zigzag_encode
from .writer import StreamWriter, encode_packed_body, encode_scalar, tag

__all__ = [
    "DecodeError", "EncodeError", "MAX_DEPTH", "MAX_FIELD_NUMBER", "MAX_VARINT_BYTES", "Field",
    "iter_fields", "read_field", "read_tag", "skip_group", "unpack_fixed", "unpack_varints",
    "EnumSpec", "FieldSpec", "MessageSpec", "Registry", "encode_varint", "read_varint",
    "zigzag_decode", "zigzag_encode", "StreamWriter", "encode_packed_body", "encode_scalar", "tag",
]
