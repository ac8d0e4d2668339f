"""Every message and enum of onnx.proto, onnx-data.proto and onnx-operators.proto (IR 14).

Field numbers and names are facts taken from the `.proto` files inside the onnx wheel;
the tables below are transcribed into wirefmt's declarative types.  Type names drop the
``onnx.`` package and keep nesting with a dot (``TensorProto.Segment``).

Row format: ``(number, name, type, label)``; ``type`` is a scalar kind name or a message
or enum name; ``label`` is ``""`` (optional), ``"r"`` (repeated), ``"p"`` (repeated,
``[packed = true]``) or ``"oneof:NAME"``.

The specs are built from the rows when asked for: `message_spec` and `enum_spec` one
type at a time (the byte readers of ``irmodel inspect`` read four), `REGISTRY` all of
them on first access (the message classes), sharing the same spec objects;
`field_number` reads a number from the rows without building a spec.
"""

from __future__ import annotations

TYPE_CHECKING = False

from wirefmt.schema import KIND_BY_NAME, ENUM, MESSAGE, EnumSpec, FieldSpec, MessageSpec, Registry

IR_VERSION = 14

_ENUMS = {
    "Version": dict(
        _START_VERSION=0, IR_VERSION_2017_10_10=1, IR_VERSION_2017_10_30=2, IR_VERSION_2017_11_3=3,
        IR_VERSION_2019_1_22=4, IR_VERSION_2019_3_18=5, IR_VERSION_2019_9_19=6, IR_VERSION_2020_5_8=7,
        IR_VERSION_2021_7_30=8, IR_VERSION_2023_5_5=9, IR_VERSION_2024_3_25=10,
        IR_VERSION_2025_05_12=11, IR_VERSION_2025_08_26=12, IR_VERSION_2025_11_06=13, IR_VERSION=14),
    "AttributeProto.AttributeType": dict(
        UNDEFINED=0, FLOAT=1, INT=2, STRING=3, TENSOR=4, GRAPH=5, SPARSE_TENSOR=11, TYPE_PROTO=13,
        FLOATS=6, INTS=7, STRINGS=8, TENSORS=9, GRAPHS=10, SPARSE_TENSORS=12, TYPE_PROTOS=14),
    "TensorProto.DataType": dict(
        UNDEFINED=0, FLOAT=1, UINT8=2, INT8=3, UINT16=4, INT16=5, INT32=6, INT64=7, STRING=8, BOOL=9,
        FLOAT16=10, DOUBLE=11, UINT32=12, UINT64=13, COMPLEX64=14, COMPLEX128=15, BFLOAT16=16,
        FLOAT8E4M3FN=17, FLOAT8E4M3FNUZ=18, FLOAT8E5M2=19, FLOAT8E5M2FNUZ=20, UINT4=21, INT4=22,
        FLOAT4E2M1=23, FLOAT8E8M0=24, UINT2=25, INT2=26, FLOAT6E2M3=27, FLOAT6E3M2=28),
    "TensorProto.DataLocation": dict(DEFAULT=0, EXTERNAL=1),
    "OperatorStatus": dict(EXPERIMENTAL=0, STABLE=1),
    "SequenceProto.DataType": dict(UNDEFINED=0, TENSOR=1, SPARSE_TENSOR=2, SEQUENCE=3, MAP=4, OPTIONAL=5),
    "OptionalProto.DataType": dict(UNDEFINED=0, TENSOR=1, SPARSE_TENSOR=2, SEQUENCE=3, MAP=4, OPTIONAL=5),
}

