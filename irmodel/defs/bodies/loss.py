"""Built bodies of the losses: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss.

NegativeLogLikelihoodLoss gathers ``-input[n][target[n][d...]][d...]``, weighted by
``weight[target]`` when the node gives weights, with the classes equal to ``ignore_index``
(when the node sets it) masked to zero loss and zero weight, then reduced as ``reduction``
says (mean divides by the summed weights when there are any).  SoftmaxCrossEntropyLoss is
a LogSoftmax over the class axis followed by that loss.

Version 12 writes its constants as int32 tensors and gives Unsqueeze and Squeeze their axes
as attributes; from version 13 the constants are int64 and the axes an input.
"""

from __future__ import annotations

from .base import FLOAT, INT32, INT64, INT_KIND, STRING_KIND, BodyBuilder, NodeAttributes, Ref, elem_or_zero


def _nll_loss(b: BodyBuilder, attrs: NodeAttributes, input_types, version: int) -> bool:
    """NegativeLogLikelihoodLoss; refused without the input's type (its Cast needs it)."""
    input_elem = elem_or_zero(input_types, 0)
    if input_elem is None:
        return False
    is_float = input_elem == FLOAT
    reduction = attrs.s("reduction", b"mean")
    weighted = attrs.has_input(2)
    old = version == 12

    def squeeze(x: str, out: str) -> None:
        if old:
            b.add("Squeeze", [x], [out], axes=[1])
        else:
            b.add("Squeeze", [x, "axes"], [out])

    def zero_or_cast(which: str) -> str:
        """The name of a float constant as the input's type (a Cast of it unless float)."""
        return f"const_{which}_float" if is_float else f"const_{which}_casted"

    def reduce_weighted_loss() -> None:
        if reduction == b"none":
            b.add("Mul", ["loss_unweighted", "weight_gather"], ["loss"])
            return
        b.add("Mul", ["loss_unweighted", "weight_gather"], ["loss_Ndd"])
        if reduction == b"mean":
            b.add("ReduceSum", ["loss_Ndd"], ["loss_sum"], keepdims=0)
            b.add("ReduceSum", ["weight_gather"], ["weight_gather_sum"], keepdims=0)
            b.add("Div", ["loss_sum", "weight_gather_sum"], ["loss"])
        else:
            b.add("ReduceSum", ["loss_Ndd"], ["loss"], keepdims=0)

    index_type = INT32 if old else INT64
    b.const_1d("const_zero", 0, index_type)
    b.const_1d("const_one", 1, index_type)
    if old:
        b.add("Unsqueeze", ["target"], ["expanded_target"], axes=[1])
    else:
        b.const_1d("axes", 1, INT64)
        b.add("Unsqueeze", ["target", "axes"], ["expanded_target"])

    ignore_index = attrs.get("ignore_index")
    if ignore_index is None:
        b.add("GatherElements", ["input", "expanded_target"], ["input_gather_element"], axis=1)
        b.add("Neg", ["input_gather_element"], ["loss_NCdd"])
        b.add("Slice", ["loss_NCdd", "const_zero", "const_one", "const_one"], ["loss_N1dd"])
        if weighted:
            b.add("Gather", ["weight", "target"], ["weight_gather"])
            squeeze("loss_N1dd", "loss_unweighted")
            reduce_weighted_loss()
        elif reduction == b"none":
            squeeze("loss_N1dd", "loss")
        else:
            squeeze("loss_N1dd", "loss_Ndd")
            b.add("ReduceMean" if reduction == b"mean" else "ReduceSum", ["loss_Ndd"], ["loss"], keepdims=0)
        return True

    b.const_1d("const_ignore_index", ignore_index.i, INT64)
    b.add("Sub", ["expanded_target", "expanded_target"], ["const_zero_target_typed"])
    b.add("Cast", ["expanded_target"], ["expanded_target_int64"], to=INT64)
    b.add("Equal", ["expanded_target_int64", "const_ignore_index"], ["mask"])
    b.add("Where", ["mask", "const_zero_target_typed", "expanded_target"], ["transform_targets"])
    b.add("GatherElements", ["input", "transform_targets"], ["input_gather_element"], axis=1)
    b.const_1d("const_zero_float", 0.0, FLOAT)
    if not is_float:
        b.add("Cast", ["const_zero_float"], ["const_zero_casted"], to=input_elem)
    b.add("Where", ["mask", zero_or_cast("zero"), "input_gather_element"], ["input_gather_element_transform"])
    b.add("Neg", ["input_gather_element_transform"], ["loss_NCdd"])
    b.add("Slice", ["loss_NCdd", "const_zero", "const_one", "const_one"], ["loss_N1dd"])
    if weighted:
        b.add("Gather", ["weight", "transform_targets"], ["weight_gather_temp"])
        b.add("Where", ["mask", zero_or_cast("zero"), "weight_gather_temp"], ["weight_gather_temp_1"])
        squeeze("weight_gather_temp_1", "weight_gather")
    else:
        squeeze("mask", "squeeze_mask")
        b.const_1d("const_one_float", 1.0, FLOAT)
        if not is_float:
            b.add("Cast", ["const_one_float"], ["const_one_casted"], to=input_elem)
        b.add("Where", ["squeeze_mask", zero_or_cast("zero"), zero_or_cast("one")], ["weight_gather"])
    squeeze("loss_N1dd", "loss_unweighted")
    reduce_weighted_loss()
    return True


def _softmax_cross_entropy_loss(b: BodyBuilder, attrs: NodeAttributes, input_types, version: int) -> bool:
    """SoftmaxCrossEntropyLoss: a stable LogSoftmax over axis 1 (via [N, D, C]), then the NLL loss.

    The optional log_prob output is a copy of the log-probabilities.  Version 12 passes
    ``ignore_index`` on only when the node sets it; 13 always refers to it.
    """
    b.const_list("Shape3D", [0, 0, -1], INT64)
    b.add("Reshape", ["scores", "Shape3D"], ["X_NCD"])
    b.add("Transpose", ["X_NCD"], ["X_NDC"], perm=[0, 2, 1])
    b.add("LogSoftmax", ["X_NDC"], ["X_LogSM"], axis=2)
    b.add("Transpose", ["X_LogSM"], ["X_LogSM_NCD"], perm=[0, 2, 1])
    b.add("Shape", ["scores"], ["X_shape"])
    b.add("Reshape", ["X_LogSM_NCD", "X_shape"], ["X_Log"])
    if attrs.has_output(1):
        b.add("Identity", ["X_Log"], ["log_prob"])
    inputs = ["X_Log", "labels"] + (["weights"] if attrs.has_input(2) else [])
    refs = {"reduction": Ref("reduction", STRING_KIND)}
    if version >= 13 or attrs.get("ignore_index") is not None:
        refs["ignore_index"] = Ref("ignore_index", INT_KIND)
    b.add("NegativeLogLikelihoodLoss", inputs, ["output"], **refs)
    return True


BUILDERS = {
    ("", "NegativeLogLikelihoodLoss"): _nll_loss,
    ("", "SoftmaxCrossEntropyLoss"): _softmax_cross_entropy_loss,
}
