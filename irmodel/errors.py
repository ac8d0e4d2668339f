"""irmodel's error types, one per layer above the codec."""

from __future__ import annotations

from wirefmt.errors import DecodeError, EncodeError  # re-exported: the codec layer's errors


class ValidationError(ValueError):
    """A model that decodes but breaks the ONNX rules; ``problems`` lists every one found."""

    def __init__(self, problems):
        if isinstance(problems, str):
            problems = [problems]
        self.problems = list(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


class ExternalDataError(ValueError):
    """External data that is unsafe or inconsistent; names the tensor and the location."""


# A file under a loaded model changed (an OSError: the file system's doing, not the
# model's); defined with the file context it is about.
from .origin import SourceChangedError  # noqa: E402

__all__ = ["DecodeError", "EncodeError", "ValidationError", "ExternalDataError", "SourceChangedError"]
