"""onnxruntime's com.microsoft operators of optimized transformer models.

onnx has no schemas or inference for them; the schemas are onnxruntime's
(`irmodel.defs`, contrib_microsoft.json) and the rules below follow the shapes its
documentation (docs/ContribOperators.md, the same text as the schemas' descriptions)
gives for each output.  The soundness rule: a dim is given only where that text
determines it from the inputs' dims and the attributes.  Where it depends on a runtime
value (GroupQueryAttention's ``total_sequence_length``), on whether two tensors share a
buffer, or on a layout the documentation leaves open, the dim stays unknown.

Element types come from the schema (`_schema_types`): an output whose type parameter
is shared with a typed input gets that input's element type; one whose parameter
allows a single type gets it.  Shapes are built with `dims`' helpers only, so symbolic
dim arithmetic applies to them.
"""

from __future__ import annotations

from .. import common as C
from .. import dims as D
from ..registry import infers
from ..types import TensorType
from .conv import LEGACY, conv_pool_shape
from .linalg import matmul_shape

MS = "com.microsoft"
_UINT8 = 2

_schema_cache: dict = {}


def _schema(op_type: str):
    schema = _schema_cache.get(op_type)
    if schema is None:
        from ... import defs  # noqa: PLC0415
        schema = _schema_cache[op_type] = defs.get_schema(op_type, 1, MS)
    return schema


def _single_type(schema, param: str) -> int:
    """The element type of ``param`` when its constraint (or the string itself) names exactly one."""
    from ..typestr import parse_type_string  # noqa: PLC0415
    allowed: list = [param] if param.startswith("tensor(") else []
    for c in schema.type_constraints:
        if c.type_param_str == param:
            allowed = list(c.allowed_type_strs)
    if len(allowed) != 1:
        return 0
    t = parse_type_string(allowed[0])
    return (t.elem or 0) if type(t) is TensorType else 0


def _schema_types(ctx) -> None:
    """Every present output's element type, from the type parameters of the schema."""
    schema = _schema(ctx.node.op_type)
    formal_in = schema.inputs
    for o, formal in enumerate(schema.outputs):
        if o >= ctx.num_outputs or not ctx.has_output(o):
            continue
        elem = 0
        for i, p in enumerate(formal_in):
            if p.type_str == formal.type_str and i < ctx.num_inputs and ctx.has_input(i):
                t = ctx.input_type(i)
                if type(t) is TensorType and t.elem:
                    elem = t.elem
                    break
        if not elem:
            elem = _single_type(schema, formal.type_str)
        if elem:
            C.set_output_elem(ctx, o, elem)


def _shape(ctx, i: int):
    """Input ``i``'s shape when the input is present with a known shape, else None."""
    if i >= ctx.num_inputs or not ctx.has_input(i):
        return None
    t = ctx.input_type(i)
    if type(t) is TensorType and t.shape is not None:
        return t.shape
    return None


def _rank(ctx, i: int):
    s = _shape(ctx, i)
    return None if s is None else len(s)


def _set(ctx, o: int, shape) -> None:
    if o < ctx.num_outputs and ctx.has_output(o) and shape is not None:
        C.set_output_shape(ctx, o, shape)


def _int_attr(ctx, name: str, default: int) -> int:
    return C.attr_int(ctx, name, default)


def _heads(ctx, name: str = "num_heads") -> int:
    """A positive head count from a required attribute, else 0 (no dim from it)."""
    n = _int_attr(ctx, name, 0)
    return n if n > 0 else 0


def _div(d, k: int):
    """``d / k`` for a positive attribute ``k``; unknown when ``k`` is not usable."""
    return D.div_int(d, k) if k > 0 else None


def _mul(d, k: int):
    return D.mul_int(d, k) if k > 0 else None


def _typed(fn):
    def rule(ctx) -> None:
        _schema_types(ctx)
        fn(ctx)
    rule.__name__ = fn.__name__
    rule.__doc__ = fn.__doc__
    return rule


# -- same shape as the first input -----------------------------------------------------------

@infers(("Gelu", "QuickGelu", "FastGelu", "BiasGelu", "BiasAdd", "RotaryEmbedding"), 1, domain=MS)
@_typed
def same_shape(ctx) -> None:
    """Element-wise (with a bias or residual of the same or a trailing shape): X's shape."""
    _set(ctx, 0, _shape(ctx, 0))


@infers("BiasSplitGelu", 1, domain=MS)
@_typed
def bias_split_gelu(ctx) -> None:
    """(N, S, D) -> (N, S, D/2)."""
    x = _shape(ctx, 0)
    if x is not None and len(x) == 3:
        _set(ctx, 0, (x[0], x[1], D.div_int(x[2], 2)))


