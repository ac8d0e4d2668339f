"""One byte-level mutation of a small model of the node corpus, drawn with hypothesis.

Shared by the decoder's hostile-input test and the checker's: both ask "what does this layer do with
corrupted real models?", so both draw the corruption the same way.
"""

from __future__ import annotations

from hypothesis import strategies as st

MUTATIONS = st.sampled_from(["truncate", "flip", "insert", "delete", "random"])


def draw_mutated_model_bytes(data, node_corpus) -> bytearray:
    """A model of under 4 KiB from ``node_corpus``, truncated, bit-flipped, grown, cut, or replaced."""
    small = [b for _, b in node_corpus if len(b) < 4096]
    buf = bytearray(data.draw(st.sampled_from(small)))
    kind = data.draw(MUTATIONS)
    if kind == "truncate":
        buf = buf[:data.draw(st.integers(0, max(0, len(buf) - 1)))]
    elif kind == "flip":
        for _ in range(data.draw(st.integers(1, 4))):
            i = data.draw(st.integers(0, len(buf) - 1))
            buf[i] ^= 1 << data.draw(st.integers(0, 7))
    elif kind == "insert":
        i = data.draw(st.integers(0, len(buf)))
        buf[i:i] = data.draw(st.binary(min_size=1, max_size=12))
    elif kind == "delete":
        i = data.draw(st.integers(0, len(buf) - 1))
        del buf[i:i + data.draw(st.integers(1, 8))]
    else:
        buf = bytearray(data.draw(st.binary(max_size=256)))
    return buf
