"""onnx.inliner's names: `inline_local_functions`, `inline_selected_functions`.

The work is in `irmodel._surgery.inline`, which says where the result differs from onnx's
(function attribute defaults are honoured; ``convert_version`` converts only what needs no
conversion, for now).
"""

from __future__ import annotations

from ._surgery.errors import SurgeryError
from ._surgery.inline import inline_local_functions, inline_selected_functions

__all__ = ["inline_local_functions", "inline_selected_functions", "SurgeryError"]