# -- layer normalizations -----------------------------------------------------------------------

@infers(("SkipLayerNormalization", "SkipSimplifiedLayerNormalization"), 1, domain=MS)
@_typed
def skip_layer_norm(ctx) -> None:
    """output and input_skip_bias_sum have the input's shape; mean and inv_std_var's shapes
    are not documented (only their type, float)."""
    x = _shape(ctx, 0)
    _set(ctx, 0, x)
    _set(ctx, 3, x)


@infers("EmbedLayerNormalization", 1, domain=MS)
@_typed
def embed_layer_norm(ctx) -> None:
    """(batch, sequence) ids -> (batch, sequence, hidden); mask_index (batch)."""
    ids = _shape(ctx, 0)
    if ids is None or len(ids) != 2:
        return
    hidden = None
    for i, axis in ((2, 1), (3, 1), (5, 0), (6, 0)):  # word/position embedding, gamma, beta
        s = _shape(ctx, i)
        if s is not None and len(s) > axis:
            hidden = D.unify(s[axis], hidden)
    out = (ids[0], ids[1], hidden)
    _set(ctx, 0, out)
    _set(ctx, 1, (ids[0],))
    _set(ctx, 2, out)


# -- attention ------------------------------------------------------------------------------------

def _qkv_sizes(ctx, weights: int, bias: int):
    """(q, k, v) hidden sizes: the qkv_hidden_sizes attribute, else a third of the merged dim."""
    sizes = C.attr_ints(ctx, "qkv_hidden_sizes")
    if sizes is not None:
        return tuple(sizes) if len(sizes) == 3 and all(v > 0 for v in sizes) else (None, None, None)
    merged = None
    for i, axis in ((weights, 1), (bias, 0)):
        s = _shape(ctx, i)
        if s is not None and len(s) > axis:
            merged = D.unify(s[axis], merged)
    third = D.div_int(merged, 3) if merged is not None else None
    return third, third, third


def _packed_present(ctx, past: int, batch, heads: int, head_size, new_len, share: bool):
    """(2, batch, heads, past + new, head) of Attention/QAttention; the past's shape when shared."""
    p = _shape(ctx, past)
    if share:
        return p
    if ctx.has_input(past):
        total = D.add(p[3], new_len) if p is not None and len(p) == 5 else None
    else:
        total = new_len
    return (2, batch, heads or None, total, head_size)


@infers("Attention", 1, domain=MS)
@_typed
def attention(ctx) -> None:
    """input (B, S, in) -> output (B, S, v_hidden); present (2, B, N, past + S, head)."""
    x = _shape(ctx, 0)
    if x is None or len(x) != 3:
        return
    q, _k, v = _qkv_sizes(ctx, 1, 2)
    _set(ctx, 0, (x[0], x[1], v))
    heads = _heads(ctx)
    share = _int_attr(ctx, "past_present_share_buffer", 0) != 0
    _set(ctx, 1, _packed_present(ctx, 4, x[0], heads, _div(q, heads), x[1], share))


@infers("QAttention", 1, domain=MS)
@_typed
def qattention(ctx) -> None:
    """input (B, S, in), weight (in, 3 * hidden) -> output (B, S, hidden); present as Attention."""
    x = _shape(ctx, 0)
    if x is None or len(x) != 3:
        return
    hidden, _k, _v = _qkv_sizes(ctx, 1, 2)
    _set(ctx, 0, (x[0], x[1], hidden))
    heads = _heads(ctx)
    share = _int_attr(ctx, "past_present_share_buffer", 0) != 0
    _set(ctx, 1, _packed_present(ctx, 8, x[0], heads, _div(hidden, heads), x[1], share))


@infers("PackedAttention", 1, domain=MS)
@_typed
def packed_attention(ctx) -> None:
    """input (tokens, in) -> output (tokens, v_hidden)."""
    x = _shape(ctx, 0)
    if x is None or len(x) != 2:
        return
    _q, _k, v = _qkv_sizes(ctx, 1, 2)
    _set(ctx, 0, (x[0], v))


