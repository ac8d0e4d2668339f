"""Lookup of operator schemas with onnx.defs' semantics, over the table loaded on first use.

The table (opschemas.json next to this module) is read by the first call that needs
it, never at import.  It is then indexed by (domain, op_type): each entry holds the
since_versions in ascending order and, in step, either the record (its JSON text, or
the parsed dict) or the `OpSchema` made from it on its first request, so a lookup is a
dict access and a bisect.  Two threads racing through the first load build equal
tables and one of them is kept; nothing needs a lock.

Why records stay text until asked for: parsing the whole file takes 20-30 ms (a third
of a small model's check), and a check needs a dozen of the 659 schemas.  The first load
finds each record by the generator's layout (`_lazy_index`: a record opens with its name,
domain and since_version, one a line, and closes at the first line that is just ``  }``;
a JSON string holds no newline, so neither can be inside one) and parses one record
when its schema is first made.  Anything the index does not account for (another
layout, an escaped name, versions out of order) parses the whole file instead;
``tests/defs/test_defs.py`` checks that both readings give the same table.
"""

from __future__ import annotations

import operator
import os
from bisect import bisect_right

from .opschema import OpSchema

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

DATA_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "opschemas.json")
#: onnxruntime's contrib operators (tools/gen_contrib_schemas.py), a table of its own: onnx
#: does not know them, so they are found by `get_schema` in their domain only and are not
#: listed by `get_all_schemas*` (which stay onnx's lists).
CONTRIB_DATA_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "contrib_microsoft.json")
MICROSOFT_DOMAIN = "com.microsoft"
CONTRIB_DOMAINS = frozenset({MICROSOFT_DOMAIN})

# onnx takes the version as a C int: outside this range its bindings raise TypeError.
_INT_MIN, _INT_MAX = -2**31, 2**31 - 1

ONNX_DOMAIN = ""
AI_ONNX_DOMAIN = "ai.onnx"
ONNX_ML_DOMAIN = "ai.onnx.ml"
AI_ONNX_PREVIEW_DOMAIN = "ai.onnx.preview"
AI_ONNX_PREVIEW_TRAINING_DOMAIN = "ai.onnx.preview.training"


class SchemaError(LookupError):
    """No schema is registered for an operator at the version and domain asked for."""


class _Table:
    """The parsed data file: the per-domain opset ranges and the (domain, op) index."""

    __slots__ = ("onnx_version", "domain_versions", "index")

    def __init__(self, data: dict, index: dict | None = None) -> None:
        self.onnx_version: str = data.get("onnx_version", "")
        self.domain_versions: dict[str, tuple[int, int]] = {
            d: (r[0], r[1]) for d, r in data.get("domain_versions", {}).items()}
        # (domain, name) -> [since_versions ascending, records or OpSchemas in step]
        self.index: dict[tuple[str, str], tuple[list, list]] = index if index is not None else {}
        if index is not None:
            return
        for record in data["schemas"]:  # sorted by domain, name, since_version
            key = (record["domain"], record["name"])
            entry = self.index.get(key)
            if entry is None:
                entry = self.index[key] = ([], [])
            entry[0].append(record["since_version"])
            entry[1].append(record)

    def schema_at(self, entry: tuple, i: int) -> OpSchema:
        item = entry[1][i]
        if type(item) is bytes:
            item = _json_loads(item)
        if type(item) is dict:
            item = entry[1][i] = OpSchema.from_record(item)
        return item


# A record as the generator lays it out: a line that is just "  {", then its name, domain
# and since_version one a line (names and domains without escapes); it closes with the
# first line that is just "  }".
_RECORD_HEAD = (rb'\n  \{\n   "name": "([^"\\\n]*)",\n   "domain": "([^"\\\n]*)",\n'
                rb'   "since_version": (-?[0-9]+),\n')
_SCHEMAS_OPEN = b'\n "schemas": [\n'
_RECORD_OPEN = b"\n  {\n"
_RECORD_CLOSE = b"\n  }"


