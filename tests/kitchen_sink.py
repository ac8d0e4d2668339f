"""A test schema using every field kind, defined twice: for the reference (through
protobuf's descriptor API, at test time) and for wirefmt (as declarative specs).

ONNX uses only a few kinds (no sint, no fixed, no bool, no groups, no open enums); this
schema exercises the rest of the generic codec against protobuf itself.
"""

from __future__ import annotations

from wirefmt.schema import KIND_BY_NAME, ENUM, GROUP, MESSAGE, EnumSpec, FieldSpec, MessageSpec, Registry

SCALARS = ["int32", "int64", "uint32", "uint64", "sint32", "sint64", "fixed32", "fixed64",
           "sfixed32", "sfixed64", "bool", "float", "double", "string", "bytes"]
NUMERIC = [k for k in SCALARS if k not in ("string", "bytes")]


def field_rows(syntax: str):
    """``(number, name, type, label)`` with label in {"", "r", "p", "oneof:o"}."""
    rows = []
    for i, k in enumerate(SCALARS):
        rows.append((1 + i, f"s_{k}", k, ""))
        rows.append((20 + i, f"r_{k}", k, "r"))
    for i, k in enumerate(NUMERIC):
        rows.append((40 + i, f"p_{k}", k, "p"))
    rows += [(60, "s_enum", "Color", ""), (61, "r_enum", "Color", "r"), (62, "child", "Sink", ""),
             (63, "children", "Sink", "r"), (70, "o_int", "int64", "oneof:o"),
             (71, "o_str", "string", "oneof:o"), (72, "o_msg", "Sink", "oneof:o")]
    if syntax == "proto3":
        rows.append((80, "opt_int", "int32", "optional"))
    return rows


COLORS = {"RED": 0, "GREEN": 1, "BLUE": 2, "BIG": 1000}


def wirefmt_registry(syntax: str) -> Registry:
    fields = []
    for number, name, type_, label in field_rows(syntax):
        repeated = label in ("r", "p")
        if type_ == "Color":
            kind, tn = ENUM, "Color"
        elif type_ == "Sink":
            kind, tn = MESSAGE, "Sink"
        else:
            kind, tn = KIND_BY_NAME[type_], None
        packed = None
        if label == "p":
            packed = True
        elif label == "r" and syntax == "proto3" and type_ in NUMERIC + ["Color"]:
            packed = False
        fields.append(FieldSpec(number, name, kind, repeated=repeated, type_name=tn, packed=packed,
                                oneof="o" if label.startswith("oneof") else None,
                                explicit_presence=True if label == "optional" else None))
    return Registry([MessageSpec("Sink", tuple(fields), syntax=syntax)],
                    [EnumSpec("Color", COLORS, closed=syntax == "proto2")])


def reference_class(syntax: str):
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    fdp = descriptor_pb2.FileDescriptorProto()
    fdp.name = f"kitchen_{syntax}.proto"
    fdp.package = f"kitchen{syntax}"
    fdp.syntax = syntax
    enum = fdp.enum_type.add(name="Color")
    for n, v in COLORS.items():
        enum.value.add(name=f"{n}", number=v)
    msg = fdp.message_type.add(name="Sink")
    msg.oneof_decl.add(name="o")
    FD = descriptor_pb2.FieldDescriptorProto
    for number, name, type_, label in field_rows(syntax):
        f = msg.field.add(name=name, number=number)
        if type_ == "Color":
            f.type = FD.TYPE_ENUM
            f.type_name = f".kitchen{syntax}.Color"
        elif type_ == "Sink":
            f.type = FD.TYPE_MESSAGE
            f.type_name = f".kitchen{syntax}.Sink"
        else:
            f.type = getattr(FD, "TYPE_" + type_.upper())
        f.label = FD.LABEL_REPEATED if label in ("r", "p") else FD.LABEL_OPTIONAL
        if label == "p":
            f.options.packed = True
        elif label == "r" and syntax == "proto3" and type_ in NUMERIC + ["Color"]:
            f.options.packed = False
        if label.startswith("oneof"):
            f.oneof_index = 0
        if label == "optional":
            f.proto3_optional = True
    if syntax == "proto3":
        msg.oneof_decl.add(name="_opt_int")
        msg.field[-1].oneof_index = 1
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(f"kitchen{syntax}.Sink"))


def our_class(syntax: str):
    from wirefmt import build_classes

    return build_classes(wirefmt_registry(syntax))["Sink"]
