"""Operator inference functions, one module per family; importing this registers them all."""

from __future__ import annotations

from .. import dataprop  # noqa: F401  (data-propagation functions register themselves)
from . import (attention, contrib_microsoft, conv, controlflow, elementwise, generator, image, indexing,  # noqa: F401,E501
               linalg, ml, nn, pad, quantization, recurrent, reduction, sequence, shape_ops, signal, text, training)
