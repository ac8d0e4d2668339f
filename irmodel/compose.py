"""onnx.compose's names: `merge_models`, `merge_graphs`, `add_prefix`, `add_prefix_graph`,
`expand_out_dim`, `expand_out_dim_graph`, `check_overlapping_names`.

The work is in `irmodel._surgery` (``compose``, ``prefix``, ``expand``), whose docstrings
say where the results differ from onnx's: correct output shapes and opset-11 Unsqueeze in
``expand_out_dim``, one opset import per domain and the higher IR version in
``merge_models``, ``rename="auto"`` to resolve clashing names.
"""

from __future__ import annotations

from ._surgery.compose import check_overlapping_names, merge_graphs, merge_models
from ._surgery.errors import SurgeryError
from ._surgery.expand import expand_out_dim, expand_out_dim_graph
from ._surgery.prefix import add_prefix, add_prefix_graph

__all__ = ["merge_models", "merge_graphs", "add_prefix", "add_prefix_graph", "expand_out_dim",
           "expand_out_dim_graph", "check_overlapping_names", "SurgeryError"]
