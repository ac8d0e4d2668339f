"""Layouts of protobuf messages computed by the reference runtime, for tests of the raw view.

The offset of a field is the serialized size of a message holding only the fields before
it (protobuf writes known fields in field-number order); its header size is the size of a
message holding only that field minus the payload's size.  Used by tests/wirefmt/test_raw.py
and tests/cli/test_cli.py (``irmodel raw``).
"""

from __future__ import annotations

from google.protobuf import descriptor_pb2

from wirefmt.varint import encode_varint


def reference_layout(msg) -> list:
    """``[(number, tag_offset, data_offset, length)]`` of the top-level fields, by the reference.

    Only for messages whose repeated numeric fields are unpacked (or absent).
    """
    cls = type(msg)
    acc = cls()
    out = []
    for fd, value in msg.ListFields():
        repeated = fd.is_repeated
        for v in (value if repeated else [value]):
            one = cls()
            for target in (one, acc):
                if fd.message_type is not None:
                    (getattr(target, fd.name).add() if repeated else getattr(target, fd.name)).CopyFrom(v)
                elif repeated:
                    getattr(target, fd.name).append(v)
                else:
                    setattr(target, fd.name, v)
            field_size = one.ByteSize()
            tag_offset = acc.ByteSize() - field_size
            if fd.message_type is not None:
                length = v.ByteSize()
            elif isinstance(v, (str, bytes)):
                length = len(v.encode() if isinstance(v, str) else v)
            else:  # a scalar: its value is whatever follows the tag
                length = field_size - len(encode_varint(fd.number << 3))
            out.append((fd.number, tag_offset, tag_offset + field_size - length, length))
    return out


def sample_file_descriptor() -> descriptor_pb2.FileDescriptorProto:
    fdp = descriptor_pb2.FileDescriptorProto(name="shapes/geometry.proto", package="demo.geometry",
                                             syntax="proto2")
    fdp.dependency.extend(["google/protobuf/any.proto", "common.proto"])
    point = fdp.message_type.add(name="Point")
    point.field.add(name="x", number=1, type=descriptor_pb2.FieldDescriptorProto.TYPE_DOUBLE,
                    label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL, default_value="1.5")
    point.field.add(name="y", number=2, type=descriptor_pb2.FieldDescriptorProto.TYPE_SINT64,
                    label=descriptor_pb2.FieldDescriptorProto.LABEL_REPEATED, json_name="yy")
    poly = fdp.message_type.add(name="Polygon")
    poly.field.add(name="points", number=7, type_name=".demo.geometry.Point",
                   type=descriptor_pb2.FieldDescriptorProto.TYPE_MESSAGE)
    poly.nested_type.add(name="Meta").field.add(name="tag", number=536870911)
    fdp.enum_type.add(name="Kind").value.add(name="KIND_UNKNOWN", number=-3)
    fdp.options.java_package = "org.example.geometry"
    fdp.options.optimize_for = descriptor_pb2.FileOptions.LITE_RUNTIME
    return fdp
