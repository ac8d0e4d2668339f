"""A `random.Random` whose seeding costs next to nothing, for per-mutant RNGs.

A mutator called as atheris' ``custom_mutator(data, max_size, seed)`` must be a pure
function of ``(data, seed)``, so it seeds a generator for every mutant.  Seeding the
Mersenne Twister fills 624 words of state: about 5 us, a quarter of the time budget of
one mutant (50,000 per second).  This subclass keeps `random.Random`'s interface (every
method a mutator uses) on a 64-bit linear congruential generator whose output is the
high half of the state: statistically weak, and plenty for choosing fuzzing sites.
"""

from __future__ import annotations

import random

_M64 = (1 << 64) - 1
_MUL = 6364136223846793005  # Knuth's MMIX multiplier
_INC = 1442695040888963407
_MAX_FAST = 1 << 32  # ranges up to this use one step and a multiply-shift
_TWO_TO_MINUS_53 = 1.0 / (1 << 53)


class FastRandom(random.Random):
    """``random.Random`` with a cheap `seed`: same seed, same sequence, on every platform.

    ``choice``, ``randrange``, ``random`` and ``getrandbits`` are overridden; the other
    methods (``sample``, ``randbytes``, ``shuffle``...) are `random.Random`'s, built on them.
    """

    def __init__(self, seed: int = 0):  # noqa: D107 - no call to Random.__init__: no MT state
        self.gauss_next = None
        self.seed(seed)

    def seed(self, a=0, version: int = 2) -> None:  # noqa: ARG002 - signature of Random.seed
        s = (int(a) * 0x9E3779B97F4A7C15 + _INC) & _M64
        s ^= s >> 29
        self._s = (s * _MUL + _INC) & _M64

    def getrandbits(self, k: int) -> int:
        if k <= 32:
            self._s = s = (self._s * _MUL + _INC) & _M64
            return s >> (64 - k) if k else 0
        out = 0
        for _ in range((k + 31) // 32):
            self._s = s = (self._s * _MUL + _INC) & _M64
            out = out << 32 | s >> 32
        return out >> (-k % 32)

    def random(self) -> float:
        self._s = s = (self._s * _MUL + _INC) & _M64
        return (s >> 11) * _TWO_TO_MINUS_53

    def _randbelow(self, n: int) -> int:
        if n <= _MAX_FAST:
            self._s = s = (self._s * _MUL + _INC) & _M64
            return ((s >> 32) * n) >> 32  # Lemire's multiply-shift: no division
        return self.getrandbits(n.bit_length() + 32) % n

    def choice(self, seq):
        n = len(seq)
        if 0 < n <= _MAX_FAST:
            self._s = s = (self._s * _MUL + _INC) & _M64
            return seq[((s >> 32) * n) >> 32]
        if not n:
            raise IndexError("cannot choose from an empty sequence")
        return seq[self._randbelow(n)]

    def randrange(self, start: int, stop: int | None = None, step: int = 1) -> int:
        if stop is None:
            start, stop = 0, start
        width = stop - start
        if step == 1 and 0 < width <= _MAX_FAST:
            self._s = s = (self._s * _MUL + _INC) & _M64
            return start + (((s >> 32) * width) >> 32)
        if step != 1:
            return super().randrange(start, stop, step)
        if width <= 0:
            raise ValueError(f"empty range for randrange({start}, {stop})")
        return start + self._randbelow(width)

    def getstate(self):
        return (self._s, self.gauss_next)

    def setstate(self, state) -> None:
        self._s, self.gauss_next = state
