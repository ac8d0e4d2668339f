"""The ``irmodel`` command line: ``inspect``, ``dump`` and ``raw`` (``convert`` is to come).

Exit status: 0 ok; 1 invalid input (`DecodeError`, `ValidationError`,
`ExternalDataError`: the file is at fault); 2 usage or I/O error (the command line, the
file system or the machine is at fault, out of memory included); 3 an internal error,
i.e. a bug in irmodel; 130 interrupted.  Every failure
is reported as one line on stderr starting with ``irmodel:``, never as a traceback
(set ``IRMODEL_DEBUG=1`` to get the traceback of an internal error).

Files are memory-mapped, never read whole, and external data is never loaded: the
commands describe a file as it is stored.  None of them imports numpy.
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


class UsageError(Exception):
    """A bad command line; reported in one line with a pointer to ``--help``."""


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


# -- the parser ------------------------------------------------------------------------------

def build_parser() -> argparse.ArgumentParser:
    from . import __version__  # noqa: PLC0415

    p = _Parser(prog="irmodel", description="Inspect and dump ONNX models and protobuf files.")
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

    # convert: not here yet.  It waits for external-data writing (irmodel.save with
    # save_as_external_data=True, irmodel/external_data.py).  Add it as its own
    # sub.add_parser("convert", ...) whose cmd_convert opens the model with _load(), writes
    # with irmodel.save, and reports the copy with _progress("convert", total, fmt=human_bytes).
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
