"""The ``irmodel`` command line: ``inspect``, ``dump``, ``raw``, ``check`` and ``convert``.

Exit status: 0 ok; 1 invalid input (`DecodeError`, `ValidationError`,
`ExternalDataError`: the file is at fault); 2 usage or I/O error (the command line, the
file system or the machine is at fault, out of memory included); 3 an internal error,
i.e. a bug in irmodel; 130 interrupted.  Every failure
is reported as one line on stderr starting with ``irmodel:``, never as a traceback
(set ``IRMODEL_DEBUG=1`` to get the traceback of an internal error).

Files are memory-mapped, never read whole.  ``inspect``, ``dump`` and ``raw`` never
load external data: they describe a file as it is stored; ``convert`` resolves it
(mapped too) to write it elsewhere.  None of the commands imports numpy.
"""

from __future__ import annotations

import argparse
import json
import os
import stat
import sys

from wirefmt.limits import MAX_DEPTH

from .errors import DecodeError, ExternalDataError, ValidationError
from .progress import Progress, human_bytes

EXIT_OK, EXIT_INVALID, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3
#: protobuf's hard limit: its parsers (and so onnx and onnxruntime) refuse a message of
#: 2 GiB or more.  We read and write such files; ``convert`` warns when it makes one.
PROTOBUF_LIMIT = (1 << 31) - 1


class UsageError(Exception):
    """A bad command line; reported in one line with a pointer to ``--help``."""


class OutputError(Exception):
    """The output cannot be written as asked (status 2, like a usage or I/O error).

    Kept apart from `ExternalDataError`, which says the *input* is at fault (status 1):
    a data file that would replace the input, a symlink or a hard-linked file at the
    target are the command line's or the file system's problem, not the model's.
    """


class _Parser(argparse.ArgumentParser):
    """argparse, but errors raise `UsageError` instead of printing usage and exiting."""

    def error(self, message: str):
        raise UsageError(f"{message} (see '{self.prog} --help')")


# -- opening files -------------------------------------------------------------------------

def _check_file(path: str) -> os.stat_result:
    """Stat ``path`` and refuse what cannot be a model file (directories, devices)."""
    st = os.stat(path)
    if stat.S_ISDIR(st.st_mode):
        raise IsADirectoryError(21, "Is a directory", path)
    if not (stat.S_ISREG(st.st_mode) or stat.S_ISFIFO(st.st_mode)):
        raise OSError(19, "Not a regular file", path)
    return st


def _open_buffer(path: str):
    """The file's bytes as a buffer: a read-only mmap for a regular file, bytes for a pipe."""
    import mmap  # noqa: PLC0415

    st = _check_file(path)
    with open(path, "rb") as fh:
        if stat.S_ISFIFO(st.st_mode):
            return fh.read()
        if os.fstat(fh.fileno()).st_size == 0:
            return b""
        return mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)


def _load(path: str, type_name: str = "ModelProto"):
    """Open a message lazily, without its external data; ModelProto must look like one."""
    from .io import load, loads  # noqa: PLC0415

    st = _check_file(path)
    if stat.S_ISFIFO(st.st_mode):
        with open(path, "rb") as fh:
            data = fh.read()
        msg, size = loads(data, type_name), len(data)
    else:
        msg = load(path, load_external_data=False, type_name=type_name)
        size = st.st_size
    if type_name == "ModelProto" and not (msg.HasField("ir_version") or msg.HasField("graph")):
        # Protobuf reads an empty file (or most other protobuf files) as a ModelProto
        # with nothing set; onnx.load accepts it too.  As a *model* it is useless, and
        # almost always a failed download or write: say so (onnx.checker rejects it too).
        if size == 0:
            raise ValidationError("empty file (0 bytes): not an ONNX model")
        raise ValidationError("not an ONNX model: it has neither an ir_version nor a graph")
    return msg, size


def _model_dir(path: str) -> str:
    return os.path.dirname(os.path.abspath(path))


def _progress(label: str, total: int | None = None, fmt=None, streaming: bool = False) -> Progress:
    """A progress line on stderr; for streaming commands only when stdout is not the terminal too."""
    enabled = None
    if streaming and sys.stdout.isatty():
        enabled = False  # the output itself shows progress; a status line would tear it
    kwargs = {"fmt": fmt} if fmt else {}
    return Progress(label, total, enabled=enabled, **kwargs)


def _write_lines(lines, progress: Progress | None = None) -> None:
    write = sys.stdout.write
    for n, line in enumerate(lines, 1):
        write(line)
        write("\n")
        if progress is not None and not n & 1023:
            progress(n)


