"""Built bodies of tensor-shaping operators: Range, CenterCropPad, DepthToSpace, SpaceToDepth.

Each builder takes (attributes, input types, opset version), fills a `BodyBuilder` and
returns True, or returns False where the reference's builder refuses.
"""

from __future__ import annotations

from .base import (BOOL, DOUBLE, FLOAT, FLOAT16, BFLOAT16, INT64, INTS_KIND, BodyBuilder, NodeAttributes,
                   Ref, elem_or_zero)

_INT64_MAX = (1 << 63) - 1


def _range(b: BodyBuilder, attrs: NodeAttributes, input_types, version: int) -> bool:
    """Range: a Loop of ceil((limit - start) / delta) steps (at least 0) adding delta.

    Half-precision inputs (float16, bfloat16) are counted and accumulated in ``stash_type``
    (float or double, default float) and cast back at the end; every other type is
    accumulated in its own type, the step count computed in float.  Refused without the
    start's type, or with a half-precision start and another stash type.
    """
    elem = elem_or_zero(input_types, 0)
    if elem is None:
        return False
    if elem in (FLOAT16, BFLOAT16):
        stash = attrs.i("stash_type", FLOAT)
        if stash not in (FLOAT, DOUBLE):
            return False
        b.add("Cast", ["start"], ["start_s"], to=stash)
        b.add("Cast", ["limit"], ["limit_s"], to=stash)
        b.add("Cast", ["delta"], ["delta_s"], to=stash)
        b.add("Sub", ["limit_s", "start_s"], ["sub_result"])
        b.add("Div", ["sub_result", "delta_s"], ["div_result"])
        b.add("Ceil", ["div_result"], ["ceil_result"])
        b.add("Relu", ["ceil_result"], ["ceil_relu"])
        b.add("Cast", ["ceil_relu"], ["n"], to=INT64)
        b.add("Cast", ["ceil_relu"], ["loop_cond"], to=BOOL)
        b.add("Loop", ["n", "loop_cond", "start_s"], ["variadic_output", "output_s"],
              body=_range_loop_body(b, "loop_body", "cond_in", "delta_s"))
        b.add("Cast", ["output_s"], ["output"], to=elem)
        return True
    b.add("Sub", ["limit", "start"], ["sub_result"])
    b.add("Cast", ["sub_result"], ["sub_result_casted"], to=FLOAT)
    b.add("Cast", ["delta"], ["delta_casted"], to=FLOAT)
    b.add("Div", ["sub_result_casted", "delta_casted"], ["div_result"])
    b.add("Ceil", ["div_result"], ["ceil_result"])
    b.add("Relu", ["ceil_result"], ["ceil_result_relu"])
    b.add("Cast", ["ceil_result_relu"], ["ceil_result_relu_int"], to=INT64)
    b.add("Cast", ["ceil_result_relu"], ["ceil_result_relu_bool"], to=BOOL)
    b.add("Loop", ["ceil_result_relu_int", "ceil_result_relu_bool", "start"], ["variadic_output", "output"],
          body=_range_loop_body(b, "loop_body_attribute", "cond", "delta"))
    return True


def _range_loop_body(b: BodyBuilder, name: str, cond: str, delta: str):
    """The Loop body: carry ``prev + delta`` on and emit ``prev`` as a scan output."""
    nodes = [b.node("Identity", [cond], ["cond_out"], {}),
             b.node("Add", ["prev", delta], ["current"], {}),
             b.node("Identity", ["prev"], ["range"], {})]
    return b.graph(name, [("i", INT64), (cond, BOOL), ("prev", None)], ["cond_out", "current", "range"], nodes)


