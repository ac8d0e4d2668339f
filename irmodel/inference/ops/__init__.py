"""Operator inference functions, one module per family; importing this registers them all."""

from __future__ import annotations

from .. import dataprop  # noqa: F401  (data-propagation functions register themselves)
from . import (attention, conv, controlflow, elementwise, generator, image, indexing, linalg,  # noqa: F401
               ml, nn, pad, quantization, recurrent, reduction, sequence, shape_ops, signal, text, training)
