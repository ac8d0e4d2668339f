"""A one-line progress report on stderr, for command-line work that may take a while.

`Progress` is a callable: the worker calls ``progress(done)`` as often as it likes (it
rate-limits itself), and `close` (or leaving the ``with`` block) erases the line.  It
says nothing unless its stream is a terminal, and nothing during the first `DELAY`
seconds, so quick commands and redirected or captured output never see it.  Library
code takes an optional reporter and calls it; only the CLI decides to create one.
"""

from __future__ import annotations

import sys
import time
TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs every process a few ms
    from typing import Callable, TextIO

#: Work that finishes within this many seconds shows no progress at all.
DELAY = 1.0
#: At most this many redraws per second: enough to look alive, too few to cost anything.
INTERVAL = 0.2

_ERASE = "\r\x1b[K"


def _count(n: int) -> str:
    return f"{n:,}"


def human_bytes(n: int) -> str:
    """``n`` bytes for people: ``1.5 MiB``; exact below 1 KiB."""
    if n < 1024:
        return f"{n} B"
    x = float(n)
    for unit in ("KiB", "MiB", "GiB", "TiB"):
        x /= 1024
        if x < 1024 or unit == "TiB":
            return f"{x:.1f} {unit}"
    raise AssertionError("unreachable")


class Progress:
    """Rate-limited progress line: ``irmodel: <label>: <done>/<total> (<pct>%)``.

    ``fmt`` formats the counts (`human_bytes` for byte offsets).  ``enabled`` defaults
    to whether ``stream`` (stderr) is a terminal; ``clock`` is injectable for tests.
    Calls cost one attribute test when disabled and one clock read when enabled.
    """

    def __init__(self, label: str, total: int | None = None, *, stream: TextIO | None = None,
                 fmt: Callable[[int], str] = _count, enabled: bool | None = None,
                 delay: float = DELAY, interval: float = INTERVAL,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.stream = sys.stderr if stream is None else stream
        if enabled is None:
            try:
                enabled = self.stream.isatty()
            except (AttributeError, ValueError, OSError):
                enabled = False
        self.enabled = enabled
        self.label = label
        self.total = total
        self.fmt = fmt
        self._clock = clock
        self._interval = interval
        self._next = clock() + delay if enabled else 0.0
        self._shown = False

    def __call__(self, done: int, total: int | None = None) -> None:
        if not self.enabled:
            return
        now = self._clock()
        if now < self._next:
            return
        self._next = now + self._interval
        if total is not None:
            self.total = total
        text = f"irmodel: {self.label}: {self.fmt(done)}"
        if self.total:
            text += f"/{self.fmt(self.total)} ({min(100, done * 100 // self.total)}%)"
        self._write(_ERASE + text)
        self._shown = True

    def close(self) -> None:
        """Erase the line, if one was drawn, so that whatever follows starts clean."""
        if self._shown:
            self._write(_ERASE)
            self._shown = False

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):  # a closed or vanished terminal must not fail the work
            self.enabled = False

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def null_progress(done: int, total: int | None = None) -> None:
    """A reporter that reports nothing: the default for library functions."""


__all__ = ["Progress", "null_progress", "human_bytes", "DELAY", "INTERVAL"]
