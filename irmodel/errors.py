"""irmodel's error types, one per layer above the codec."""

from __future__ import annotations

from typing import Iterable

from wirefmt.errors import DecodeError, EncodeError  # re-exported: the codec layer's errors


class ValidationError(ValueError):
    """A model that decodes but breaks the ONNX rules; ``problems`` lists every one found."""

    def __init__(self, problems: str | Iterable[str]) -> None:
        if isinstance(problems, str):
            problems = [problems]
        self.problems = list(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


class ExternalDataError(ValueError):
    """External data that is unsafe or inconsistent; names the tensor and the location."""


__all__ = ["DecodeError", "EncodeError", "ValidationError", "ExternalDataError"]
