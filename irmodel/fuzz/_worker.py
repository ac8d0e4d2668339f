"""A worker process of the differential runner: runs one target on inputs sent to it.

Started by `irmodel.fuzz.runner` as ``python -m irmodel.fuzz._worker MODULE:FUNCTION
MEMORY_LIMIT [REJECT_TYPES]``.  Protocol on stdin/stdout: frames of a 4-byte big-endian
length and a body.  The worker imports the target, limits its own address space
(``RLIMIT_AS``: what it uses now plus ``MEMORY_LIMIT`` bytes, so imports are not counted),
sends ``{"ready": true}``, then answers each input frame with one JSON result frame:
``{"outcome": "accept"|"reject"|"oom"|"error", "digest": str|None, "detail": str}``.
A crash kills only this process; the runner sees the pipe close and starts another.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import resource
import struct
import sys
import time

_LENGTH = struct.Struct(">I")


def _read_exact(f, n: int) -> bytes | None:
    chunks = []
    while n:
        chunk = f.read(n)
        if not chunk:
            return None
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def read_frame(f, limit: int | None = None) -> bytes | None:
    """One frame's body; None at end of file.  ``ValueError`` if longer than ``limit``."""
    head = _read_exact(f, 4)
    if head is None:
        return None
    n = _LENGTH.unpack(head)[0]
    if limit is not None and n > limit:
        raise ValueError(f"a frame of {n} bytes (at most {limit} expected)")
    return _read_exact(f, n)


def write_frame(f, body: bytes) -> None:
    f.write(_LENGTH.pack(len(body)) + body)
    f.flush()


def digest_of(value) -> str | None:
    """A short canonical digest of what a target decoded (None: nothing to compare)."""
    if value is None:
        return None
    if isinstance(value, str):
        value = value.encode("utf-8", "surrogatepass")
    elif not isinstance(value, (bytes, bytearray, memoryview)):
        value = json.dumps(value, sort_keys=True, default=repr).encode()
    return hashlib.sha256(value).hexdigest()[:16]


def load_target(spec: str):
    module, _, name = spec.partition(":")
    return getattr(importlib.import_module(module), name)


def _limit_memory(extra: int) -> None:
    if extra <= 0:
        return
    with open("/proc/self/statm") as f:
        used = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    limit = used + extra
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def main(argv: list) -> int:
    spec, extra = argv[0], int(argv[1])
    reject_types = tuple(argv[2].split(",")) if len(argv) > 2 and argv[2] else ()
    stdin = sys.stdin.buffer
    # The protocol gets a descriptor of its own and descriptor 1 becomes stderr, so a
    # target that prints (from Python or from C) cannot corrupt the frames.
    sys.stdout.flush()
    stdout = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    try:
        target = load_target(spec)
    except Exception as exc:  # noqa: BLE001 - reported to the runner, which stops
        write_frame(stdout, json.dumps({"ready": False, "detail": f"{type(exc).__name__}: {exc}"}).encode())
        return 2
    _limit_memory(extra)
    write_frame(stdout, b'{"ready": true}')
    while True:
        data = read_frame(stdin)
        if data is None:
            return 0
        start = time.perf_counter()
        result: dict[str, str | float | None]
        try:
            result = {"outcome": "accept", "digest": digest_of(target(data)), "detail": ""}
        except MemoryError:
            result = {"outcome": "oom", "digest": None, "detail": "MemoryError"}
        except Exception as exc:  # noqa: BLE001 - classifying the target's failures is the point
            names = {c.__name__ for c in type(exc).__mro__}
            bad = reject_types and not names.intersection(reject_types)
            result = {"outcome": "error" if bad else "reject", "digest": None,
                      "detail": f"{type(exc).__name__}: {str(exc)[:300]}"}
        result["seconds"] = time.perf_counter() - start
        write_frame(stdout, json.dumps(result).encode())
        if result["outcome"] == "oom":
            return 0  # a fresh worker after an out-of-memory, in case the heap is in a bad state


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
