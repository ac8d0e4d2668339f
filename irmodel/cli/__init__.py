"""The ``irmodel`` command line: one module per command (``inspect``, ``dump``, ``raw``,
``check``, ``infer``, ``convert``), each adding its parser and its ``run``; this module dispatches.

Exit status: 0 ok; 1 invalid input (`DecodeError`, `ValidationError`,
`ExternalDataError`, `EncodeError`: the file is at fault); 2 usage or I/O error (the command line, the
file system or the machine is at fault, out of memory included); 3 an internal error,
i.e. a bug in irmodel; 130 interrupted.  Every failure
is reported as one line on stderr starting with ``irmodel:``, never as a traceback
(set ``IRMODEL_DEBUG=1`` to get the traceback of an internal error).

Files are memory-mapped, never read whole.  ``inspect``, ``dump`` and ``raw`` never
load external data: they describe a file as it is stored; ``convert`` resolves it
(mapped too) to write it elsewhere.  None of the commands imports numpy.
"""

from __future__ import annotations

import os
import sys

from ..errors import DecodeError, EncodeError, ExternalDataError, ValidationError
from . import check, convert, dump, infer, inspect, raw
from .common import EXIT_INVALID, EXIT_OK, EXIT_USAGE, EXIT_INTERNAL, OutputError, Parser, UsageError

#: The command modules, in the order ``--help`` lists them.
COMMANDS = (inspect, dump, raw, check, infer, convert)


def build_parser() -> Parser:
    from .. import __version__  # noqa: PLC0415

    p = Parser(prog="irmodel", description="Inspect, dump, check, infer and convert ONNX models and protobuf files.")
    p.add_argument("--version", action="version", version=f"irmodel {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        command.add_parser(sub)
    return p


# -- running ---------------------------------------------------------------------------------

def _fail(message: str, status: int) -> int:
    """Report a failure in one line; the message may quote a model's strings (or the
    path), so anything not printable in it is escaped (`wirefmt.safetext.one_line`)."""
    from wirefmt.safetext import one_line  # noqa: PLC0415

    print(f"irmodel: {one_line(message)}", file=sys.stderr)
    return status


_parser: Parser | None = None


def _cached_parser() -> Parser:
    """The parser, built once per process: parsing does not change it, and programs
    (and tests) that call `main` many times need not rebuild it each time."""
    global _parser
    if _parser is None:
        _parser = build_parser()
    return _parser


def main(argv: list[str] | None = None) -> int:
    try:
        args = _cached_parser().parse_args(argv)
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
    except (ValidationError, ExternalDataError, EncodeError) as exc:
        # EncodeError: the model cannot be written as it is (nested too deep to be read)
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
