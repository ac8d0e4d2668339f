"""A wire-level mutator for any protobuf bytes, schema-aware when given a schema.

Byte-flipping fuzzers break a length prefix with almost every flip, so every parser
rejects their output at the same byte; libprotobuf-mutator re-serializes valid messages
and never writes malformed wire format.  This mutator sits between them: each mutation
is one named *kind* that changes exactly one thing (a field deleted, a tag with field
number 0, a length that runs past the end of its message, ...) and re-encodes the
length prefix of every enclosing message, so the mutant is malformed exactly where the
kind says and nowhere else.  `KINDS` lists the kinds with the property each claims.

Speed: the input is parsed once into a tree of spans (`irmodel.fuzz.spans`; the last
few parses are cached, since a fuzzer mutates the same input many times), and a mutant
is built by splicing slices of the input around the new bytes and re-encoding only the
length prefixes on the path to the top.

Determinism: a mutant depends on nothing but ``(input, seed)`` (and the mutator's
settings): the kind, the site and the new bytes all come from one generator seeded with
``seed`` (`irmodel.fuzz.rng.FastRandom`, a `random.Random` whose seeding is cheap).

`WireMutator` instances are atheris ``custom_mutator`` callables:
``mutator(data, max_size, seed) -> bytes``.  This module imports only wirefmt and the
standard library (the ONNX schema is passed in, see `irmodel.fuzz.onnx_schema`).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Callable, Iterable, NamedTuple

from wirefmt import MAX_DEPTH, Registry

from . import wire_kinds as wk
from .rng import FastRandom
from .spans import SpanTree, message_cycles
from .wire_kinds import INTERESTING_VARINTS, INVALID_UTF8


class Mutant(NamedTuple):
    """One mutation's result.

    ``kind`` names the mutation (a key of `KINDS`).  ``data[offset:offset + size]`` are
    the new bytes (``size`` 0: bytes were only removed there).  ``path`` is the child-index path (as `Node.path`) of the message
    that was edited, ``index`` the position of the changed field among its fields, and
    ``detail`` holds what the kind's claim is about (numbers, widths, values).
    """

    kind: str
    data: bytes
    offset: int
    size: int
    path: tuple
    index: int  # type: ignore[assignment]  # public field name; shadowing tuple.index is intended
    detail: dict


class Kind(NamedTuple):
    name: str
    function: Callable
    malformed: bool
    claim: str


KINDS: dict[str, Kind] = {k.name: k for k in (
    Kind("delete_field", wk.delete_field, False, "one field occurrence removed"),
    Kind("duplicate_field", wk.duplicate_field, False, "one field occurrence repeated right after itself"),
    Kind("insert_field", wk.insert_field, False, "one new field (of the schema when given) inserted"),
    Kind("swap_fields", wk.swap_fields, False, "two fields of one message swapped"),
    Kind("change_wire_type", wk.change_wire_type, False, "a field re-encoded with another wire type"),
    Kind("duplicate_singular", wk.duplicate_singular, False,
         "a second occurrence of a singular field (another value; messages repeated to merge)"),
    Kind("packed_to_unpacked", wk.packed_to_unpacked, False, "a packed field written as one field per element"),
    Kind("unpacked_to_packed", wk.unpacked_to_packed, False, "a run of scalar fields written as one packed field"),
    Kind("nan_payload", wk.nan_payload, False, "a float or double value replaced by a NaN with a payload"),
    Kind("interesting_varint", wk.interesting_varint, False, "a varint value replaced by an edge value"),
    Kind("overlong_varint", wk.overlong_varint, True, "a varint value written with redundant bytes (<= 10)"),
    Kind("overlong_length", wk.overlong_length, True, "a length prefix written with redundant bytes (<= 10)"),
    Kind("overlong_tag", wk.overlong_tag, True, "a tag written with redundant bytes (<= 10)"),
    Kind("varint_over_10_bytes", wk.varint_over_10_bytes, True, "a varint (value or tag) of 11 to 16 bytes"),
    Kind("tag_above_2_32", wk.tag_above_2_32, True,
         "a tag varint above 2^32 - 1 whose low 32 bits are the original tag"),
    Kind("field_number_0", wk.field_number_0, True, "a field's number set to 0"),
    Kind("field_number_too_large", wk.field_number_too_large, True, "a field's number set to 2^29 or more"),
    Kind("wire_type_6_7", wk.wire_type_6_7, True, "a field's wire type set to 6 or 7"),
    Kind("unterminated_group", wk.unterminated_group, True, "a start-group tag whose group runs to the message end"),
    Kind("mismatched_group", wk.mismatched_group, True, "a group closed by an end tag of another number"),
    Kind("stray_end_group", wk.stray_end_group, True, "an end-group tag with no group open"),
    Kind("group_with_field_0", wk.group_with_field_0, True, "a well-closed group holding a field numbered 0"),
    Kind("length_past_end", wk.length_past_end, True, "a length prefix longer than the bytes left in its message"),
    Kind("packed_wrong_length", wk.packed_wrong_length, True,
         "packed fixed-width data whose length is not a multiple of the width (needs a schema)"),
    Kind("invalid_utf8", wk.invalid_utf8, True, "a string payload that is not UTF-8"),
    Kind("deep_nesting", wk.deep_nesting, True, f"messages nested more than {MAX_DEPTH} deep"),
    Kind("deep_group_nesting", wk.deep_group_nesting, True, f"groups nested more than {MAX_DEPTH} deep"),
    Kind("trailing_bytes", wk.trailing_bytes, True, "bytes appended after the complete message"),
    Kind("truncate", wk.truncate, True, "the buffer cut short"),
)}


class WireMutator:
    """Mutates protobuf bytes one named kind at a time; see the module docstring.

    ``registry`` and ``root_type`` make it schema-aware (fields are known by number,
    strings and packed fields by kind, nesting follows message cycles).  ``kinds``
    restricts the kinds drawn from (default: all of `KINDS`).
    """

    def __init__(self, registry: Registry | None = None, root_type: str | None = None, *,
                 kinds: Iterable[str] | None = None, cache_size: int = 16):
        if (registry is None) != (root_type is None):
            raise ValueError("give both a registry and a root type, or neither")
        self.registry = registry
        self.root_type = root_type
        names = list(KINDS) if kinds is None else list(kinds)
        unknown = [k for k in names if k not in KINDS]
        if unknown or not names:
            raise ValueError(f"unknown mutation kinds: {unknown}" if unknown else "no kinds")
        self.kinds = tuple(names)
        self._functions = tuple(KINDS[k].function for k in names)
        self._cycles = message_cycles(registry) if registry is not None else {}
        self._cache: OrderedDict = OrderedDict()
        self._cache_size = cache_size

    def tree(self, data: bytes) -> SpanTree:
        """The span tree of ``data``, from the cache when it was parsed recently."""
        cache = self._cache
        t = cache.get(data)
        if t is None:
            t = SpanTree(data, self.registry, self.root_type)
            cache[data] = t
            if len(cache) > self._cache_size:
                cache.popitem(last=False)
        return t

    @staticmethod
    def _cached(t: SpanTree, key: str, make: Callable):
        """A list derived from ``t`` once (candidate sites of one kind), kept with the tree."""
        v = t.derived.get(key)
        if v is None:
            v = t.derived[key] = make(t)
        return v

    def mutate(self, data: bytes, seed: int, *, kind: str | None = None,
               max_size: int | None = None) -> Mutant:
        """One mutant of ``data``; the same ``(data, seed)`` always gives the same mutant.

        With ``kind``, only that kind is tried; ``ValueError`` if it cannot apply to
        ``data`` (nothing in it to mutate that way).  Otherwise kinds are drawn until one
        applies and fits ``max_size``; if none does, the input is cut to ``max_size``.
        """
        if type(data) is not bytes:
            data = bytes(data)
        rng = FastRandom(seed)
        t = self.tree(data)
        if kind is not None:
            e = KINDS[kind].function(t, rng, self)
            if e is None:
                raise ValueError(f"{kind} does not apply to this input")
            return self._apply(t, kind, e)
        names, functions = self.kinds, self._functions
        for _ in range(16):
            i = rng.randrange(len(names))
            e = functions[i](t, rng, self)
            if e is None:
                continue
            mutant = self._apply(t, names[i], e)
            if max_size is None or len(mutant.data) <= max_size:
                return mutant
        cut = len(data) if max_size is None else min(max_size, len(data))
        return Mutant("truncate", data[:cut], cut, 0, (), -1, {"length": cut})

    @staticmethod
    def _apply(t: SpanTree, kind: str, e: wk.Edit) -> Mutant:
        data, offset = e.host.splice(t.buf, e.start, e.end, e.new)
        return Mutant(kind, data, offset, len(e.new), e.path, e.index, e.detail)

    def __call__(self, data: bytes, max_size: int, seed: int) -> bytes:
        """atheris ``custom_mutator``: ``(data, max_size, seed) -> bytes``."""
        return self.mutate(data, seed, max_size=max_size).data

    def crossover(self, a: bytes, b: bytes, seed: int, max_size: int | None = None) -> bytes:
        """One field of ``b`` inserted between two fields of a message of ``a``, every enclosing
        length re-encoded; with a schema, into a message of the same type as the field's.

        The result parses wherever both inputs did.  Falls back to ``a`` (cut to
        ``max_size``) when ``b`` has no field that fits.
        """
        a, b = bytes(a), bytes(b)
        rng = FastRandom(seed)
        ta, tb = self.tree(a), self.tree(b)
        donors = [n for n in tb.fields if n.stop <= tb.end and n.parent is not None]
        for _ in range(8):
            if not donors:
                break
            donor = rng.choice(donors)
            hosts = self._hosts(ta, donor)
            if not hosts:
                continue
            host = rng.choice(hosts)
            kids = host.children or []
            bounds = [c.tag_start for c in kids] + [host.tail if host.tail is not None else host.end]
            at = rng.choice(bounds)
            out, _ = host.splice(a, at, at, b[donor.tag_start:donor.stop])
            if max_size is None or len(out) <= max_size:
                return out
        return a if max_size is None else a[:max_size]

    def _hosts(self, t: SpanTree, donor) -> list:
        """Containers of ``t`` that may receive ``donor``: of its parent's message type, or any."""
        spec = getattr(donor.parent, "message_spec", None)
        if spec is not None:
            return [c for c in t.containers if getattr(c, "message_spec", None) is spec]
        return [c for c in t.containers if c.depth < MAX_DEPTH - 1]

    def custom_crossover(self, data1: bytes, data2: bytes, max_size: int, seed: int) -> bytes:
        """atheris ``custom_crossover``: ``(data1, data2, max_size, seed) -> bytes``."""
        return self.crossover(data1, data2, seed, max_size)


_ANY: WireMutator | None = None


def _any_mutator() -> WireMutator:
    global _ANY
    if _ANY is None:
        _ANY = WireMutator()
    return _ANY


def custom_mutator(data: bytes, max_size: int, seed: int) -> bytes:
    """atheris ``custom_mutator`` over any protobuf bytes (no schema: this module knows none;
    `irmodel.fuzz.onnx_schema.custom_mutator` is the ONNX-aware one)."""
    return _any_mutator().mutate(data, seed, max_size=max_size).data


def custom_crossover(data1: bytes, data2: bytes, max_size: int, seed: int) -> bytes:
    """atheris ``custom_crossover`` over any protobuf bytes: a field of one spliced into the other."""
    return _any_mutator().crossover(data1, data2, seed, max_size)


__all__ = ["WireMutator", "Mutant", "Kind", "KINDS", "INTERESTING_VARINTS", "INVALID_UTF8", "custom_mutator",
           "custom_crossover"]