_MESSAGES = {
    # ---- onnx.proto
    "AttributeProto": [
        (1, "name", "string", ""), (21, "ref_attr_name", "string", ""), (13, "doc_string", "string", ""),
        (20, "type", "AttributeProto.AttributeType", ""), (2, "f", "float", ""), (3, "i", "int64", ""),
        (4, "s", "bytes", ""), (5, "t", "TensorProto", ""), (6, "g", "GraphProto", ""),
        (22, "sparse_tensor", "SparseTensorProto", ""), (14, "tp", "TypeProto", ""),
        (7, "floats", "float", "r"), (8, "ints", "int64", "r"), (9, "strings", "bytes", "r"),
        (10, "tensors", "TensorProto", "r"), (11, "graphs", "GraphProto", "r"),
        (23, "sparse_tensors", "SparseTensorProto", "r"), (15, "type_protos", "TypeProto", "r")],
    "ValueInfoProto": [
        (1, "name", "string", ""), (2, "type", "TypeProto", ""), (3, "doc_string", "string", ""),
        (4, "metadata_props", "StringStringEntryProto", "r")],
    "NodeProto": [
        (1, "input", "string", "r"), (2, "output", "string", "r"), (3, "name", "string", ""),
        (4, "op_type", "string", ""), (7, "domain", "string", ""), (8, "overload", "string", ""),
        (5, "attribute", "AttributeProto", "r"), (6, "doc_string", "string", ""),
        (9, "metadata_props", "StringStringEntryProto", "r"),
        (10, "device_configurations", "NodeDeviceConfigurationProto", "r")],
    "IntIntListEntryProto": [(1, "key", "int64", ""), (2, "value", "int64", "r")],
    "NodeDeviceConfigurationProto": [
        (1, "configuration_id", "string", ""), (2, "sharding_spec", "ShardingSpecProto", "r"),
        (3, "pipeline_stage", "int32", "")],
    "ShardingSpecProto": [
        (1, "tensor_name", "string", ""), (2, "device", "int64", "r"),
        (3, "index_to_device_group_map", "IntIntListEntryProto", "r"),
        (4, "sharded_dim", "ShardedDimProto", "r")],
    "ShardedDimProto": [(1, "axis", "int64", ""), (2, "simple_sharding", "SimpleShardedDimProto", "r")],
    "SimpleShardedDimProto": [
        (1, "dim_value", "int64", "oneof:dim"), (2, "dim_param", "string", "oneof:dim"),
        (3, "num_shards", "int64", "")],
    "TrainingInfoProto": [
        (1, "initialization", "GraphProto", ""), (2, "algorithm", "GraphProto", ""),
        (3, "initialization_binding", "StringStringEntryProto", "r"),
        (4, "update_binding", "StringStringEntryProto", "r")],
    "ModelProto": [
        (1, "ir_version", "int64", ""), (8, "opset_import", "OperatorSetIdProto", "r"),
        (2, "producer_name", "string", ""), (3, "producer_version", "string", ""),
        (4, "domain", "string", ""), (5, "model_version", "int64", ""), (6, "doc_string", "string", ""),
        (7, "graph", "GraphProto", ""), (14, "metadata_props", "StringStringEntryProto", "r"),
        (20, "training_info", "TrainingInfoProto", "r"), (25, "functions", "FunctionProto", "r"),
        (26, "configuration", "DeviceConfigurationProto", "r")],
    "DeviceConfigurationProto": [
        (1, "name", "string", ""), (2, "num_devices", "int32", ""), (3, "device", "string", "r")],
    "StringStringEntryProto": [(1, "key", "string", ""), (2, "value", "string", "")],
    "TensorAnnotation": [
        (1, "tensor_name", "string", ""),
        (2, "quant_parameter_tensor_names", "StringStringEntryProto", "r")],
    "GraphProto": [
        (1, "node", "NodeProto", "r"), (2, "name", "string", ""), (5, "initializer", "TensorProto", "r"),
        (15, "sparse_initializer", "SparseTensorProto", "r"), (10, "doc_string", "string", ""),
        (11, "input", "ValueInfoProto", "r"), (12, "output", "ValueInfoProto", "r"),
        (13, "value_info", "ValueInfoProto", "r"),
        (14, "quantization_annotation", "TensorAnnotation", "r"),
        (16, "metadata_props", "StringStringEntryProto", "r")],
    "TensorProto": [
        (1, "dims", "int64", "r"), (2, "data_type", "int32", ""), (3, "segment", "TensorProto.Segment", ""),
        (4, "float_data", "float", "p"), (5, "int32_data", "int32", "p"), (6, "string_data", "bytes", "r"),
        (7, "int64_data", "int64", "p"), (8, "name", "string", ""), (12, "doc_string", "string", ""),
        (9, "raw_data", "bytes", ""), (13, "external_data", "StringStringEntryProto", "r"),
        (14, "data_location", "TensorProto.DataLocation", ""), (10, "double_data", "double", "p"),
        (11, "uint64_data", "uint64", "p"), (16, "metadata_props", "StringStringEntryProto", "r")],
    "TensorProto.Segment": [(1, "begin", "int64", ""), (2, "end", "int64", "")],
    "SparseTensorProto": [
        (1, "values", "TensorProto", ""), (2, "indices", "TensorProto", ""), (3, "dims", "int64", "r")],
    "TensorShapeProto": [(1, "dim", "TensorShapeProto.Dimension", "r")],
    "TensorShapeProto.Dimension": [
        (1, "dim_value", "int64", "oneof:value"), (2, "dim_param", "string", "oneof:value"),
        (3, "denotation", "string", "")],
    "TypeProto": [
        (1, "tensor_type", "TypeProto.Tensor", "oneof:value"),
        (4, "sequence_type", "TypeProto.Sequence", "oneof:value"),
        (5, "map_type", "TypeProto.Map", "oneof:value"),
        (9, "optional_type", "TypeProto.Optional", "oneof:value"),
        (8, "sparse_tensor_type", "TypeProto.SparseTensor", "oneof:value"),
        (7, "opaque_type", "TypeProto.Opaque", "oneof:value"),
        (6, "denotation", "string", "")],
    "TypeProto.Tensor": [(1, "elem_type", "int32", ""), (2, "shape", "TensorShapeProto", "")],
    "TypeProto.Sequence": [(1, "elem_type", "TypeProto", "")],
    "TypeProto.Map": [(1, "key_type", "int32", ""), (2, "value_type", "TypeProto", "")],
    "TypeProto.Optional": [(1, "elem_type", "TypeProto", "")],
    "TypeProto.SparseTensor": [(1, "elem_type", "int32", ""), (2, "shape", "TensorShapeProto", "")],
    "TypeProto.Opaque": [(1, "domain", "string", ""), (2, "name", "string", "")],
    "OperatorSetIdProto": [(1, "domain", "string", ""), (2, "version", "int64", "")],
    "FunctionProto": [
        (1, "name", "string", ""), (4, "input", "string", "r"), (5, "output", "string", "r"),
        (6, "attribute", "string", "r"), (11, "attribute_proto", "AttributeProto", "r"),
        (7, "node", "NodeProto", "r"), (8, "doc_string", "string", ""),
        (9, "opset_import", "OperatorSetIdProto", "r"), (10, "domain", "string", ""),
        (13, "overload", "string", ""), (12, "value_info", "ValueInfoProto", "r"),
        (14, "metadata_props", "StringStringEntryProto", "r")],
    # ---- onnx-data.proto
    "SequenceProto": [
        (1, "name", "string", ""), (2, "elem_type", "int32", ""),
        (3, "tensor_values", "TensorProto", "r"), (4, "sparse_tensor_values", "SparseTensorProto", "r"),
        (5, "sequence_values", "SequenceProto", "r"), (6, "map_values", "MapProto", "r"),
        (7, "optional_values", "OptionalProto", "r")],
    "MapProto": [
        (1, "name", "string", ""), (2, "key_type", "int32", ""), (3, "keys", "int64", "r"),
        (4, "string_keys", "bytes", "r"), (5, "values", "SequenceProto", "")],
    "OptionalProto": [
        (1, "name", "string", ""), (2, "elem_type", "int32", ""), (3, "tensor_value", "TensorProto", ""),
        (4, "sparse_tensor_value", "SparseTensorProto", ""), (5, "sequence_value", "SequenceProto", ""),
        (6, "map_value", "MapProto", ""), (7, "optional_value", "OptionalProto", "")],
    # ---- onnx-operators.proto
    "OperatorProto": [
        (1, "op_type", "string", ""), (2, "since_version", "int64", ""),
        (3, "status", "OperatorStatus", ""), (10, "doc_string", "string", "")],
    "OperatorSetProto": [
        (1, "magic", "string", ""), (2, "ir_version", "int64", ""),
        (3, "ir_version_prerelease", "string", ""), (7, "ir_build_metadata", "string", ""),
        (4, "domain", "string", ""), (5, "opset_version", "int64", ""), (6, "doc_string", "string", ""),
        (8, "operator", "OperatorProto", "r"), (9, "functions", "FunctionProto", "r")],
}


