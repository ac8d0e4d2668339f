"""The ``irmodel`` command line: one module per command (``inspect``, ``dump``, ``raw``,
``check``, ``infer``, ``convert``, ``opset``, ``print``, ``parse``, ``extract``, ``inline``, ``merge``,
``fuzz``), each adding its parser and its ``run``; this module dispatches.

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

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from types import ModuleType

    from .parser import Parser
from .common import EXIT_INVALID, EXIT_OK, EXIT_USAGE, EXIT_INTERNAL, OutputError, UsageError

#: The commands (each a module of this package), in the order ``--help`` lists them.
COMMANDS = ("inspect", "dump", "raw", "check", "infer", "convert", "opset", "print", "parse", "extract", "inline",
            "merge", "fuzz")


def _command_module(name: str) -> ModuleType:
    return __import__(f"{__name__}.{name}", fromlist=("_",))


def __getattr__(name: str) -> ModuleType:
    """``irmodel.cli.convert`` and the other command modules, imported when first named."""
    if name in COMMANDS:
        return _command_module(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _chosen(argv: list[str] | None) -> str | None:
    """The command a command line names (its first argument that is not an option), if any."""
    import sys as _sys  # noqa: PLC0415

    args = _sys.argv[1:] if argv is None else argv
    first = next((a for a in args if not a.startswith("-")), None)
    return first if first in COMMANDS else None


def build_parser(argv: list[str] | None = None) -> Parser:
    """The parser; for a command line that names a command, only that command's module
    is imported (`irmodel inspect` never imports the modules of dump, raw or convert)."""
    from .._version import __version__  # noqa: PLC0415
    from .parser import Parser  # noqa: PLC0415 - argparse: not for a bare `inspect PATH`

    p = Parser(prog="irmodel", description="Inspect, dump, check, infer and convert ONNX models and protobuf files.")
    p.add_argument("--version", action="version", version=f"irmodel {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    only = _chosen(argv)
    for name in COMMANDS:
        if only is None or name == only:
            _command_module(name).add_parser(sub)
        else:  # listed in the usage line, never parsed
            sub.add_parser(name)
    return p


# -- running ---------------------------------------------------------------------------------

def _fail(message: str, status: int) -> int:
    """Report a failure in one line; the message may quote a model's strings (or the
    path), so anything not printable in it is escaped (`wirefmt.safetext.one_line`)."""
    from wirefmt.safetext import one_line  # noqa: PLC0415

    # (not print(): importing the ``print`` command module binds ``print`` in this package)
    sys.stderr.write(f"irmodel: {one_line(message)}\n")
    return status


def main(argv: list[str] | None = None) -> int:
    if argv is None:  # run as the program (not called by a library or a test)
        # Everything alive now (the interpreter's objects and the imports) lives until
        # exit: frozen, it is never walked again by the cyclic collector, which otherwise
        # goes over all of it at every full collection while a model is read (~5% of an
        # `inspect`).  Only when run as the program: frozen objects are never freed.
        import gc  # noqa: PLC0415 - built in

        gc.freeze()
        try:
            return _main(argv)
        finally:
            # Frozen again after the command: what it left (a model is cyclic garbage,
            # its containers link back to their owners) is then skipped by the
            # collection the interpreter makes at exit, which otherwise walks and frees
            # all of it only for the process to end.  The mapping is closed by the exit
            # itself.
            gc.freeze()
    return _main(argv)


def simple_args(argv: list[str] | None) -> argparse.Namespace | None:
    """What the parser would make of a command line of the one form a command reads
    without it (its module's ``simple_args``: ``inspect PATH``), else None.  Building the
    parser imports argparse and, through it, ``re``; tests check that every command line
    read here is read exactly as the parser reads it."""
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] not in COMMANDS:
        return None
    read = getattr(_command_module(args[0]), "simple_args", None)
    return None if read is None else read(args)


def _main(argv: list[str] | None) -> int:
    args = simple_args(argv)
    if args is None:
        try:
            args = build_parser(argv).parse_args(argv)
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
