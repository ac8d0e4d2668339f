"""The opset version converter (onnx.version_converter's job), over irmodel's lazy messages.

Modules, by job: `steps` (the changelog as a table: what each operator version step
changed), `changes` (the kinds of change, each with its way up and down), `adapters` (the
steps that need code and edit the node), `rewrites` (those that make several nodes or another
operator), `decompose` (an operator missing at the target becomes its function
body), `driver` (the walk over graphs, subgraphs and functions), `fit` (the converted node
against the target schema), `scope` (constants, types, fresh names, on demand), `work`
(one node being converted), `schemas` (operator versions), `errors`.
The public face is `irmodel.version_converter`.
"""

from __future__ import annotations

from .driver import Report, convert_model
from .errors import CODES, ConversionError, ConvertError

__all__ = ["convert_model", "Report", "ConversionError", "ConvertError", "CODES"]
