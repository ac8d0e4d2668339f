"""How to build a valid node of each operator the schema pool cannot draw by itself.

`irmodel.fuzz.generate` draws most operators generically from their schemas: every
required input a float, int64 or bool tensor of one shape, every attribute defaulted.
The rest need a particular form: a required attribute (``Cast.to``, ``Concat.axis``), an
input read as data that must make sense (a shape, indices, axes, pads: runtimes fold
constants while loading, so the values must be valid, not only the types), a type the
pool does not make (strings, uint8 for the quantized operators, sequences, optionals), or
a sub-graph (``Scan``, ``SequenceMap``).  Each recipe here builds that form on the model
growing in ``b`` (`generate._Builder`) with its helpers ``pick`` (a value), ``const`` (an
initializer), ``emit`` (a node, checked by our inference) and returns whether it added
the node (False: the builder draws again).

The values are chosen so that onnxruntime can run the model, not only load it: indices in
range, positive variances, sequence lengths within the sequence.
"""

from __future__ import annotations

from . import ml, tensors, typed
from ._common import ML_OPS, domain_of

#: Operator name -> recipe.  Those not listed are drawn from the schema pool.
RECIPES = {**tensors.RECIPES, **typed.RECIPES, **ml.RECIPES}

__all__ = ["RECIPES", "ML_OPS", "domain_of"]
