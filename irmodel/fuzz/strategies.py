"""Hypothesis strategies for ONNX messages and models, for our tests and other projects'.

    from irmodel.fuzz import strategies as ist

    @given(ist.messages("TensorProto"))      # any message of the schema, field by field
    @given(ist.valid_models())               # models that pass check_model(full_check=True)
    @given(ist.near_valid_models())          # a valid model with one semantic defect
    @given(ist.loose_models())               # models built from real op names, anything goes
    @given(ist.wire_fields())                # serialized fields of every wire type (any schema)

`messages` is built from the message specs, so it draws every field of every message
(enums inside their range, integers over their kind's whole range, floats with NaN and
infinities) and shrinks toward fewer, smaller fields.  The model strategies draw a seed
for `irmodel.fuzz.generate`, so they shrink toward seed 0, not toward smaller models.

This is the one module of irmodel that imports hypothesis; ``import irmodel`` and
``import irmodel.fuzz`` never load it.
"""

from __future__ import annotations

from hypothesis import strategies as st

from wirefmt import encode_varint
from wirefmt.rawtext import varint_of_width
from wirefmt.schema import (BOOL, BYTES, DOUBLE, ENUM, FLOAT, GROUP, INT_RANGE, MESSAGE, STRING)

__all__ = ["messages", "message_bytes", "valid_models", "near_valid_models", "model_seeds", "loose_models",
           "wire_fields"]

_SEEDS = st.integers(0, (1 << 32) - 1)


def _scalar(kind: int, cls, f) -> st.SearchStrategy:
    if kind == FLOAT:
        return st.floats(width=32)
    if kind == DOUBLE:
        return st.floats()
    if kind == BOOL:
        return st.booleans()
    if kind == STRING:
        return st.text(max_size=20)
    if kind == BYTES:
        return st.binary(max_size=32)
    if kind == ENUM:
        return st.sampled_from(sorted(set(cls._registry.enum(f.type_name).values.values())))
    lo, hi = INT_RANGE[kind]
    return st.one_of(st.integers(-4 if lo < 0 else 0, 16), st.sampled_from((lo, hi)), st.integers(lo, hi))


def _message_class(type_name: str):
    from irmodel import message_class  # noqa: PLC0415
    return message_class(type_name)


@st.composite
def _message(draw, cls, depth: int, max_depth: int, max_items: int):
    msg = cls()
    for f in cls._spec.fields:
        nested = f.kind in (MESSAGE, GROUP)
        if nested and depth >= max_depth:
            continue
        if not draw(st.booleans()):
            continue
        value = (_message(msg._classes[f.name], depth + 1, max_depth, max_items) if nested
                 else _scalar(f.kind, cls, f))
        if f.repeated:
            getattr(msg, f.name).extend(draw(st.lists(value, min_size=1, max_size=max_items)))
        else:
            setattr(msg, f.name, draw(value))
    return msg


def messages(type_name: str = "ModelProto", *, max_depth: int = 3, max_items: int = 3) -> st.SearchStrategy:
    """Any message of ONNX type ``type_name`` (an irmodel message): each field present or not,
    values over the field kind's whole range; messages nest at most ``max_depth`` deep and
    repeated fields hold at most ``max_items`` elements."""
    return _message(_message_class(type_name), 0, max_depth, max_items)


def message_bytes(type_name: str = "ModelProto", **options) -> st.SearchStrategy:
    """`messages` serialized."""
    return messages(type_name, **options).map(lambda m: m.SerializeToString())


def model_seeds() -> st.SearchStrategy:
    """Seeds for `irmodel.fuzz.generate` (a failing example names its seed)."""
    return _SEEDS


def valid_models(*, max_nodes: int = 12, opset: int | None = None) -> st.SearchStrategy:
    """Models of `irmodel.fuzz.generate.random_model`: valid for our checker with full_check."""
    from .generate import random_model  # noqa: PLC0415
    return _SEEDS.map(lambda seed: random_model(seed, max_nodes=max_nodes, opset=opset))


def near_valid_models() -> st.SearchStrategy:
    """Models of `irmodel.fuzz.generate.near_valid_model`: one semantic defect each."""
    from .generate import near_valid_model  # noqa: PLC0415
    return _SEEDS.map(near_valid_model)


# -- loose models: real operator names, anything else goes --------------------------------------

_OPS: list | None = None


def _ops() -> list:
    global _OPS
    if _OPS is None:
        from irmodel import defs  # noqa: PLC0415
        _OPS = sorted({(s.name, s.domain) for s in defs.get_all_schemas() if s.domain in ("", "ai.onnx.ml")})
    return _OPS


