"""The summary of one model computed every way: from its bytes alone
(`irmodel._report.bytesummary`, no message made), streamed (the fast paths of
`irmodel._wireview` over the loaded model) and from its messages.  The fast paths must
hand every doubtful node or tensor back, so all agree on everything, failures included."""

from __future__ import annotations

import irmodel
from irmodel._report.bytesummary import summarize_buffer
from irmodel._report.summary import summarize
from irmodel._wireview.fastpath import use_fast_paths


def summaries_both_ways(data: bytes, base_dir: str | None = None) -> tuple:
    """(streamed summary, full summary) of a model each opens afresh, or the error each
    raised (type and message).

    The summary from the bytes alone is computed too: where it answers (a plain model),
    it must be the full summary, or the first item says so instead of the streamed
    summary; where it declines, `irmodel inspect` takes the other ways.  It never raises."""
    out = []
    for stream in (True, False):
        use_fast_paths(stream, threshold=1)
        try:
            out.append(summarize(irmodel.loads(data), base_dir=base_dir))
        except Exception as exc:  # noqa: BLE001
            out.append((type(exc).__name__, str(exc)))
    use_fast_paths(True, threshold=1)
    try:
        from_bytes = summarize_buffer(data, base_dir)
    except Exception as exc:  # noqa: BLE001 - a defect: it must decline, never raise
        from_bytes = ("raised", type(exc).__name__, str(exc))
    use_fast_paths(True)
    if from_bytes is not None and from_bytes != out[1]:
        out[0] = ("the summary from the bytes alone differs", from_bytes)
    return tuple(out)
