"""Graph surgery: extracting a part of a model, inlining functions, composing models.

The public faces are the root modules named as onnx's (`irmodel.utils`, `irmodel.inliner`,
`irmodel.compose`); the work lives here, one module per job:

* ``scope``    what a node reads from its scope (its inputs and the outer-scope names its
               sub-graphs use), the sub-graphs of a node, function identities and calls
* ``share``    copies of messages that share the source's bytes (no weight is copied)
* ``extract``  `Extractor` and ``extract_model`` (onnx.utils), reading only the part
* ``naming``   onnx's inliner name generator and renamer
* ``inline``   ``inline_local_functions`` and ``inline_selected_functions`` (onnx.inliner)
* ``opsets``   whether ai.onnx operators mean the same at two opset versions
* ``prefix``   ``add_prefix``, ``add_prefix_graph`` and renaming values
* ``expand``   ``expand_out_dim`` and ``expand_out_dim_graph``
* ``compose``  ``merge_graphs``, ``merge_models``, ``check_overlapping_names``

Errors are `SurgeryError` (a ValueError, as onnx's surgery raises), except where onnx's
callers catch something else (the checker's ValidationError for a function-call cycle,
TypeError for an argument of the wrong type).
"""