def _center_crop_pad(b: BodyBuilder, attrs: NodeAttributes, input_types, version: int) -> bool:
    """CenterCropPad: pad each dimension up to the target evenly, then slice the centre window.

    With ``axes`` only those dimensions are measured, padded and sliced (the axes become a
    Constant referring to the node's attribute).
    """
    b.const_list("k2", [2], INT64)
    with_axes = attrs.get("axes") is not None
    if with_axes:
        b.add("Constant", [], ["axes_input"], value_ints=Ref("axes", INTS_KIND))
        b.add("Shape", ["input_data"], ["x_shape_alldims"])
        b.add("Gather", ["x_shape_alldims", "axes_input"], ["x_shape"])
    else:
        b.add("Shape", ["input_data"], ["x_shape"])
    b.add("Max", ["x_shape", "shape"], ["padded_sh"])
    b.add("Sub", ["padded_sh", "x_shape"], ["pad_amount"])
    b.add("Div", ["pad_amount", "k2"], ["pad_amount_left"])
    b.add("Sub", ["pad_amount", "pad_amount_left"], ["pad_amount_right"])
    b.add("Concat", ["pad_amount_left", "pad_amount_right"], ["pads"], axis=0)
    if with_axes:
        b.add("Pad", ["input_data", "pads", "", "axes_input"], ["padded_input"])
        b.add("Shape", ["padded_input"], ["x_shape_alldims2"])
        b.add("Gather", ["x_shape_alldims2", "axes_input"], ["x_shape2"])
    else:
        b.add("Pad", ["input_data", "pads"], ["padded_input"])
        b.add("Shape", ["padded_input"], ["x_shape2"])
    b.add("Sub", ["x_shape2", "shape"], ["sh_diff"])
    b.add("Div", ["sh_diff", "k2"], ["start_dims"])
    b.add("Add", ["start_dims", "shape"], ["end_dims"])
    b.add("Slice", ["padded_input", "start_dims", "end_dims"] + (["axes_input"] if with_axes else []),
          ["output_data"])
    return True


# (tmp_shape's parts, Transpose perm) by (operator, mode): the 6-D view the block moves in
_BLOCK_LAYOUTS = {
    ("DepthToSpace", b"DCR"): (["N", "blocksize", "blocksize", "C_block", "H", "W"], [0, 3, 4, 1, 5, 2]),
    ("DepthToSpace", b"CRD"): (["N", "C_block", "blocksize", "blocksize", "H", "W"], [0, 1, 4, 2, 5, 3]),
    ("SpaceToDepth", b"DCR"): (["N", "C", "H_block", "blocksize", "W_block", "blocksize"], [0, 3, 5, 1, 2, 4]),
    ("SpaceToDepth", b"CRD"): (["N", "C", "H_block", "blocksize", "W_block", "blocksize"], [0, 1, 3, 5, 2, 4]),
}


def _space_depth(op: str):
    """DepthToSpace and SpaceToDepth (version 28): reshape to 6-D, transpose, reshape back.

    The [N, C, H, W] dimensions come from the input's shape at run time; DepthToSpace
    divides C by blocksize² and multiplies H and W by blocksize, SpaceToDepth the reverse.
    ``mode`` (DCR or CRD) picks the 6-D view.  Refused for a missing or non-positive
    blocksize or another mode; a blocksize whose square overflows int64 raises, as the
    reference's checked multiplication does.
    """
    to_space = op == "DepthToSpace"

    def build(b: BodyBuilder, attrs: NodeAttributes, input_types, version: int) -> bool:
        blocksize = attrs.i("blocksize", 0)
        if blocksize <= 0:
            return False
        block_area = blocksize * blocksize
        if block_area > _INT64_MAX:
            from ...errors import ValidationError  # noqa: PLC0415
            raise ValidationError(f"[ShapeInferenceError] Integer overflow while multiplying dimension "
                                  f"values {blocksize} and {blocksize}")
        layout = _BLOCK_LAYOUTS.get((op, attrs.s("mode", b"DCR")))
        if layout is None:
            return False
        tmp_shape, perm = layout
        b.const_1d("blocksize", blocksize, INT64)
        b.const_1d("block_area", block_area, INT64)
        for i, name in enumerate(("zero", "one", "two", "three", "four")):
            b.const_1d(name, i, INT64)
        b.add("Shape", ["input"], ["input_shape"])
        for dim, (start, end) in zip("NCHW", (("zero", "one"), ("one", "two"), ("two", "three"),
                                              ("three", "four"))):
            b.add("Slice", ["input_shape", start, end], [dim])
        spatial, channel = ("Mul", "Div") if to_space else ("Div", "Mul")
        b.add(spatial, ["H", "blocksize"], ["H_block"])
        b.add(spatial, ["W", "blocksize"], ["W_block"])
        b.add(channel, ["C", "block_area"], ["C_block"])
        b.add("Concat", tmp_shape, ["tmp_shape"], axis=0)
        b.add("Reshape", ["input", "tmp_shape"], ["tmp"], allowzero=1)
        b.add("Transpose", ["tmp"], ["tmp_transposed"], perm=perm)
        b.add("Concat", ["N", "C_block", "H_block", "W_block"], ["output_shape"], axis=0)
        b.add("Reshape", ["tmp_transposed", "output_shape"], ["output"], allowzero=1)
        return True
    return build


BUILDERS = {
    ("", "CenterCropPad"): _center_crop_pad,
    ("", "DepthToSpace"): _space_depth("DepthToSpace"),
    ("", "Range"): _range,
    ("", "SpaceToDepth"): _space_depth("SpaceToDepth"),
}
