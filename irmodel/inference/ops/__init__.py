"""Operator inference functions, one module per family; importing this registers them all."""

from __future__ import annotations

from .. import dataprop  # noqa: F401  (data-propagation functions register themselves)
from . import (conv, controlflow, elementwise, generator, indexing, linalg, nn, reduction,  # noqa: F401
               shape_ops)
