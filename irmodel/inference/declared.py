"""The types a graph declares for its values (``value_info``, ``input``, ``output``), read
from their bytes where each is a plain tensor value.

Seeding a graph reads the type of every value it declares.  Made as messages, each costs
a ValueInfoProto, a TypeProto, a TypeProto.Tensor, a TensorShapeProto and a Dimension per
dim: about 30 us a value, 3 s of a model with 100,000 graph outputs (the hostile case),
and most of re-running inference on a model whose every value is already typed.
`irmodel._wireview.infoscan.value_info_type` reads the plain case (a tensor type, each
message once) from the bytes; anything else, and any item changed since it was read,
is made and read by `types.type_from_proto` as before (which raises what bad bytes
deserve).  The two agree exactly (tests/inference/test_inference_declared.py).
"""

from __future__ import annotations

from .._wireview.fastpath import items_read
from .._wireview.infoscan import value_info_type
from .types import TensorType, type_from_proto


def declared_types(graph, field: str, skip=()) -> list:
    """``[(name, Type or None, bare)]`` of ``graph``'s repeated ValueInfoProto ``field``, in
    order: None where the value has no ``type``, and for the indices in ``skip`` (whose
    type the caller has from elsewhere: not read at all, as the reference does not);
    ``bare``: read from the bytes and known to carry no denotation (so writing a merged
    type back needs no look at the message, `api._write_record`)."""
    values = getattr(graph, field)
    # No item threshold: one value may carry 100,000 dims, and no pattern is loaded.
    read = items_read(graph, field, value_info_type) if not skip else None
    if read is None:
        return [(vi.name, None, False) if i in skip else _from_message(vi) for i, vi in enumerate(values)]
    return [_from_message(values[i]) if r is None else
            (r[0], TensorType(r[1], None if r[2] is None else tuple(r[2])), not r[3])  # name, type, bare
            for i, r in enumerate(read)]


def _from_message(vi) -> tuple:
    return vi.name, (type_from_proto(vi.type) if vi.HasField("type") else None), False