_ATTR_VALUES = st.one_of(st.integers(-3, 3), st.floats(-2, 2, allow_nan=False), st.text(max_size=3),
                         st.lists(st.integers(-2, 2), min_size=1, max_size=3),
                         st.lists(st.floats(0, 1), min_size=1, max_size=2))
_NAMES = st.sampled_from(["x", "y", "a", "b", "c", "", "w"])
_ATTR_NAMES = st.sampled_from(["axis", "alpha", "to", "perm", "value", "then_branch", "zz", "__x", "mode",
                               "keepdims", "axes", "epsilon"])


@st.composite
def loose_models(draw):
    """Small models of real operator names with arbitrary inputs, attributes, initializers,
    element types and opsets: mostly invalid in many ways at once (for comparing checkers'
    verdicts, where `near_valid_models` has exactly one defect)."""
    import irmodel  # noqa: PLC0415
    from irmodel import helper  # noqa: PLC0415
    ops = _ops()
    nodes = []
    for _ in range(draw(st.integers(0, 4))):
        op, domain = draw(st.sampled_from(ops))
        node = helper.make_node(op, draw(st.lists(_NAMES, max_size=4)), draw(st.lists(_NAMES, max_size=3)),
                                domain=domain)
        for name in draw(st.lists(_ATTR_NAMES, max_size=3)):
            node.attribute.append(helper.make_attribute(name, draw(_ATTR_VALUES)))
        nodes.append(node)
    inits = []
    for name in draw(st.lists(_NAMES, max_size=2)):
        dims = draw(st.lists(st.integers(-1, 4), max_size=3))
        dtype = draw(st.sampled_from([0, 1, 6, 7, 8, 11, 16, 21, 25, 27, 99]))
        t = irmodel.TensorProto(name=name, data_type=dtype, dims=dims)
        field = draw(st.sampled_from(["raw_data", "float_data", "int32_data", "int64_data", "none"]))
        n = draw(st.integers(0, 8))
        if field == "raw_data":
            t.raw_data = b"\0" * n
        elif field != "none":
            getattr(t, field).extend([1] * n if field != "float_data" else [1.0] * n)
        inits.append(t)
    float_type = irmodel.TensorProto.FLOAT
    graph = helper.make_graph(nodes, draw(st.sampled_from(["g", ""])),
                              [helper.make_tensor_value_info(n, float_type, [2])
                               for n in draw(st.lists(_NAMES, max_size=2))],
                              [helper.make_tensor_value_info(n, float_type, None)
                               for n in draw(st.lists(_NAMES, max_size=2))], inits)
    opsets = [helper.make_opsetid("", draw(st.integers(1, 24)))]
    if draw(st.booleans()):
        opsets.append(helper.make_opsetid("ai.onnx.ml", draw(st.integers(1, 5))))
    return helper.make_model(graph, ir_version=draw(st.integers(3, irmodel.IR_VERSION)), opset_imports=opsets)


# -- wire structures, for any schema ----------------------------------------------------------

def _varint(n: int, pad: int) -> bytes:
    return varint_of_width(n, min(10, len(encode_varint(n)) + pad))


@st.composite
def wire_fields(draw, depth: int = 0) -> bytes:
    """Serialized fields of no schema: every wire type, nesting (messages and groups), text,
    binary, redundant varint bytes.  Always well-formed protobuf."""
    out = b""
    for _ in range(draw(st.integers(0, 4))):
        number = draw(st.one_of(st.integers(1, 20), st.integers(1, (1 << 29) - 1)))
        pad = draw(st.sampled_from([0, 0, 0, 1, 4]))
        kind = draw(st.sampled_from(["varint", "fixed32", "fixed64", "text", "bytes", "message", "group"]
                                    if depth < 4 else ["varint", "text", "bytes"]))
        if kind == "varint":
            out += _varint(number << 3, pad) + _varint(draw(st.integers(0, (1 << 64) - 1)), pad)
        elif kind in ("fixed32", "fixed64"):
            width = 4 if kind == "fixed32" else 8
            out += _varint(number << 3 | (5 if width == 4 else 1), pad) + draw(st.binary(min_size=width, max_size=width))
        elif kind == "group":
            out += _varint(number << 3 | 3, pad) + draw(wire_fields(depth + 1)) + _varint(number << 3 | 4, pad)
        else:
            payload = (draw(st.text(max_size=30)).encode() if kind == "text" else
                       draw(st.binary(max_size=40)) if kind == "bytes" else draw(wire_fields(depth + 1)))
            out += _varint(number << 3 | 2, pad) + _varint(len(payload), pad) + payload
    return out