@infers("MultiHeadAttention", 1, domain=MS)
@_typed
def multi_head_attention(ctx) -> None:
    """query (B, S, hidden) with key/value (B, L, hidden/v_hidden), packed KV (B, L, N, 2, H)
    or past-style key/value (B, N, L, H); or packed QKV (B, L, N, 3, H).

    output (B, S, v_hidden); present_key/value (B, N, total, H) with total = past + L when
    key and value are 3D or QKV is packed and no past_sequence_length asks for buffer
    sharing; qk (B, N, S, total).
    """
    q = _shape(ctx, 0)
    if q is None or len(q) not in (3, 5):
        return
    heads = _heads(ctx)
    key, value = _shape(ctx, 1), _shape(ctx, 2)
    batch = q[0]
    kv_len = k_head = v_head = None
    if len(q) == 5:  # packed QKV
        seq = q[1]
        v_hidden = D.mul(q[2], q[4])
        kv_len, k_head, v_head = q[1], q[4], q[4]
    else:
        seq = q[1]
        v_hidden = None
        if key is not None and len(key) == 5:  # packed KV
            v_hidden = D.mul(key[2], key[4])
            kv_len, k_head, v_head = key[1], key[4], key[4]
        elif key is not None and len(key) == 3 and value is not None and len(value) == 3:
            v_hidden = value[2]
            kv_len, k_head, v_head = key[1], _div(key[2], heads), _div(value[2], heads)
        elif value is not None and len(value) == 4:
            v_hidden = D.mul(value[1], value[3])
    _set(ctx, 0, (batch, seq, v_hidden))
    total = None
    if kv_len is not None and not ctx.has_input(8):
        if ctx.has_input(6):
            past = _shape(ctx, 6)
            total = D.add(past[2], kv_len) if past is not None and len(past) == 4 else None
        else:
            total = kv_len
    n = heads or None
    _set(ctx, 1, (batch, n, total, k_head))
    _set(ctx, 2, (batch, n, total, v_head))
    _set(ctx, 3, (batch, n, seq, total))


@infers("DecoderMaskedMultiHeadAttention", 1, domain=MS)
@_typed
def decoder_masked_mha(ctx) -> None:
    """query (B, S, hidden); self-attention key/value (B, S, hidden/v_hidden), cross attention
    key/value (B, N, L, H).  output (B, S, v_hidden); present_key/value: the past's shape when
    past and present share a buffer, else (B, N, past + S, H) for self-attention."""
    q = _shape(ctx, 0)
    if q is None or len(q) != 3:
        return
    heads = _heads(ctx)
    key, value = _shape(ctx, 1), _shape(ctx, 2)
    v_hidden = None
    self_attention = key is not None and len(key) == 3
    if self_attention and value is not None and len(value) == 3:
        v_hidden = value[2]
    elif value is not None and len(value) == 4:
        v_hidden = D.mul(value[1], value[3])
    _set(ctx, 0, (q[0], q[1], v_hidden))
    if not self_attention:
        return
    share = _int_attr(ctx, "past_present_share_buffer", 0) != 0
    for out, past_in in ((1, 5), (2, 6)):
        past = _shape(ctx, past_in)
        if share:
            _set(ctx, out, past)
        elif past is not None and len(past) == 4:
            _set(ctx, out, (q[0], heads or None, D.add(past[2], key[1]), past[3]))


def _packed_head(ctx, q, key_given: bool, heads: int, kv_heads: int):
    """head_size from the query: hidden / N, or d / (N + 2 * KV) for packed QKV."""
    if key_given:
        return _div(q[2], heads)
    if heads > 0 and kv_heads > 0:
        return D.div_int(q[2], heads + 2 * kv_heads)
    return None


@infers("GroupQueryAttention", 1, domain=MS)
@_typed
def group_query_attention(ctx) -> None:
    """query (B, S, N*H) or packed (B, S, (N + 2*KV)*H) -> output (B, S, N*H);
    present_key/value (B, KV, ?, H): their length depends on total_sequence_length's value
    and on buffer sharing, so it stays unknown; output_qk (B, N, S, ?)."""
    q = _shape(ctx, 0)
    if q is None or len(q) != 3:
        return
    heads, kv_heads = _heads(ctx), _heads(ctx, "kv_num_heads")
    head = _packed_head(ctx, q, ctx.has_input(1), heads, kv_heads)
    hidden = q[2] if ctx.has_input(1) else _mul(head, heads)
    _set(ctx, 0, (q[0], q[1], hidden))
    present = (q[0], kv_heads or None, None, head)
    _set(ctx, 1, present)
    _set(ctx, 2, present)
    _set(ctx, 3, (q[0], heads or None, q[1], None))


