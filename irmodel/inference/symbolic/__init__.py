"""Symbolic inference (``infer_shapes(..., symbolic=True)``): the expression algebra of dims
(`expr`), the shape rules that refine the reference's (`rules`) and the propagation of small
integer values whose elements are dims (`values`)."""
