"""The command line's argparse parser class: errors as `UsageError`, help width found once.

Kept apart from `irmodel.cli.common` so that what commands share can be imported without
argparse, which imports ``re`` (with enum and functools: about a third of a whole
``irmodel inspect`` process); the bare ``irmodel inspect PATH`` never builds a parser
(`irmodel.cli.inspect.simple_args`).
"""

from __future__ import annotations

import argparse
import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs every process a few ms
    from typing import NoReturn

from .common import UsageError


class Parser(argparse.ArgumentParser):
    """argparse, but errors raise `UsageError` instead of printing usage and exiting."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see '{self.prog} --help')")

    def _get_formatter(self) -> argparse.HelpFormatter:
        # argparse makes a formatter for every argument it is given (to check its
        # metavar), and a formatter without a width imports `shutil` (bz2, lzma,
        # fnmatch) and asks the terminal its size: every command paid for help it never
        # printed.  The width is now found once, as the formatter would.
        return self.formatter_class(prog=self.prog, width=_help_width())  # type: ignore[call-arg]


_WIDTH: list = []


def _help_width() -> int:
    """What `argparse.HelpFormatter` takes for its width when given none
    (``shutil.get_terminal_size().columns - 2``), found with `os` alone, once."""
    if not _WIDTH:
        try:
            columns = int(os.environ["COLUMNS"])
        except (KeyError, ValueError):
            columns = 0
        if columns <= 0:
            stdout = sys.__stdout__
            try:
                columns = os.get_terminal_size(stdout.fileno()).columns if stdout is not None else 0
            except (AttributeError, ValueError, OSError):
                columns = 0
        _WIDTH.append((columns if columns > 0 else 80) - 2)
    return _WIDTH[0]
