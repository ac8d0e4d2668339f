"""``irmodel convert IN OUT ...``: copy a model, its tensors inline or in external data files."""

from __future__ import annotations

import argparse
import os
import stat
import sys

from ..errors import ExternalDataError
from .progress import human_bytes
from .common import (EXIT_OK, PROTOBUF_LIMIT, OutputError, UsageError, load_model, model_dir,
                     progress_line, whole_number)

_CONVERT_DESCRIPTION = """\
Write the model IN to OUT, in one of three ways:

  (no flag)        a copy as it is: tensors stay inline or external as they are.  When
                   OUT is in another directory, the data files IN's tensors use are
                   copied beside OUT, whole and byte for byte (same locations, offsets
                   and checksums), their holes kept holes (a sparse file stays
                   sparse); files of those names there are replaced.
  --external-data  initializers (in subgraphs too) of at least --size-threshold bytes
                   go to external data beside OUT, at offsets aligned to 4096: one
                   file, --location (default: OUT's name + ".data"), or one file per
                   tensor named after it (--file-per-tensor; a name that is not a safe
                   file name gets a random one).  Other tensors go inline.
  --single-file    every tensor inline: one self-contained file.  A result of 2 GiB or
                   more is written (irmodel reads it) with a warning: protobuf-based
                   readers (onnx, onnxruntime) cannot read it.  (Any OUT of that size
                   gets the warning.)

IN's external data is read from IN's directory, and checked first: a missing, unsafe
or too short data file is an invalid input (status 1), and nothing is written.  OUT
may be IN, and a new data file may have the name of one IN reads: every file is
written to a temporary file and renamed into place, while the old contents stay
mapped for reading.  Data files IN used are never deleted.  A data file is never
allowed to replace IN or OUT (status 2).
"""

_CONVERT_EPILOG = """\
exit status: 0 ok; 1 invalid input (IN or its external data); 2 usage or I/O error
(including an output that cannot be written as asked)."""

_EXTERNAL_ONLY = ("location", "size_threshold", "one_file", "file_per_tensor", "checksum")


def _location(value: str) -> str:
    from .._files.external_data import location_problem  # noqa: PLC0415

    problem = location_problem(value)
    if problem is not None:
        problem = problem.replace("the model directory", "OUT's directory")
        raise argparse.ArgumentTypeError(f"unsafe location {value[:200]!r}: {problem}")
    return value




