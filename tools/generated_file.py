"""The command line every table generator in tools/ shares.

A generated file is a fact about the reference at one version; the test that guards
it regenerates it and compares.  One command line for all of them, so that each
generator is only its ``produce`` function:

    python tools/gen_X.py [--output PATH] [--check]

writes the file atomically (a temporary file, then a rename: an interrupted run
leaves the old file), or with ``--check`` writes nothing and exits 1 when the file
differs from what would be written (what CI and the guarding tests ask).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Callable, Union

Produced = Union[str, bytes]


def generator_main(produce: Callable[[], Produced], default_output: str, description: str,
                   argv: list | None = None) -> int:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--output", default=default_output, help="default: %(default)s")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 if the file is not what would be written")
    args = parser.parse_args(argv)
    produced = produce()
    data = produced.encode("utf-8") if isinstance(produced, str) else produced
    if args.check:
        try:
            with open(args.output, "rb") as f:
                current = f.read()
        except OSError as exc:
            print(f"{args.output}: cannot read ({exc.strerror})", file=sys.stderr)
            return 1
        if current != data:
            print(f"{args.output} is stale: run python {os.path.relpath(sys.argv[0])}", file=sys.stderr)
            return 1
        return 0
    tmp = args.output + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, args.output)
    print(f"wrote {args.output}: {len(data)} bytes", file=sys.stderr)
    return 0
