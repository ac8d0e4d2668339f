"""Type strings of operator schemas (``tensor(float)``, ``seq(map(int64, float))``), normalised.

A schema may spell an allowed type loosely: a bare element type (``float``) for a
tensor, spaces after a comma, ``map(int64, float)`` for a map to tensors.  onnx reads
each string into a type and writes it back (``DataTypeUtils::ToType``), and compares
types in that one spelling; `normalize_type_str` does the same on the text.  The names
of the element types are the reference's data-type strings (`ELEM_NAMES`, by
``TensorProto.DataType`` code), the one table of them (inference's type strings use it).
"""

from __future__ import annotations

from .._dtypes.table import ROWS

#: The schema type-string name of each element type: the dtype table's enum names in lower
#: case (``FLOAT8E4M3FN`` -> ``float8e4m3fn``), as the reference's ``data_type_utils`` writes them.
ELEM_NAMES = {row[0]: row[1].lower() for row in ROWS}
ELEM_CODES = {v: k for k, v in ELEM_NAMES.items()}

#: Nesting deeper than this is refused: a schema's type string is written by a person,
#: and the reader recurses once per level.
MAX_TYPE_DEPTH = 64

_cache: dict[str, str] = {}
_MAX_CACHED = 4096  # the built-in schemas spell a few hundred; registered ones add a few


def strip_parens(s: str) -> str:
    """``ParensWhitespaceStrip``: one opening and one closing parenthesis and the spaces
    around them (the reference's reading, which does not insist on either)."""
    s = s.strip()
    if s.startswith("("):
        s = s[1:]
    s = s.strip()
    if s.endswith(")"):
        s = s[:-1]
    return s.strip()


def _element(name: str) -> str:
    if name not in ELEM_CODES:
        raise ValueError(f"DataTypeUtils::FromDataTypeString - Received invalid data type string '{name}'.")
    return name


def _normalize(s: str, depth: int) -> str:
    if depth > MAX_TYPE_DEPTH:
        raise ValueError(f"type string nested deeper than {MAX_TYPE_DEPTH} levels")
    s = s.strip()
    for kind in ("seq", "optional"):
        if s.startswith(kind):
            return f"{kind}({_normalize(strip_parens(s[len(kind):]), depth + 1)})"
    if s.startswith("map"):
        key, _, value = strip_parens(s[3:]).partition(",")
        return f"map({_element(key.strip())},{_normalize(value, depth + 1)})"
    if s.startswith("opaque"):
        inner = strip_parens(s[6:])
        domain, comma, name = inner.partition(",")
        if not comma:
            domain, name = "", inner
        return f"opaque({domain + ',' if domain else ''}{name})"
    if s.startswith("sparse_tensor"):
        return f"sparse_tensor({_element(strip_parens(s[13:]))})"
    if s.startswith("tensor"):
        return f"tensor({_element(strip_parens(s[6:]))})"
    return f"tensor({_element(s)})"


def normalize_type_str(type_str: str) -> str:
    """The reference's spelling of the type ``type_str`` names; ValueError if it names none."""
    found = _cache.get(type_str)
    if found is None:
        if not isinstance(type_str, str):
            raise TypeError(f"a type string must be a str, not {type(type_str).__name__}")
        found = _normalize(type_str, 0)
        if len(_cache) < _MAX_CACHED:
            _cache[type_str] = found
    return found