# -- inspect -------------------------------------------------------------------------------

def _inspect_lines(s: dict, path: str, size: int) -> list:
    from .summary import type_text  # noqa: PLC0415
    from .text import name_text, quote  # noqa: PLC0415

    def opt(v) -> str:
        return "(none)" if v in ("", None) else (name_text(v) if isinstance(v, str) else str(v))

    def nbytes(n: int) -> str:
        return f"{n} bytes" + (f" ({human_bytes(n)})" if n >= 1024 else "")

    doc = s["doc_string"].split("\n", 1)[0]
    if doc != s["doc_string"]:
        doc += " ..."
    out = [f"file:           {name_text(path)}, {nbytes(size)}",
           f"ir_version:     {opt(s['ir_version']) if s['ir_version'] is not None else '(missing)'}",
           "producer:       " + (" ".join(name_text(p) for p in (s["producer_name"], s["producer_version"]) if p)
                                  or "(none)"),
           f"domain:         {opt(s['domain'])}",
           f"model_version:  {s['model_version']}",
           f"doc_string:     {opt(doc)}",
           "opset_import:   " + (", ".join(f"{o['domain'] or 'ai.onnx'} {o['version']}"
                                           for o in s["opset_import"]) or "(none)"),
           f"metadata:       {len(s['metadata_props']) or '(none)'}"]
    out += [f"  {name_text(p['key'])} = {quote(p['value'])}" for p in s["metadata_props"]]
    out.append(f"graph:          {opt(s['graph_name'])}")
    for title in ("inputs", "outputs"):
        values = s[title]
        shown = [v for v in values if not (title == "inputs" and v["initializer"])]
        out.append(f"{title + ':':<16}{len(values)}")
        width = max((len(name_text(v["name"])) for v in shown), default=0)
        out += [f"  {name_text(v['name']):<{width}}  {type_text(v)}" for v in shown]
        if len(shown) < len(values):
            out.append(f"  (and {len(values) - len(shown)} inputs that are initializers)")
    out.append(f"nodes:          {s['node_count']}")
    width = max((len(op) for op in s["op_types"]), default=0)
    out += [f"  {name_text(op):<{width}}  {n}" for op, n in s["op_types"].items()]
    out.append(f"initializers:   {s['initializer_count']}, {nbytes(s['initializer_bytes'])}")
    width = max((len(dt) for dt in s["initializers_by_dtype"]), default=0)
    out += [f"  {dt:<{width}}  {e['count']}, {nbytes(e['bytes'])}" for dt, e in s["initializers_by_dtype"].items()]
    if s["sparse_initializer_count"]:
        out.append(f"sparse initializers: {s['sparse_initializer_count']}")
    out.append(f"external data:  {len(s['external_data']) or '(none)'}")
    for e in s["external_data"]:
        where = f"{nbytes(e['file_size'])} on disk" if e["status"] == "ok" else e["status"]
        out.append(f"  {name_text(e['location'])}: {where}; {e['tensors']} tensors, "
                   f"{nbytes(e['bytes'])} referenced")
    out.append(f"functions:      {len(s['functions']) or '(none)'}")
    out += [f"  {name_text((f['domain'] + '::' if f['domain'] else '') + f['name'])}"
            f"{':' + f['overload'] if f['overload'] else ''} ({f['nodes']} nodes)" for f in s["functions"]]
    out.append(f"subgraphs:      {s['subgraph_count']}")
    if s["subgraph_count"] or s["training_info_count"]:
        out.append(f"nodes in all graphs: {s['total_node_count']}")
    if s["training_info_count"]:
        out.append(f"training_info:  {s['training_info_count']}")
    return out


