"""``irmodel print MODEL [--elide-tensors N | --external-data DIR] [-o TEXT]``: a model as text.

The text is onnx's (``onnx.printer``) extended to say everything a model holds (see
docs/text-syntax.md), written as it is made.  Large tensors: printed in full by
default (``@raw 0x...``, lossless), or elided (``--elide-tensors N``: type, shape and
SHA1 of tensors over N elements; ``irmodel parse`` refuses such text unless told),
or written to DIR/tensors.bin (``--external-data DIR``), which ``irmodel parse
--data-dir DIR`` reads back.
"""

from __future__ import annotations

import argparse
import sys

from .common import EXIT_OK, load_model, whole_number


def add_parser(sub: argparse._SubParsersAction) -> None:
    c = sub.add_parser("print", help="print a model in the ONNX text syntax (lossless)")
    c.add_argument("path", metavar="MODEL")
    c.add_argument("-o", "--output", metavar="TEXT", help="write the text to TEXT instead of stdout")
    big = c.add_mutually_exclusive_group()
    big.add_argument("--elide-tensors", metavar="N", type=whole_number("a number of elements"),
                     help="print raw tensors of more than N elements as type, shape and SHA1 only")
    big.add_argument("--external-data", metavar="DIR",
                     help="write the bytes of raw tensors of 1024 bytes or more to DIR/tensors.bin")
    c.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..printer import write_text  # noqa: PLC0415

    model, _ = load_model(args.path)
    external = None
    if args.external_data:
        from .._text.datafile import DataFileWriter  # noqa: PLC0415

        external = DataFileWriter(args.external_data)
    try:
        if args.output:
            import os  # noqa: PLC0415
            import tempfile  # noqa: PLC0415

            directory = os.path.dirname(os.path.abspath(args.output))
            fd, tmp = tempfile.mkstemp(dir=directory, prefix=".irmodel-print-")
            try:
                with open(fd, "w", encoding="utf-8", newline="\n") as f:
                    write_text(model, f, elide_tensors=args.elide_tensors, external=external)
                os.replace(tmp, args.output)
            except BaseException:
                os.unlink(tmp)
                raise
        else:
            write_text(model, sys.stdout, elide_tensors=args.elide_tensors, external=external)
            sys.stdout.write("\n")
    finally:
        if external is not None:
            external.close()
    return EXIT_OK