def _lazy_index(data: bytes) -> tuple[dict, dict] | None:
    """``(header, index)`` of the table in ``data`` with each record left as its JSON text,
    or None when the text is not laid out as the generator lays it out."""
    import re  # noqa: PLC0415 - the checker has imported it already

    at = data.find(_SCHEMAS_OPEN)
    if at < 0 or not data.startswith(b"{"):
        return None
    head = data[:at].rstrip()
    if not head.endswith(b","):
        return None
    try:
        header = _json_loads(head[:-1] + b"\n}")
    except ValueError:
        return None
    if not isinstance(header, dict) or "schemas" in header:
        return None
    body = at + len(_SCHEMAS_OPEN) - 1  # at the newline before the first record
    index: dict[tuple[str, str], tuple[list, list]] = {}
    last = None
    find = data.find
    match = re.compile(_RECORD_HEAD).match  # at each record's start (bytes.find finds them
    start = body                            # faster than a regular expression's search)
    while True:
        start = find(_RECORD_OPEN, start)
        if start < 0:
            break
        m = match(data, start)
        if m is None:
            return None  # a record this index cannot read: let the full parse read them all
        end = find(_RECORD_CLOSE, start + 1)
        if end < 0:
            return None
        name, domain, version = m.group(1, 2, 3)
        key = (domain.decode(), name.decode())
        version = int(version)
        if last is not None and (key, version) <= last:
            return None  # not sorted as the generator sorts: let the full parse decide
        last = (key, version)
        entry = index.get(key)
        if entry is None:
            entry = index[key] = ([], [])
        entry[0].append(version)
        start = end + len(_RECORD_CLOSE)
        entry[1].append(data[m.start() + 1:start])
    if not index:
        return None
    return header, index


_scanner: list = []


def _json_loads(text: bytes):
    """``json.loads(text)`` by the standard library's C scanner, without importing `json`.

    Importing `json` compiles half a dozen regular expressions (its decoder's and its
    encoder's), a few milliseconds that a check of a small model would pay for reading a
    dozen records; `_json.make_scanner` is what `json` itself uses.  Without it (another
    Python): `json.loads`.
    """
    if not _scanner:
        try:
            from _json import make_scanner  # noqa: PLC0415
        except ImportError:
            import json  # noqa: PLC0415

            _scanner.append(None)
            _scanner.append(json.loads)
        else:
            constants = {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}
            context = type("JSONContext", (), dict(
                strict=True, object_hook=None, object_pairs_hook=None, parse_float=float,
                parse_int=int, parse_constant=constants.__getitem__, memo={}))()
            _scanner.append(make_scanner(context))
            _scanner.append(None)
    scan, fallback = _scanner
    if scan is None:
        return fallback(text)
    string = text.decode("utf-8")
    begin = len(string) - len(string.lstrip(" \t\n\r"))
    try:
        value, end = scan(string, begin)
    except StopIteration:
        raise ValueError("no JSON value") from None
    if string[end:].strip(" \t\n\r"):
        raise ValueError("extra data after a JSON value")
    return value


def _read_table(path: str) -> _Table:
    with open(path, "rb") as f:
        data = f.read()
    lazy = _lazy_index(data)
    if lazy is not None:
        return _Table(lazy[0], lazy[1])
    return _Table(_json_loads(data))


_table: _Table | None = None
_contrib: _Table | None = None


def _load() -> _Table:
    global _table
    if _table is None:
        _table = _read_table(DATA_FILE)
    return _table


def _load_contrib() -> _Table:
    global _contrib
    if _contrib is None:
        _contrib = _read_table(CONTRIB_DATA_FILE)
    return _contrib


def _arguments(op_type, max_inclusive_version, domain) -> tuple:
    """``(op_type, version or None, domain)``, refusing the types onnx's bindings refuse.

    As onnx's second overload ``get_schema(op_type, domain)``, a string in the version's
    place is the domain.
    """
    if isinstance(max_inclusive_version, str):
        if domain != "":
            raise TypeError("get_schema(op_type, domain) takes the domain once")
        max_inclusive_version, domain = None, max_inclusive_version
    if not isinstance(op_type, str):
        raise TypeError(f"op_type must be a str, not {type(op_type).__name__}")
    if not isinstance(domain, str):
        raise TypeError(f"domain must be a str, not {type(domain).__name__}")
    if max_inclusive_version is not None:
        try:
            max_inclusive_version = operator.index(max_inclusive_version)
        except TypeError:
            raise TypeError("max_inclusive_version must be an int, not "
                            f"{type(max_inclusive_version).__name__}") from None
        if not _INT_MIN <= max_inclusive_version <= _INT_MAX:
            raise TypeError(f"max_inclusive_version {max_inclusive_version} is outside the "
                            "range of a C int, which onnx's bindings take")
    return op_type, max_inclusive_version, domain


# -- schemas a program registers (onnx.defs.register_schema) ------------------------------------
#
# Kept beside the generated tables, which never change: (domain, name) -> ([since_versions
# ascending], [schemas in step]); the generated schemas a program deregistered, by (domain,
# name, since_version); the domain ranges `register_schema` widened.  `changes` counts every
# registration and deregistration: a cache of lookups (inference's) compares it.

_registered: dict[tuple[str, str], tuple[list, list]] = {}
_removed: set[tuple[str, str, int]] = set()
_ranges: dict[str, tuple[int, int]] = {}
changes = 0