def cmd_inspect(args) -> int:
    from .summary import summarize  # noqa: PLC0415

    model, size = _load(args.path)
    with _progress("inspect: nodes") as progress:
        s = summarize(model, base_dir=_model_dir(args.path), progress=progress)
    if args.json:
        json.dump(s, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        _write_lines(_inspect_lines(s, args.path, size))
    return EXIT_OK


# -- dump ------------------------------------------------------------------------------------

def cmd_dump(args) -> int:
    msg, _ = _load(args.path, args.type)
    if args.json:
        from . import to_dict  # noqa: PLC0415
        json.dump(to_dict(msg), sys.stdout, indent=2)
        sys.stdout.write("\n")
        return EXIT_OK
    from .text import dump_lines  # noqa: PLC0415
    with _progress("dump: lines", streaming=True) as progress:
        _write_lines(dump_lines(msg), progress)
    return EXIT_OK


def _type_name(value: str) -> str:
    from .io import message_class  # noqa: PLC0415
    try:
        message_class(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"unknown message type {value!r}") from None
    return value


# -- raw -------------------------------------------------------------------------------------

def cmd_raw(args) -> int:
    from wirefmt import raw  # noqa: PLC0415

    buf = _open_buffer(args.path)
    width = raw.offsets_width(len(buf)) if args.offsets else 0
    write = sys.stdout.write
    if args.offsets:
        write(raw.offsets_header(width) + "\n")
    with _progress("raw", len(buf), fmt=human_bytes, streaming=True) as progress:
        for n, item in enumerate(raw.walk(buf, max_depth=args.max_depth)):
            write(raw.format_item(item, buf, width))
            write("\n")
            if not n & 1023:
                progress(item.field.tag_start)
    return EXIT_OK


def _depth(value: str) -> int:
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {value!r}") from None
    if not 0 <= n <= MAX_DEPTH:
        raise argparse.ArgumentTypeError(f"must be between 0 and {MAX_DEPTH}")
    return n


# -- convert ---------------------------------------------------------------------------------

_CONVERT_DESCRIPTION = """\
Write the model IN to OUT, in one of three ways:

  (no flag)        a copy as it is: tensors stay inline or external as they are.  When
                   OUT is in another directory, the data files IN's tensors use are
                   copied beside OUT, whole and byte for byte (same locations, offsets
                   and checksums); files of those names there are replaced.
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
    from .external_data import location_problem  # noqa: PLC0415

    problem = location_problem(value)
    if problem is not None:
        problem = problem.replace("the model directory", "OUT's directory")
        raise argparse.ArgumentTypeError(f"unsafe location {value[:200]!r}: {problem}")
    return value


def _size(value: str) -> int:
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of bytes: {value!r}") from None
    if n < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, not {n}")
    return n


def _add_convert(sub) -> None:
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
    g.add_argument("--size-threshold", type=_size, metavar="N",
                   help="move tensors whose raw data reaches N bytes as onnx counts them "
                        "(sys.getsizeof: the byte count plus 33; default 1024)")
    layout = g.add_mutually_exclusive_group()
    layout.add_argument("--one-file", action="store_true", help="all tensors in one file (the default)")
    layout.add_argument("--file-per-tensor", action="store_true",
                        help="each tensor in its own file, named after the tensor")
    g.add_argument("--checksum", action="store_true",
                   help="record the SHA1 of each tensor's bytes (ExternalData.md's 'checksum' key)")
    c.set_defaults(func=cmd_convert)


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
    from .codec import write_message  # noqa: PLC0415
    from .io import atomic_write  # noqa: PLC0415

    atomic_write(out, lambda fh: write_message(model, fh, durable=True, progress=lambda n: progress(done + n)))


def _input_data_bytes(model, in_dir: str) -> int:
    """Validate (and map) every external tensor of IN; the bytes they hold.

    Run before anything is written, so that an `ExternalDataError` here is IN's fault
    (status 1) and leaves no output behind.
    """
    from .external_data import external_tensors, read_external_data  # noqa: PLC0415

    return sum(read_external_data(t, in_dir).nbytes for t in external_tensors(model))


def _plus(progress, later: int):
    """``progress`` for a first step, with the ``later`` bytes of a second one in its total."""
    def report(done: int, total: int | None = None) -> None:
        progress(done, None if total is None else total + later)
    return report


def _convert_copy(model, args, size: int, progress) -> None:
    from .external_write import copy_external_data  # noqa: PLC0415

    # The data files first, the model last: a model never points at files not yet there.
    copied = copy_external_data(model, _model_dir(args.path), _model_dir(args.out),
                                model_path=os.path.abspath(args.out), protect=[args.path],
                                progress=_plus(progress, size))
    _write_model(model, args.out, progress, copied)


def _convert_single_file(model, args, size: int, progress) -> None:
    from .external_data import load_external_data_for_model  # noqa: PLC0415

    load_external_data_for_model(model, _model_dir(args.path))  # views of the mapped files
    _write_model(model, args.out, progress)


def _convert_external(model, args, size: int, progress) -> None:
    from .external_data import load_external_data_for_model  # noqa: PLC0415
    from .external_write import save_with_external_data  # noqa: PLC0415

    load_external_data_for_model(model, _model_dir(args.path))
    threshold = 1024 if args.size_threshold is None else args.size_threshold
    save_with_external_data(model, args.out, all_tensors_to_one_file=not args.file_per_tensor,
                            location=args.location, size_threshold=threshold,
                            checksum=args.checksum, protect=[args.path], progress=progress)


def cmd_convert(args) -> int:
    _check_convert_options(args)
    model, size = _load(args.path)
    _check_output(args.out)
    data = _input_data_bytes(model, _model_dir(args.path))
    write = (_convert_external if args.external_data else
             _convert_single_file if args.single_file else _convert_copy)
    with _progress("convert", size + data, fmt=human_bytes) as progress:
        try:
            write(model, args, size, progress)
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


def cmd_check(args) -> int:
    from .checker.report import run_check  # noqa: PLC0415

    _check_file(args.path)
    return run_check(args.path, args.json, sys.stdout)


# -- the parser ------------------------------------------------------------------------------

def build_parser() -> argparse.ArgumentParser:
    from . import __version__  # noqa: PLC0415

    p = _Parser(prog="irmodel", description="Inspect, dump and convert ONNX models and protobuf files.")
    p.add_argument("--version", action="version", version=f"irmodel {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    c = sub.add_parser("inspect", help="summarise a model without reading its weights")
    c.add_argument("path", metavar="PATH")
    c.add_argument("--json", action="store_true", help="print the summary as JSON")
    c.set_defaults(func=cmd_inspect)

    c = sub.add_parser("dump", help="print a whole model as an indented tree (tensors summarised)")
    c.add_argument("path", metavar="PATH")
    c.add_argument("--json", action="store_true",
                   help="print protobuf's JSON form instead (tensor data in base64)")
    c.add_argument("--type", type=_type_name, default="ModelProto", metavar="NAME",
                   help="the message type of the file, e.g. TensorProto for a .pb tensor (default ModelProto)")
    c.set_defaults(func=cmd_dump)

    c = sub.add_parser("raw", help="print any protobuf file's wire structure, no schema needed")
    c.add_argument("path", metavar="FILE")
    c.add_argument("--offsets", action="store_true",
                   help="prefix each field with the offset of its tag and of its value, and the value's length")
    c.add_argument("--max-depth", type=_depth, default=MAX_DEPTH, metavar="N",
                   help=f"expand nested messages at most N levels deep (0-{MAX_DEPTH}, default {MAX_DEPTH})")
    c.set_defaults(func=cmd_raw)

    c = sub.add_parser("check", help="check a model against the ONNX rules, listing every problem")
    c.add_argument("path", metavar="PATH")
    c.add_argument("--json", action="store_true", help="print the problems as a JSON list")
    c.set_defaults(func=cmd_check)

    _add_convert(sub)
    return p


# -- running ---------------------------------------------------------------------------------

def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _fail(message: str, status: int) -> int:
    print(f"irmodel: {_one_line(message)}", file=sys.stderr)
    return status


def main(argv=None) -> int:
    try:
        args = build_parser().parse_args(argv)
    except UsageError as exc:
        return _fail(str(exc), EXIT_USAGE)
    except SystemExit as exc:  # --help, --version
        return exc.code if isinstance(exc.code, int) else EXIT_OK
    path = getattr(args, "path", "")
    try:
        return args.func(args)
    except BrokenPipeError:
        # The reader went away (``irmodel dump m.onnx | head``): stop quietly, and keep
        # Python from complaining again when it flushes stdout at exit.
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except OSError:
            pass
        return EXIT_OK
    except (UsageError, OutputError) as exc:
        return _fail(str(exc), EXIT_USAGE)
    except DecodeError as exc:
        sys.stdout.flush()
        what = "malformed protobuf" if args.command == "raw" else "not a valid ONNX file"
        return _fail(f"{path}: {what}: {exc}", EXIT_INVALID)
    except (ValidationError, ExternalDataError) as exc:
        sys.stdout.flush()
        return _fail(f"{path}: {exc}", EXIT_INVALID)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        return _fail(f"{exc.filename or path}: {reason}", EXIT_USAGE)
    except KeyboardInterrupt:
        return _fail("interrupted", 130)
    except MemoryError:  # not a bug: the machine (or a ulimit) is too small for the request
        return _fail(f"{path}: out of memory", EXIT_USAGE)
    except Exception as exc:  # noqa: BLE001 - the last resort: a bug, reported in one line
        if os.environ.get("IRMODEL_DEBUG"):
            raise
        return _fail(f"{path}: internal error (a bug in irmodel, please report it; "
                     f"IRMODEL_DEBUG=1 shows the traceback): {type(exc).__name__}: {exc}", EXIT_INTERNAL)


if __name__ == "__main__":
    sys.exit(main())
