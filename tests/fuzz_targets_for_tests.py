"""Targets that misbehave on purpose, for the differential runner's tests (run in workers)."""

from __future__ import annotations

import ctypes
import os
import time


def echo(data: bytes) -> bytes:
    return data


def crashy(data: bytes):
    if data == b"abort":
        os.abort()
    if data == b"segv":
        ctypes.string_at(0)  # reads address 0: SIGSEGV
    if data == b"exit":
        os._exit(3)
    if data == b"raise":
        raise ValueError("rejected on purpose")
    return data


def hang(data: bytes):
    if data == b"hang":
        while True:
            time.sleep(0.05)
    return data


def hog(data: bytes):
    if data == b"hog":  # grows until the address-space limit stops it
        chunks = []
        while True:
            chunks.append(bytes(1 << 24))  # calloc: address space, no page touched
    if data == b"huge":
        return len(bytearray(1 << 40))
    return data


def marker_disagreement(data: bytes):
    """Rejects inputs holding the bytes ``MARK`` and a field-0 tag; accepts the rest."""
    if b"MARK" in data and b"\x00\x01" in data:
        raise ValueError("planted disagreement")
    return None


def shout(data: bytes) -> bytes:
    """Decodes ``data`` as its upper-case form: "differs" from `echo` unless they are equal."""
    return data.upper()


def noisy(data: bytes) -> bytes:
    """Prints to standard output from Python and from C before accepting."""
    print("python says hello")
    libc = ctypes.CDLL(None)
    libc.puts(b"libc says hello")
    libc.fflush(None)
    return data
