"""How a report shows a name or a string read from a file: as it is when it is a plain
word, else quoted with escapes, and cut after `MAX_STRING_CHARS` (a name of 1 MB is cut).

Its own module so that ``irmodel inspect`` shows names without importing the hex and raw
views of `irmodel._report.dump` (which uses these too).
"""

from __future__ import annotations

from wirefmt.safetext import name_text as _safe_name
from wirefmt.safetext import quote as _safe_quote

#: Characters of a string or name shown before it is cut.
MAX_STRING_CHARS = 200


def quote(text) -> str:
    """A string as ``"..."`` (`wirefmt.safetext.quote`), cut after `MAX_STRING_CHARS`."""
    return _safe_quote(text, MAX_STRING_CHARS)


def name_text(s: str | bytes | memoryview) -> str:
    """A name as is when it is a plain identifier-like word, else quoted (and cut)."""
    return _safe_name(s, MAX_STRING_CHARS)
