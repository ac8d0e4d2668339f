"""onnx.utils' names: `extract_model` and `Extractor` (the work is in `irmodel._surgery.extract`).

``extract_model(input_path, output_path, input_names, output_names, check_model=True,
infer_shapes=True)`` reads only the part it extracts (nodes, initializers, external data)
from a mapped model; `irmodel._surgery.extract` says what else differs from onnx.
"""

from __future__ import annotations

from ._surgery.errors import SurgeryError
from ._surgery.extract import Extractor, extract_model

__all__ = ["Extractor", "extract_model", "SurgeryError"]
