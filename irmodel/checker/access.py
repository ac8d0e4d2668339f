"""How the checker reads a model without reading its weights.

The one module of the checker that uses private parts of the message layer (say so in
any change): ``RepeatedMessages``, ``Message._raw_chunks`` (the undecoded packed chunks of a repeated numeric
field, so that ``float_data`` & co. are counted from their byte length instead of being
decoded into Python lists), the instance ``__dict__`` and ``_lazy`` spans (which fields a
message holds, without asking for each field of its schema), the class's ``_fields`` and
``_classes`` tables.  The directory external data is relative to comes from the model's
`irmodel._files.origin.Origin`.
"""

from __future__ import annotations

from wirefmt import DecodeError
from wirefmt.schema import MESSAGE

from wirefmt.containers import MessageList, RepeatedMessages

from .._files.origin import origin_of

# Fixed-width packed fields: bytes per value.
_FIXED_WIDTH = {"float_data": 4, "double_data": 8}
# Up to this many bytes a varint field is decoded the ordinary way (which validates every
# varint); above it, its values are counted by their terminating bytes (one per varint).
_DECODE_LIMIT = 1 << 20
_COUNT_SLICE = 1 << 22
_HIGH_BYTES = bytes(range(128, 256))


def stored_count(tensor, field: str) -> int:
    """How many values the repeated numeric ``field`` of ``tensor`` holds.

    Counted from the packed bytes when still undecoded: float/double by length, varints
    by their last bytes (bytes below 0x80).  Raises DecodeError for bytes that cannot be
    such a field, as decoding it would.
    """
    chunks = tensor._raw_chunks(field)
    if chunks is None:
        return len(getattr(tensor, field))
    width = _FIXED_WIDTH.get(field)
    if width is not None:
        total = 0
        for c in chunks:
            if len(c) % width:
                raise DecodeError(f"packed {field} of {len(c)} bytes is not a whole number of "
                                  f"{width}-byte values")
            total += len(c) // width
        return total
    if sum(len(c) for c in chunks) <= _DECODE_LIMIT:
        return len(getattr(tensor, field))  # decodes and validates
    total = 0
    for c in chunks:
        if len(c) and c[-1] >= 0x80:
            raise DecodeError(f"truncated varint at the end of packed {field}")
        for i in range(0, len(c), _COUNT_SLICE):
            part = c[i:i + _COUNT_SLICE].tobytes()
            total += len(part.translate(None, _HIGH_BYTES))
    return total


# TensorProto's value fields, in the order the reference counts them.
TENSOR_VALUE_FIELDS = ("float_data", "int32_data", "string_data", "int64_data", "raw_data",
                       "double_data", "uint64_data")


def present_data_fields(tensor) -> list:
    """The value fields of a TensorProto that hold data (non-empty), in the reference's order.

    Read from what the tensor holds (decoded values, undecoded packed chunks) without
    decoding anything or making empty lists for absent fields.
    """
    d = tensor.__dict__
    lazy: dict = d.get("_lazy") or {}
    found = []
    for name in TENSOR_VALUE_FIELDS:
        value = d.get(name)
        if value is not None:
            if len(value):
                found.append(name)
        elif name in lazy:
            spans = lazy[name]
            if any(spans[k + 1] > spans[k] for k in range(0, len(spans), 2)):
                found.append(name)
    return found


# The value fields of an attribute and the AttributeProto.AttributeType each stands for,
# singular then repeated (the order messages list them in).
VALUE_FIELD_TYPES = {"f": 1, "i": 2, "s": 3, "t": 4, "g": 5, "tp": 13, "sparse_tensor": 11,
                     "floats": 6, "ints": 7, "strings": 8, "tensors": 9, "graphs": 10,
                     "sparse_tensors": 12, "type_protos": 14}
_SINGULAR_MESSAGES = frozenset({"t", "g", "tp", "sparse_tensor"})
_REPEATED = frozenset({"floats", "ints", "strings", "tensors", "graphs", "sparse_tensors", "type_protos"})
_ORDER = {name: i for i, name in enumerate(VALUE_FIELD_TYPES)}


def present_value_fields(attr) -> list:
    """The value fields an AttributeProto sets (``HasField`` / non-empty), in table order.

    Read from what the attribute holds (decoded values, undecoded spans) instead of asking
    each of its fourteen value fields: a walk checks every attribute of a model.
    """
    d = attr.__dict__
    found = []
    for name, value in d.items():
        if name in VALUE_FIELD_TYPES:
            if name in _REPEATED:
                if len(value):
                    found.append(name)
            elif name in _SINGULAR_MESSAGES:
                if value._idx != -2:  # -2: an absent message read once (a default)
                    found.append(name)
            else:
                found.append(name)  # proto2 scalars are present when held
    lazy = d.get("_lazy")
    if lazy:
        for name, spans in lazy.items():
            if name in VALUE_FIELD_TYPES and name not in found:
                if name in _SINGULAR_MESSAGES or any(spans[k + 1] > spans[k] for k in range(0, len(spans), 2)):
                    found.append(name)
    if len(found) > 1:
        found.sort(key=_ORDER.__getitem__)
    return found


# -- decoding what the rules do not read --------------------------------------------------------
# A model is valid only if protobuf can parse all of it.  The rules read most of a model
# (and each message they read is validated as it is scanned); these functions decode the
# rest, so that a corrupt byte anywhere is found (as B001) without a second full walk.

def decode_subtree(msg) -> None:
    """Decode ``msg`` and everything below it; raises DecodeError where protobuf would fail.

    Only what is still undecoded costs work: spans waiting in ``_lazy`` are scanned (or, for
    packed numbers, decoded), and held submessages are descended into.
    """
    stack = [msg]
    while stack:
        m = stack.pop()
        classes = type(m)._classes
        d = m.__dict__
        lazy = d.get("_lazy")
        if lazy:
            for name in list(lazy):
                getattr(m, name)  # scans a submessage, decodes a packed field
        for name in classes:
            value = d.get(name)
            if value is None:
                continue
            if type(value) is RepeatedMessages or type(value) is MessageList:
                stack.extend(value)  # iterating scans every item
            else:
                stack.append(value)


_UNREAD: dict = {}


def decode_rest(report, msg, visited: frozenset, path: str, node=None) -> None:
    """Decode every submessage and packed field of ``msg`` not named in ``visited`` (the
    ones its checks read), with everything below; absent fields cost nothing.  A field
    that does not decode is reported (B001) at ``path.field``."""
    cls = type(msg)
    candidates = _UNREAD.get((cls, visited))
    if candidates is None:  # the message fields of this type that its checks do not read
        candidates = _UNREAD[cls, visited] = tuple(n for n in cls._classes if n not in visited)
    d = msg.__dict__
    lazy = d.get("_lazy")
    if lazy:
        names = [n for n in candidates if n in d or n in lazy]
        names.extend(k for k in lazy if k not in visited and k not in cls._classes)  # packed scalars
    else:
        names = [n for n in candidates if n in d]
    if not names:
        return
    fields = type(msg)._fields
    for name in names:
        f = fields.get(name)
        try:
            value = getattr(msg, name)  # decodes a lazy packed field or scans a submessage
            if f is not None and f.kind == MESSAGE:
                for item in (value if f.repeated else (value,)):
                    decode_subtree(item)
        except DecodeError as exc:
            report.add("B001", f"{path}.{name}" if path else name, f"cannot be decoded: {exc}", node)


def loaded_from_dir(model) -> str | None:
    """The directory ``irmodel.load`` read ``model`` from, or None (built or loaded from bytes)."""
    origin = origin_of(model)
    return origin.base_dir if origin is not None else None