def add_parser(sub: argparse._SubParsersAction) -> None:
    c = sub.add_parser("convert", help="copy a model, moving its tensors to external data files or inline",
                       description=_CONVERT_DESCRIPTION, epilog=_CONVERT_EPILOG,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    c.add_argument("path", metavar="IN")
    c.add_argument("out", metavar="OUT")
    mode = c.add_mutually_exclusive_group()
    mode.add_argument("--external-data", action="store_true",
                      help="move initializers of at least --size-threshold bytes to data files beside OUT")
    mode.add_argument("--single-file", action="store_true",
                      help="put every tensor inline, IN's external data included")
    g = c.add_argument_group("options of --external-data")
    g.add_argument("--location", type=_location, metavar="L",
                   help="the data file, relative to OUT's directory (default: OUT's name + '.data')")
    g.add_argument("--size-threshold", type=whole_number("a number of bytes"), metavar="N",
                   help="move tensors whose raw data reaches N bytes as onnx counts them "
                        "(sys.getsizeof: the byte count plus 33; default 1024)")
    layout = g.add_mutually_exclusive_group()
    layout.add_argument("--one-file", action="store_true", help="all tensors in one file (the default)")
    layout.add_argument("--file-per-tensor", action="store_true",
                        help="each tensor in its own file, named after the tensor")
    g.add_argument("--checksum", action="store_true",
                   help="record the SHA1 of each tensor's bytes (ExternalData.md's 'checksum' key)")
    c.set_defaults(func=run)


def _check_convert_options(args) -> None:
    """The option combinations argparse cannot express: ``--external-data``'s own options."""
    if not args.external_data:
        given = [name for name in _EXTERNAL_ONLY if getattr(args, name) not in (None, False)]
        if given:
            flag = "--" + given[0].replace("_", "-")
            raise UsageError(f"{flag} needs --external-data (see 'irmodel convert --help')")
    if args.location is not None and args.file_per_tensor:
        raise UsageError("--location names the one data file; it cannot be used with "
                         "--file-per-tensor (see 'irmodel convert --help')")


def _check_output(path: str) -> None:
    """Refuse an OUT that cannot be a model file, before anything is read or written.

    OUT must be a regular file (or a link to one) or not exist.  A device or a pipe is
    refused: data files are written beside OUT, which for ``/dev/stdout`` means into
    ``/dev``, and the model file is meant to replace OUT, not to stream into it.
    """
    try:
        st = os.stat(path)
    except FileNotFoundError:
        st = None
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise IsADirectoryError(21, "Is a directory", path)
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise OSError(19, "Not a regular file (convert replaces OUT, it does not write into it)", path)
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise FileNotFoundError(2, "No such file or directory", os.path.dirname(path) or parent)


def _write_model(model, out: str, progress, done: int = 0) -> None:
    """Write ``model`` to ``out`` atomically, reporting bytes (from ``done``) to ``progress``."""
    from .._files.atomic import atomic_write  # noqa: PLC0415
    from ..io import write_model  # noqa: PLC0415

    atomic_write(out, lambda fh: write_model(model, fh, durable=True, progress=lambda n: progress(done + n)))


def _input_external_tensors(model, in_dir: str, copy: bool) -> tuple:
    """``(tensors, nbytes)``: every external tensor of IN, validated, and the bytes to
    read: for a copy, the data files' sizes (checked, not mapped: `data_file_sources`),
    else the tensors' bytes (mapped, for inlining or moving).

    Run before anything is written, so that an `ExternalDataError` here is IN's fault
    (status 1) and leaves no output behind.  The nodes that cannot hold a tensor are
    skipped by reading their bytes (`tensor_holders`): a model of millions of nodes
    without any is not made node by node; the list found here serves the copy too.
    """
    from .._files.external_data import external_tensors, read_external_data  # noqa: PLC0415
    from .._files.external_write import data_file_sources  # noqa: PLC0415
    from .._wireview.holders import tensor_holders  # noqa: PLC0415

    tensors = list(external_tensors(model, tensor_holders))
    if copy:
        return tensors, sum(source.size for source in data_file_sources(tensors, in_dir))
    return tensors, sum(read_external_data(t, in_dir).nbytes for t in tensors)


def _plus(progress, later: int):
    """``progress`` for a first step, with the ``later`` bytes of a second one in its total."""
    def report(done: int, total: int | None = None) -> None:
        progress(done, None if total is None else total + later)
    return report


def _convert_copy(model, args, size: int, progress, tensors: list) -> None:
    from .._files.external_write import copy_external_data  # noqa: PLC0415

    # The data files first, the model last: a model never points at files not yet there.
    copied = copy_external_data(model, model_dir(args.path), model_dir(args.out),
                                model_path=os.path.abspath(args.out), protect=[args.path],
                                progress=_plus(progress, size), tensors=tensors)
    _write_model(model, args.out, progress, copied)


def _convert_single_file(model, args, size: int, progress, tensors: list) -> None:
    from .._files.external_data import load_external_data_for_model  # noqa: PLC0415
    from .._wireview.holders import tensor_holders  # noqa: PLC0415

    load_external_data_for_model(model, model_dir(args.path), pick=tensor_holders)  # views of the mapped files
    _write_model(model, args.out, progress)


def _convert_external(model, args, size: int, progress, tensors: list) -> None:
    from .._files.external_data import load_external_data_for_model  # noqa: PLC0415
    from .._files.external_write import save_with_external_data  # noqa: PLC0415
    from .._wireview.holders import tensor_holders  # noqa: PLC0415

    load_external_data_for_model(model, model_dir(args.path), pick=tensor_holders)
    threshold = 1024 if args.size_threshold is None else args.size_threshold
    save_with_external_data(model, args.out, all_tensors_to_one_file=not args.file_per_tensor,
                            location=args.location, size_threshold=threshold,
                            checksum=args.checksum, protect=[args.path], progress=progress)


def run(args: argparse.Namespace) -> int:
    _check_convert_options(args)
    model, size = load_model(args.path)
    _check_output(args.out)
    copy = not (args.external_data or args.single_file)
    tensors, data = _input_external_tensors(model, model_dir(args.path), copy)
    write = (_convert_external if args.external_data else
             _convert_single_file if args.single_file else _convert_copy)
    with progress_line("convert", size + data, fmt=human_bytes) as progress:
        try:
            write(model, args, size, progress, tensors)
        except ExternalDataError as exc:  # IN was checked above: this is about the output
            raise OutputError(f"{args.out}: cannot write: {exc}") from None
        except OSError as exc:
            if exc.filename is None:  # a failed write (disk full) names no file: it is OUT's
                exc.filename = args.out
            raise
    out_size = os.stat(args.out).st_size
    if out_size > PROTOBUF_LIMIT:
        print(f"irmodel: warning: {args.out} is {human_bytes(out_size)}, over protobuf's 2 GiB "
              "limit: irmodel reads it, onnx and onnxruntime cannot (--external-data keeps the "
              "model file small)", file=sys.stderr)
    return EXIT_OK
