"""Type and shape inference over the lazy views, with the reference's results.

``infer_shapes(model, check_type=False, strict_mode=False, data_prop=False)`` gives what
``onnx.shape_inference.infer_shapes`` gives (the same value_info, the same generated
``unk__N`` names), reading initializer bytes only for small constant tensors that
shapes depend on.  Modules, by job:

* `types` -- types and dims as immutable values; `dims` -- arithmetic on dims;
* `symbols` -- fresh dim names; `merge` -- combining types;
* `engine` -- the forward pass, sub-graphs, function bodies; `context` -- one node's view;
* `registry` -- which function infers which schema (filled by `ops/`); `lookup` -- asking it;
  `slot` -- a value's current type; `schemas` -- the operator schemas;
* `dataprop` -- values of small integer tensors; `tensordata` -- constants' values;
* `typecheck` -- ``check_type``; `common` -- helpers shared by the operator families;
* `explain` -- ``explain(model)``: where and why each unknown type or dim was lost;
* `coverage` -- which schemas and models our functions cover (tests, tools);
* ``symbolic=True``: `symbolic.expr` -- integer expressions over dim names;
  `symbolic.rules` -- the symbolic refinements of operator rules; `symbolic.values` -- wider
  value propagation;
* `ops/` -- one module per operator family: elementwise, reduction, shape_ops, indexing,
  pad, generator, linalg, conv, nn, attention, recurrent, controlflow, sequence,
  quantization, signal, image, text, ml, training, contrib_microsoft (onnxruntime's
  com.microsoft operators).

Errors: an operator rule's failure is recorded against its node (`NodeInferenceError`,
raised at the end in strict mode); the reference's other runtime errors (`HardError`) are
raised at the node whatever the mode; its logic errors (`FatalError`) end the whole run.
All reach the caller as `InferenceError`.
"""

from __future__ import annotations

from .api import infer_node_outputs, infer_shapes, infer_shapes_path
from .errors import InferenceError
from .explain import REASONS, Explanation, Loss, explain

__all__ = ["infer_shapes", "infer_shapes_path", "infer_node_outputs", "InferenceError", "explain",
           "Explanation", "Loss", "REASONS"]