def _field(row) -> FieldSpec:
    number, name, type_, label = row
    oneof = label[6:] if label.startswith("oneof:") else None
    repeated = label in ("r", "p")
    if type_ in KIND_BY_NAME:
        kind, type_name = KIND_BY_NAME[type_], None
    elif type_ in _ENUMS:
        kind, type_name = ENUM, type_
    else:
        kind, type_name = MESSAGE, type_
    return FieldSpec(number, name, kind, repeated=repeated, type_name=type_name,
                     packed=True if label == "p" else None, oneof=oneof)


_MESSAGE_SPECS: dict = {}
_ENUM_SPECS: dict = {}


def message_spec(name: str) -> MessageSpec:
    """The spec of message ``name``, built from its rows on first use (a KeyError names an
    unknown type).  The byte readers ask for the few they read; building all of them
    (`REGISTRY`) is what a process that makes messages pays, not ``irmodel inspect``."""
    spec = _MESSAGE_SPECS.get(name)
    if spec is None:  # setdefault: two threads building it keep one spec
        spec = _MESSAGE_SPECS.setdefault(name, MessageSpec(name, tuple(_field(r) for r in _MESSAGES[name])))
    return spec


def enum_spec(name: str) -> EnumSpec:
    """The spec of enum ``name``, built on first use, as `message_spec`."""
    spec = _ENUM_SPECS.get(name)
    if spec is None:
        spec = _ENUM_SPECS.setdefault(name, EnumSpec(name, _ENUMS[name], closed=True))
    return spec


def field_number(type_name: str, field: str) -> int:
    """The number of ``type_name``'s ``field`` from the rows (no spec built; a KeyError
    names a typo)."""
    for row in _MESSAGES[type_name]:
        if row[1] == field:
            return row[0]
    raise KeyError(f"{type_name}.{field}")


def field_numbers(type_name: str) -> frozenset:
    """Every field number of ``type_name``."""
    return frozenset(row[0] for row in _MESSAGES[type_name])


if TYPE_CHECKING:
    REGISTRY: Registry


def __getattr__(name: str) -> Registry:
    # `REGISTRY`, every message and enum, built on first access (PEP 562) from the same
    # specs `message_spec` and `enum_spec` hand out.
    if name != "REGISTRY":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    registry = Registry([message_spec(n) for n in _MESSAGES], [enum_spec(n) for n in _ENUMS])
    return globals().setdefault("REGISTRY", registry)  # one registry, even if two threads race
