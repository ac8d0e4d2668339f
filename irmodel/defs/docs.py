"""The doc strings of the generated schemas, read from opschema_docs.json on first use.

Kept apart from the schema table (tools/gen_opschema_docs.py writes them): nothing the
checker or inference does reads a doc string, so only a program asking for
``OpSchema.doc`` pays for reading half a megabyte of text.
"""

from __future__ import annotations

import os

DOCS_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "opschema_docs.json")

_docs: dict[str, str] | None = None


def schema_doc(domain: str, name: str, since_version: int) -> str | None:
    """The doc string onnx has for the schema, None when it has none (or the file is absent)."""
    global _docs
    if _docs is None:
        import json  # noqa: PLC0415 - only a program reading doc strings pays for it

        try:
            with open(DOCS_FILE, "rb") as f:
                entries = json.loads(f.read())["docs"]
        except FileNotFoundError:
            entries = []
        _docs = {key: doc for key, doc in entries}
    return _docs.get(f"{domain}:{name}:{since_version}")
