"""Generate irmodel/defs/opschema_docs.json: the doc string of every schema (development time only).

    python tools/gen_opschema_docs.py [--output PATH]

The doc strings are kept apart from opschemas.json: the checker and inference never read
them, and a lookup should not pay for half a megabyte of text; `OpSchema.doc` reads this
file on its first use.  Entries are ``[domain:name:since_version, doc]``; a schema without
a doc string has none.  The layout is one schema a line, sorted, so that a changed doc is a
one-line diff.  ``tests/onnx_defs/test_onnx_defs_docs.py`` regenerates the file and fails on
any byte of difference.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_opschemas import render  # noqa: E402
from generated_file import generator_main  # noqa: E402

FORMAT_VERSION = 1
DEFAULT_OUTPUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                              "irmodel", "defs", "opschema_docs.json")


def build_docs() -> dict:
    import onnx
    import onnx.defs

    docs = sorted([f"{s.domain}:{s.name}:{s.since_version}", s.doc]
                  for s in onnx.defs.get_all_schemas_with_history() if s.doc)
    return {
        "format_version": FORMAT_VERSION,
        "generated_by": "tools/gen_opschema_docs.py",
        "onnx_version": onnx.__version__,
        "docs": docs,  # [key, doc] pairs, one a line
    }


def main(argv: list | None = None) -> int:
    return generator_main(lambda: render(build_docs()), DEFAULT_OUTPUT, __doc__.split("\n\n")[0], argv)


if __name__ == "__main__":
    sys.exit(main())