@infers("SparseAttention", 1, domain=MS)
@_typed
def sparse_attention(ctx) -> None:
    """output (B, S, N*H); present_key/value keep the caches' shapes (max_cache_sequence_length)."""
    q = _shape(ctx, 0)
    if q is not None and len(q) == 3:
        heads, kv_heads = _heads(ctx), _heads(ctx, "kv_num_heads")
        if ctx.has_input(1):
            hidden = q[2]
        else:
            hidden = _mul(_packed_head(ctx, q, False, heads, kv_heads), heads)
        _set(ctx, 0, (q[0], q[1], hidden))
    _set(ctx, 1, _shape(ctx, 3))
    _set(ctx, 2, _shape(ctx, 4))


# -- matrix products ---------------------------------------------------------------------------------

@infers(("DynamicQuantizeMatMul", "GemmFastGelu"), 1, domain=MS)
@_typed
def matmul_like(ctx) -> None:
    """numpy matmul of inputs 0 and 1 (quantization and bias do not change the shape)."""
    matmul_shape(ctx, 0, 1)


@infers("MatMulNBits", 1, domain=MS)
@_typed
def matmul_nbits(ctx) -> None:
    """A (..., K) -> Y (..., N), N an attribute."""
    a = _shape(ctx, 0)
    n = _int_attr(ctx, "N", 0)
    if a is not None and len(a) >= 1 and n > 0:
        _set(ctx, 0, tuple(a[:-1]) + (n,))


@infers("QOrderedMatMul", 1, domain=MS)
@_typed
def qordered_matmul(ctx) -> None:
    """Y has A's leading dims; its last dim comes from B, whose stored layout follows
    order_B (a cuBLASLt order the documentation does not tie to B's dims): unknown."""
    a = _shape(ctx, 0)
    if a is not None and len(a) >= 1:
        _set(ctx, 0, tuple(a[:-1]) + (None,))


# -- gathers and convolutions ---------------------------------------------------------------------

@infers("GatherBlockQuantized", 1, domain=MS)
@_typed
def gather_block_quantized(ctx) -> None:
    """data[:axis] + indices + data[axis+1:]; uint8 data packs 8/bits values along its last dim."""
    data, indices = _shape(ctx, 0), _shape(ctx, 1)
    if data is None or indices is None or len(data) < 1:
        return
    r = len(data)
    axis = _int_attr(ctx, "gather_axis", 0)
    if not -r <= axis < r:
        return
    axis %= r
    dims = list(data)
    t = ctx.input_type(0)
    if t.elem == _UINT8:
        bits = _int_attr(ctx, "bits", 4)
        if bits not in (4, 8):
            return
        if axis == r - 1:
            return
        dims[-1] = D.mul_int(dims[-1], 8 // bits)
    elif not t.elem:
        return  # packed or not: unknown without the element type
    _set(ctx, 0, tuple(dims[:axis]) + tuple(indices) + tuple(dims[axis + 1:]))


class _NchwView:
    """A node's context with input 0 seen channels-first: NhwcConv through the Conv rule."""

    def __init__(self, ctx, x) -> None:
        self._ctx = ctx
        self._x = TensorType(None, (x[0], x[-1]) + tuple(x[1:-1]))
        self.outputs = [None] * ctx.num_outputs

    num_inputs = property(lambda self: self._ctx.num_inputs)
    num_outputs = property(lambda self: len(self.outputs))

    def input_type(self, i: int):
        return self._x if i == 0 else self._ctx.input_type(i)

    def attr(self, name: str):
        return self._ctx.attr(name)

    def output(self, i: int):
        return self.outputs[i]

    def set_output(self, i: int, t) -> None:
        self.outputs[i] = t

    def display_name(self) -> str:
        return self._ctx.display_name()


@infers("NhwcConv", 1, domain=MS)
@_typed
def nhwc_conv(ctx) -> None:
    """X (N, spatial..., C) -> Y (N, spatial'..., M), M = W's first dim.  The spatial sizes
    need the kernel's; W's layout (channels first or last) is not settled by the text, so
    they are given only when the kernel_shape attribute states them."""
    x, w = _shape(ctx, 0), _shape(ctx, 1)
    if x is None or len(x) < 3:
        return
    m = w[0] if w is not None and len(w) >= 1 else None
    spatial = [None] * (len(x) - 2)
    if C.attr_ints(ctx, "kernel_shape") is not None and w is not None:
        view = _NchwView(ctx, x)
        conv_pool_shape(view, True, False, 0, 1, LEGACY)
        out = view.outputs[0]
        if type(out) is TensorType and out.shape is not None and len(out.shape) == len(x):
            spatial = list(out.shape[2:])
    _set(ctx, 0, (x[0],) + tuple(spatial) + (m,))
