"""The surgery layer's error."""

from __future__ import annotations


class SurgeryError(ValueError):
    """A request that cannot be carried out on this model: names that do not exist, a cut
    that does not separate the part from the rest, a cycle, clashing names.  A ValueError,
    as onnx.utils and onnx.compose raise for the same requests; the message names what is
    wrong."""