def _table_for(domain: str) -> _Table:
    return (_contrib or _load_contrib()) if domain in CONTRIB_DOMAINS else (_table or _load())


def _find(op_type: str, version: int | None, domain: str) -> OpSchema | None:
    if _registered or _removed:
        return _find_changed(op_type, version, domain)
    table = _table_for(domain)
    entry = table.index.get((domain, op_type))
    if entry is None:
        return None
    i = len(entry[0]) - 1 if version is None else bisect_right(entry[0], version) - 1
    return table.schema_at(entry, i) if i >= 0 else None


def _find_generated(op_type: str, version: int, domain: str) -> OpSchema | None:
    """The generated table's schema of exactly ``version``, deregistered or not."""
    table = _table_for(domain)
    entry = table.index.get((domain, op_type))
    if entry is None or version not in entry[0]:
        return None
    return table.schema_at(entry, entry[0].index(version))


def _versions(domain: str, op_type: str) -> list[tuple[int, int, Any]]:
    """Every schema of an operator, generated and registered: ``[(since_version, source,
    where)]`` sorted, without the deregistered ones (source 0: the table, 1: registered)."""
    out: list[tuple[int, int, Any]] = []
    table = _table_for(domain)
    entry = table.index.get((domain, op_type))
    if entry is not None:
        out.extend((v, 0, (table, entry, i)) for i, v in enumerate(entry[0])
                   if (domain, op_type, v) not in _removed)
    mine = _registered.get((domain, op_type))
    if mine is not None:
        out.extend((v, 1, schema) for v, schema in zip(*mine))
    out.sort(key=lambda item: item[0])
    return out


def _made(item: tuple[int, int, Any]) -> OpSchema:
    if item[1] == 1:
        return item[2]
    table, entry, i = item[2]
    return table.schema_at(entry, i)


def _find_changed(op_type: str, version: int | None, domain: str) -> OpSchema | None:
    chosen = None
    for item in _versions(domain, op_type):
        if version is None or item[0] <= version:
            chosen = item
    return None if chosen is None else _made(chosen)


def register_schema(schema: OpSchema) -> None:
    """Make ``schema`` (a copy of it, as onnx keeps) found by every lookup, the checker's
    and inference's included.  As ``onnx.defs.register_schema``, the domain's opset range
    is widened to the schema's version if needed; `SchemaError` if the operator already
    has a schema at that version in that domain."""
    if not isinstance(schema, OpSchema):
        raise TypeError(f"register_schema takes an OpSchema, not {type(schema).__name__}")
    global changes
    domain, name, version = schema.domain, schema.name, schema.since_version
    if (domain, name, version) in _removed and _find_generated(name, version, domain) is schema:
        _removed.discard((domain, name, version))  # a deregistered generated schema put back
        changes += 1
        return
    if any(v == version for v, _source, _where in _versions(domain, name)):
        raise SchemaError(f"Trying to register schema with name {name} (domain: {domain} version: "
                          f"{version}), but it is already registered")
    known = domain_version_range(domain)
    low, high = known or (version, version)
    if known is None or not low <= version <= high:
        _ranges[domain] = (min(low, version), max(high, version))
    versions, schemas = _registered.setdefault((domain, name), ([], []))
    at = bisect_right(versions, version)
    versions.insert(at, version)
    schemas.insert(at, schema._copy())
    changes += 1


def deregister_schema(op_type: str, version: int, domain: str) -> None:
    """Remove the schema of ``op_type`` registered at exactly ``version`` in ``domain``, a
    program's or a generated one (as onnx allows); `SchemaError` if there is none."""
    global changes
    if not (isinstance(op_type, str) and isinstance(domain, str) and isinstance(version, int)):
        raise TypeError("deregister_schema takes (op_type: str, version: int, domain: str), not "
                        f"({type(op_type).__name__}, {type(version).__name__}, {type(domain).__name__})")
    mine = _registered.get((domain, op_type))
    if mine is not None and version in mine[0]:
        at = mine[0].index(version)
        del mine[0][at], mine[1][at]
        if not mine[0]:
            del _registered[(domain, op_type)]
    elif any(v == version and source == 0 for v, source, _where in _versions(domain, op_type)):
        _removed.add((domain, op_type, version))
    else:
        raise SchemaError(f"Attempting to deregister an unregistered schema with name: {op_type} "
                          f"domain: {domain} version: {version}")
    changes += 1


def set_domain_to_version(domain: str, min_version: int, max_version: int) -> None:
    """Set the opset range known for ``domain`` (onnx's ``C.set_domain_to_version``)."""
    _ranges[domain] = (int(min_version), int(max_version))


