"""What every command shares: exit statuses, errors, opening the input, output helpers.

No argparse here (`irmodel.cli.parser` has the parser): ``irmodel inspect PATH`` runs
without it (see `irmodel.cli.inspect.simple_args`)."""

from __future__ import annotations

import os
import stat
import sys
TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs every process a few ms
    from typing import Any, Callable, Iterable, NoReturn

from ..errors import ValidationError
from .progress import Progress

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


# -- opening files -------------------------------------------------------------------------

def check_file(path: str) -> os.stat_result:
    """Stat ``path`` and refuse what cannot be a model file (directories, devices)."""
    st = os.stat(path)
    if stat.S_ISDIR(st.st_mode):
        raise IsADirectoryError(21, "Is a directory", path)
    if not (stat.S_ISREG(st.st_mode) or stat.S_ISFIFO(st.st_mode)):
        raise OSError(19, "Not a regular file", path)
    return st


def load_model(path: str, type_name: str = "ModelProto") -> tuple[Any, int]:
    """Open a message lazily, without its external data; ModelProto must look like one.

    ``(message, size of the file in bytes)``.  The file is mapped (read, for a pipe) by
    `irmodel.load`, as every command opens its input.
    """
    from ..io import load, source_length  # noqa: PLC0415

    check_file(path)
    msg = load(path, load_external_data=False, type_name=type_name)
    size = source_length(msg)
    if type_name == "ModelProto" and not (msg.HasField("ir_version") or msg.HasField("graph")):
        # Protobuf reads an empty file (or most other protobuf files) as a ModelProto
        # with nothing set; onnx.load accepts it too.  As a *model* it is useless, and
        # almost always a failed download or write: say so (onnx.checker rejects it too).
        if size == 0:
            raise ValidationError("empty file (0 bytes): not an ONNX model")
        raise ValidationError("not an ONNX model: it has neither an ir_version nor a graph")
    return msg, size


def model_dir(path: str) -> str:
    return os.path.dirname(os.path.abspath(path))


def progress_line(label: str, total: int | None = None, fmt: Callable[[int], str] | None = None, streaming: bool = False) -> Progress:
    """A progress line on stderr; for streaming commands only when stdout is not the terminal too."""
    enabled = None
    if streaming and sys.stdout.isatty():
        enabled = False  # the output itself shows progress; a status line would tear it
    kwargs: dict[str, Any] = {"fmt": fmt} if fmt else {}
    return Progress(label, total, enabled=enabled, **kwargs)


def write_lines(lines: Iterable[str], progress: Progress | None = None) -> None:
    write = sys.stdout.write
    for n, line in enumerate(lines, 1):
        write(line)
        write("\n")
        if progress is not None and not n & 1023:
            progress(n)


def write_json(obj: Any, out: Any = None) -> None:
    """Write ``obj`` (a list, or a dict whose big values are lists) as JSON, one entry a line.

    The layout: a list is ``[``, each element on a line of its own (indented two spaces),
    ``]``; a dict is ``{``, each key on a line of its own with its value, a list value's
    elements again one a line (indented four).  Each element is written compact, by the
    C encoder of ``json``.  Why not ``json.dump(indent=2)``: an indent makes ``json``
    use its pure-Python encoder, which spent 7 s of 13 on the 200,000 values of a long
    chain; one entry a line costs a third of that, stays valid JSON (``json.loads`` gives
    the same document as before), and is as easy to read and to grep.  ASCII, bytes in
    their documented form (`wirefmt.safetext.json_ready`, applied only to an element that
    holds bytes).  A final newline follows.
    """
    import json  # noqa: PLC0415

    write = (out or sys.stdout).write
    dumps = json.dumps

    def one(value: Any) -> str:
        try:
            return dumps(value, ensure_ascii=True)
        except TypeError:  # bytes somewhere in it
            from wirefmt.safetext import json_ready  # noqa: PLC0415

            return dumps(json_ready(value), ensure_ascii=True)

    def items(values: Any, indent: str) -> None:
        first = True
        for v in values:
            write(("\n" if first else ",\n") + indent + one(v))
            first = False
        if not first:
            write("\n" + indent[:-2])

    if isinstance(obj, (list, tuple)):
        write("[")
        items(obj, "  ")
        write("]\n")
        return
    if not isinstance(obj, dict) or not obj:
        write(one(obj) + "\n")
        return
    write("{")
    first = True
    for key, value in obj.items():
        write(("\n" if first else ",\n") + "  " + one(key if isinstance(key, str) else str(key)) + ": ")
        first = False
        if isinstance(value, (list, tuple)) and value:
            write("[")
            items(value, "    ")
            write("]")
        else:
            write(one(value))
    write("\n}\n")


def whole_number(what: str, low: int = 0, high: int | None = None) -> Callable[[str], int]:
    """An argparse ``type``: a whole number from ``low`` to ``high`` (no upper bound if None).

    ``what`` names the expected value in the error ("a number of bytes").
    """
    def parse(value: str) -> int:
        import argparse  # noqa: PLC0415 - imported already: argparse is what calls this

        try:
            n = int(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not {what}: {value!r}") from None
        if high is not None and not low <= n <= high:
            raise argparse.ArgumentTypeError(f"must be between {low} and {high}")
        if n < low:
            raise argparse.ArgumentTypeError(f"must be {low} or more, not {n}")
        return n

    return parse


def colon_pairs(expected: str, *, last_colon: bool = False, empty_first: bool = False) -> Callable[[str], list]:
    """An argparse ``type``: comma-separated ``first:second`` pairs, as tuples.

    ``expected`` names the form in the error (``"OUTPUT:INPUT"``); ``last_colon`` splits
    each item at its last colon (a first part that may hold colons itself), ``empty_first``
    accepts an empty first part (the default domain of ``:Softsign``).  The second part is
    never empty.
    """
    def parse(value: str) -> list:
        import argparse  # noqa: PLC0415 - imported already: argparse is what calls this

        out = []
        for item in value.split(","):
            first, sep, second = item.rpartition(":") if last_colon else item.partition(":")
            if not sep or not second or not (first or empty_first):
                raise argparse.ArgumentTypeError(f"expected {expected}, got {item!r}")
            out.append((first, second))
        return out

    return parse
