"""``irmodel raw FILE [--offsets] [--max-depth N]``: any protobuf file's wire structure."""

from __future__ import annotations

import argparse
import sys

from wirefmt.limits import MAX_DEPTH

from .progress import human_bytes
from .common import EXIT_OK, check_file, progress_line, whole_number


def add_parser(sub: argparse._SubParsersAction) -> None:
    c = sub.add_parser("raw", help="print any protobuf file's wire structure, no schema needed")
    c.add_argument("path", metavar="FILE")
    c.add_argument("--offsets", action="store_true",
                   help="prefix each field with the offset of its tag and of its value, and the value's length")
    c.add_argument("--max-depth", type=whole_number("a number", 0, MAX_DEPTH), default=MAX_DEPTH, metavar="N",
                   help=f"expand nested messages at most N levels deep (0-{MAX_DEPTH}, default {MAX_DEPTH})")
    c.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from wirefmt import raw  # noqa: PLC0415

    from ..io import read_buffer  # noqa: PLC0415

    check_file(args.path)
    buf = read_buffer(args.path)
    width = raw.offsets_width(len(buf)) if args.offsets else 0
    write = sys.stdout.write
    if args.offsets:
        write(raw.offsets_header(width) + "\n")
    with progress_line("raw", len(buf), fmt=human_bytes, streaming=True) as progress:
        for n, item in enumerate(raw.walk(buf, max_depth=args.max_depth)):
            write(raw.format_item(item, buf, width))
            write("\n")
            if not n & 1023:
                progress(item.field.tag_start)
    return EXIT_OK