def schema_version_map() -> dict[str, tuple[int, int]]:
    """Every domain's ``(min, max)`` opset range (onnx's ``C.schema_version_map``)."""
    return {**(_table or _load()).domain_versions, **_ranges}


def get_schema(op_type: str, max_inclusive_version: int | None = None,
               domain: str = ONNX_DOMAIN) -> OpSchema:
    """The schema of ``op_type`` with the largest since_version <= ``max_inclusive_version``.

    ``None`` means the newest.  ``domain`` "" is ai.onnx; like onnx.defs, the spelling
    "ai.onnx" is not looked up (see `normalize_domain`).  Raises `SchemaError` with
    onnx's message when there is none.
    """
    op_type, version, domain = _arguments(op_type, max_inclusive_version, domain)
    schema = _find(op_type, version, domain)
    if schema is None:
        at = "" if version is None else f" version '{version}'"
        raise SchemaError(f"No schema registered for '{op_type}'{at} and domain '{domain}'!")
    return schema


def has_schema(op_type: str, max_inclusive_version: int | None = None,
               domain: str = ONNX_DOMAIN) -> bool:
    """True when `get_schema` with the same arguments would return a schema (``onnx.defs.has``)."""
    return _find(*_arguments(op_type, max_inclusive_version, domain)) is not None


def get_all_schemas_with_history() -> list[OpSchema]:
    """Every version of every operator, sorted by domain, name and since_version (with the
    schemas a program registered, without those it deregistered)."""
    table = _table or _load()
    if _registered or _removed:
        return [_made(item) for key in _all_keys(table) for item in _versions(*key)]
    return [table.schema_at(entry, i)
            for _key, entry in sorted(table.index.items()) for i in range(len(entry[0]))]


def _all_keys(table: _Table) -> list[tuple[str, str]]:
    """The (domain, name) of onnx's table and of registered schemas (contrib ones only when
    registered: the contrib table is listed by `get_contrib_schemas`)."""
    return sorted(set(table.index) | set(_registered))


def get_function_ops() -> list[OpSchema]:
    """The newest schema of every operator defined as a function (a static body or one
    built per node), as ``onnx.defs.get_function_ops``."""
    return [s for s in get_all_schemas() if s.has_function or s.has_context_dependent_function]


def get_contrib_schemas() -> list[OpSchema]:
    """Every schema of onnxruntime's contrib domains (com.microsoft), sorted by name and version.

    Not part of `get_all_schemas_with_history`, which lists onnx's schemas as onnx does.
    """
    table = _contrib or _load_contrib()
    return [table.schema_at(entry, i)
            for _key, entry in sorted(table.index.items()) for i in range(len(entry[0]))]


def is_contrib_domain(domain: str) -> bool:
    """True for a domain whose schemas come from onnxruntime's table, not onnx's."""
    return domain in CONTRIB_DOMAINS


def get_all_schemas() -> list[OpSchema]:
    """The newest version of every operator, sorted by domain and name."""
    table = _table or _load()
    if _registered or _removed:
        newest = (_versions(*key) for key in _all_keys(table))
        return [_made(items[-1]) for items in newest if items]
    return [table.schema_at(entry, len(entry[0]) - 1) for _key, entry in sorted(table.index.items())]


def domain_version_range(domain: str) -> tuple[int, int] | None:
    """``(min, max)`` opset version known for ``domain``, None for a domain onnx does not know.

    The ranges are onnx's ``schema_version_map()`` (it lists ai.onnx.training, which
    has no operators); "" is ai.onnx and, as there, "ai.onnx" is not a key.  A range
    `register_schema` or `set_domain_to_version` set comes first.
    """
    found = _ranges.get(domain)
    return found if found is not None else (_table or _load()).domain_versions.get(domain)


def onnx_opset_version() -> int:
    """The newest opset version of the ai.onnx domain."""
    return domain_version_range(ONNX_DOMAIN)[1]  # type: ignore[index]


def onnx_ml_opset_version() -> int:
    """The newest opset version of the ai.onnx.ml domain."""
    return domain_version_range(ONNX_ML_DOMAIN)[1]  # type: ignore[index]


def reference_version() -> str:
    """The onnx release the table was generated from."""
    return (_table or _load()).onnx_version


def normalize_domain(domain: str) -> str:
    """"" for "ai.onnx", any other domain unchanged: the rule onnx's checker applies
    to node and opset-import domains before it looks a schema up."""
    return ONNX_DOMAIN if domain == AI_ONNX_DOMAIN else domain


def is_onnx_domain(domain: str) -> bool:
    """True for both spellings of the default domain, "" and "ai.onnx"."""
    return domain == ONNX_DOMAIN or domain == AI_ONNX_DOMAIN
