"""The summary of one model computed both ways: from its bytes (the fast path of
`irmodel._wireview`) and from its messages.  The fast path must hand every doubtful
node or tensor back, so the two agree on everything, failures included."""

from __future__ import annotations

import irmodel
from irmodel._report.summary import summarize
from irmodel._wireview.fastpath import use_fast_paths


def summaries_both_ways(data: bytes, base_dir: str | None = None) -> tuple:
    """(streamed summary, full summary) of a model each opens afresh, or the error each
    raised (type and message)."""
    out = []
    for stream in (True, False):
        use_fast_paths(stream, threshold=1)
        try:
            out.append(summarize(irmodel.loads(data), base_dir=base_dir))
        except Exception as exc:  # noqa: BLE001
            out.append((type(exc).__name__, str(exc)))
    use_fast_paths(True)
    return tuple(out)
