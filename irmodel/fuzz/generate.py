"""Random valid ONNX models, built from the operator schemas and checked by inference.

NNSmith-style generators need a Python ML stack to know which graphs are valid; here the
two facts they need are ours: `irmodel.defs` says what an operator accepts (arity, type
constraints, attribute types and which are required) and `irmodel.inference` says what
it produces (``infer_node_outputs``).  A model grows node by node: an operator is drawn
from the pool of schemas whose required inputs accept float, int64 or bool tensors and
whose attributes all have defaults (some written out); its inputs are drawn from the
values made so far or made as initializers, one element type per type parameter and all
of one shape (so that broadcasting never decides validity); inference gives its outputs'
types, and a node inference rejects is drawn again.  Around that core: initializers, an ``If`` whose
branches read outer values, a ``Loop`` with a loop-carried value, and a model-local
function called from the graph.  The finished model passes our own
``check_model(full_check=True)``; the rare one that does not is drawn again from a
derived seed, so a seed always names one model.

Element types: inputs and sub-graph values are float, the type every runtime has kernels
for; int64 and bool values come from the operators that make them (comparisons, ArgMax)
and from initializers.  Operators that read an int64 input as data (a shape, indices,
axes) are left out: inference cannot check those values, and runtimes that fold
constants while loading refuse the models.  This is what makes the models load in
onnxruntime, not only pass the checker.

`near_valid_model` takes a valid model and plants one semantic defect (a name that is
not defined, a value defined twice, an unknown operator, ...): inputs that pass every
decoder and exercise the checkers.  ``model_bytes(seed, kind)`` serializes either.
"""

from __future__ import annotations

import random
import struct

from .rng import FastRandom

FLOAT, BOOL, INT64 = 1, 9, 7
#: The element types values may have, by their type string: float for data, int64 and bool
#: for what comparisons, ArgMax and the like produce (and what Where, Not, Gather... take).
ELEMENT_TYPES = {"tensor(float)": FLOAT, "tensor(int64)": INT64, "tensor(bool)": BOOL}
#: Opsets drawn from when none is given: a range that onnx 1.23 and onnxruntime 1.23 both support.
OPSETS = tuple(range(13, 22))
#: Shapes of the graph inputs (rank 1 to 4, small: initializers hold real data).
SHAPES = ((3,), (2, 3), (1, 3, 4), (2, 3, 4), (1, 2, 3, 3))
#: Unary operators whose output has the input's type and shape: bodies of sub-graphs and functions.
SHAPE_PRESERVING = ("Relu", "Neg", "Abs", "Sigmoid", "Tanh", "Exp", "Identity", "Softsign", "Sqrt",
                    "Ceil", "Floor", "Sin", "Cos", "Erf", "Reciprocal")
#: Operators left out of the pool: nondeterministic or training-only, or with float
#: kernels missing in common runtimes although their schema allows float.
EXCLUDED = frozenset({
    "If", "Loop", "Scan", "SequenceMap",  # sub-graphs are built on purpose, not drawn
    "Constant", "ConstantOfShape", "EyeLike", "RandomNormalLike", "RandomUniformLike", "Multinomial",
    "Bernoulli", "Dropout", "BatchNormalization", "Shape", "Size", "Optional", "OptionalHasElement",
    "OptionalGetElement", "SequenceEmpty", "SequenceConstruct", "SplitToSequence", "ConcatFromSequence",
    "SequenceLength", "SequenceInsert", "SequenceErase", "SequenceAt", "StringConcat", "StringSplit",
    "RegexFullMatch", "StringNormalizer", "TfIdfVectorizer", "Cast", "CastLike", "QuantizeLinear",
    "DequantizeLinear", "DynamicQuantizeLinear", "LpNormalization", "MeanVarianceNormalization",
    "ImageDecoder", "Det", "Momentum", "Adagrad", "Adam", "Gradient", "Col2Im", "RotaryEmbedding",
    "Attention", "RMSNormalization", "TensorScatter", "Swish", "BlackmanWindow", "HannWindow",
    "HammingWindow", "DFT", "STFT", "MelWeightMatrix", "NonMaxSuppression", "Unique", "NonZero",
    "TopK", "Compress", "GridSample", "AffineGrid", "Upsample", "Resize", "LRN", "GroupNormalization",
    "InstanceNormalization", "LayerNormalization", "Trilu", "Range", "Einsum", "Hardmax",
    "DeformConv",  # no onnxruntime kernel
})
#: Attributes set on every node of an operator: where a runtime refuses the schema's default
#: for float inputs (onnxruntime's Mod needs ``fmod=1`` for floating-point types).
ATTRIBUTE_HINTS: dict[str, dict] = {"Mod": {"fmod": 1}}


def _min_rank(op: str) -> int:
    """The least rank of an operator's first input that runtimes accept: pools and
    convolutions need a spatial dimension, which their schemas do not say."""
    return 3 if "Pool" in op or "Conv" in op else 1

_MAX_ATTEMPTS = 8  # models drawn from derived seeds before giving up on one seed


def _default_ir_version(opset: int) -> int:
    from irmodel import helper  # noqa: PLC0415
    return helper.find_min_ir_version_for([helper.make_opsetid("", opset)])


class _Pool:
    """The schemas a node may be drawn from at one opset (each usable with float inputs)."""

    _cache: dict = {}

    @classmethod
    def at(cls, opset: int) -> list:
        pool = cls._cache.get(opset)
        if pool is None:
            from irmodel import defs  # noqa: PLC0415
            pool = []
            names = sorted({s.name for s in defs.get_all_schemas_with_history() if s.domain == ""})
            for name in names:
                if name in EXCLUDED:
                    continue
                try:
                    s = defs.get_schema(name, opset)
                except LookupError:
                    continue
                if s is not None and not s.deprecated and _usable(s):
                    pool.append(s)
            cls._cache[opset] = pool
        return pool


def _allowed(schema, type_str: str) -> tuple:
    """The element types of `ELEMENT_TYPES` an input declared ``type_str`` accepts."""
    for c in schema.type_constraints:
        if c.type_param_str == type_str:
            return tuple(sorted(ELEMENT_TYPES[t] for t in c.allowed_type_strs if t in ELEMENT_TYPES))
    return (ELEMENT_TYPES[type_str],) if type_str in ELEMENT_TYPES else ()


def _usable(schema) -> bool:
    """Whether every required input accepts a float, int64 or bool tensor, none after the
    first only int64, and no attribute is required."""
    if any(a.required for a in schema.attributes.values()):
        return False
    if schema.min_input < 1 or not schema.has_type_and_shape_inference_function:
        return False
    required = [p for p in schema.inputs if p.option != 1]  # 1: optional
    # A later input that must be int64 is data the operator reads (a shape, indices, axes,
    # repeats): inference cannot check its values, runtimes that fold constants do.
    return (bool(required) and all(_allowed(schema, p.type_str) for p in required)
            and not any(_allowed(schema, p.type_str) == (INT64,) for p in required[1:]))


class _Value:
    __slots__ = ("name", "shape", "elem")

    def __init__(self, name: str, shape: tuple, elem: int = FLOAT):
        self.name, self.shape, self.elem = name, shape, elem


class _Builder:
    """The state of one model while it grows."""

    def __init__(self, rng: random.Random, opset: int, max_nodes: int):
        from irmodel import helper  # noqa: PLC0415
        self.h = helper
        self.rng, self.opset, self.max_nodes = rng, opset, max_nodes
        self.nodes: list = []
        self.inputs: list = []
        self.initializers: list = []
        self.functions: list = []
        self.values: list[_Value] = []  # values of ELEMENT_TYPES with known shapes, usable as inputs
        self.other_outputs: dict = {}  # name -> TypeProto of outputs that feed nothing
        self.consumed: set = set()
        self.types: dict = {}  # name -> TypeProto, for inference of later nodes
        self.counter = 0

    def fresh(self, stem: str) -> str:
        self.counter += 1
        return f"{stem}{self.counter}"

    def floats(self) -> list:
        return [v for v in self.values if v.elem == FLOAT]

    def tensor(self, name: str, shape: tuple, elem: int):
        """An initializer's data: small positive floats, ones (safe as divisors and, mostly, as
        indices when a runtime folds constants while loading) or random booleans."""
        n = 1
        for d in shape:
            n *= d
        if elem == INT64:
            return self.h.make_tensor(name, INT64, list(shape), [1] * n)
        if elem == BOOL:
            return self.h.make_tensor(name, BOOL, list(shape), [self.rng.random() < 0.5 for _ in range(n)])
        vals = [round(self.rng.uniform(0.1, 2.0), 3) for _ in range(n)]
        raw = self.rng.random() < 0.5
        data = struct.pack(f"<{n}f", *vals) if raw else vals
        return self.h.make_tensor(name, FLOAT, list(shape), data, raw=raw)

    def add_value(self, name: str, shape: tuple, elem: int = FLOAT) -> None:
        self.values.append(_Value(name, shape, elem))
        self.types[name] = self.h.make_tensor_type_proto(elem, list(shape))

    def add_input(self, shape: tuple) -> _Value:
        name = self.fresh("x")
        self.inputs.append(self.h.make_tensor_value_info(name, FLOAT, list(shape)))
        self.add_value(name, shape)
        return self.values[-1]

    def add_initializer(self, shape: tuple, elem: int = FLOAT) -> _Value:
        name = self.fresh("w")
        self.initializers.append(self.tensor(name, shape, elem))
        self.add_value(name, shape, elem)
        return self.values[-1]

    def scalar(self, name: str, elem: int, value):
        t = self.h.make_tensor(name, elem, [], [value])
        self.initializers.append(t)
        return name

    def use(self, name: str) -> str:
        self.consumed.add(name)
        return name

    # -- nodes from the schema pool ---------------------------------------------------------

    def schema_node(self) -> bool:
        from irmodel.inference import InferenceError, infer_node_outputs  # noqa: PLC0415
        rng = self.rng
        schema = rng.choice(_Pool.at(self.opset))
        first_type = schema.inputs[0].type_str
        ranked = [v for v in self.values
                  if len(v.shape) >= _min_rank(schema.name) and v.elem in _allowed(schema, first_type)]
        if not ranked:
            return False
        first = rng.choice(ranked)
        bound = {first_type: first.elem}  # type parameter -> the element type it stands for here
        names: list[str] = []
        for i, p in enumerate(schema.inputs):
            if p.option == 1:  # optional: left out (trailing ones only, so stop here)
                break
            count = rng.randint(1, 3) if p.option == 2 else 1  # 2: variadic
            for _ in range(count):
                if i == 0 and not names:
                    names.append(first.name)
                    continue
                allowed = (bound[p.type_str],) if p.type_str in bound else _allowed(schema, p.type_str)
                same = [v for v in self.values if v.shape == first.shape and v.elem in allowed]
                if rng.random() < 0.3 or not same:
                    chosen = self.add_initializer(first.shape, rng.choice(allowed))
                else:
                    chosen = rng.choice(same)
                bound.setdefault(p.type_str, chosen.elem)
                names.append(chosen.name)
        outputs = [self.fresh("v") for _ in range(max(1, schema.min_output))]
        node = self.h.make_node(schema.name, names, outputs, name=self.fresh("n"))
        hints = ATTRIBUTE_HINTS.get(schema.name, {})
        for key, value in hints.items():
            node.attribute.append(self.h.make_attribute(key, value))
        for attr in schema.attributes.values():  # some defaults written out: attributes of every schema type
            if attr.name not in hints and rng.random() < 0.3:
                default = attr.default_value
                if default.type:
                    default.name = attr.name
                    node.attribute.append(default)
        types = {n: self.types[n] for n in names}
        try:
            out = infer_node_outputs(schema, node, types, opset_imports=[self.h.make_opsetid("", self.opset)])
        except InferenceError:
            return False
        shapes = {}
        for name in outputs:
            tp = out.get(name)
            if tp is None or not tp.HasField("tensor_type") or not tp.tensor_type.HasField("shape"):
                return False
            dims = tp.tensor_type.shape.dim
            if any(not d.HasField("dim_value") for d in dims):
                return False
            shapes[name] = (tp.tensor_type.elem_type, tuple(d.dim_value for d in dims), tp)
        for name, (elem, shape, tp) in shapes.items():
            if elem in ELEMENT_TYPES.values() and 0 < len(shape) <= 4 and all(0 < d <= 64 for d in shape):
                self.add_value(name, shape, elem)
            else:
                self.other_outputs[name] = tp
                self.types[name] = tp
        for n in names:
            self.use(n)
        self.nodes.append(node)
        return True

    # -- sub-graphs and functions -----------------------------------------------------------

    def _unary_graph(self, name: str, source: str, shape: tuple):
        op = self.rng.choice(SHAPE_PRESERVING)
        out = self.fresh(f"{name}_out")
        node = self.h.make_node(op, [source], [out], name=self.fresh(name))
        return self.h.make_graph([node], self.fresh(name), [],
                                 [self.h.make_tensor_value_info(out, FLOAT, list(shape))])

    def if_node(self) -> None:
        v = self.rng.choice(self.floats())
        cond = self.scalar(self.fresh("cond"), BOOL, self.rng.random() < 0.5)
        out = self.fresh("if")
        then_g = self._unary_graph("then", self.use(v.name), v.shape)
        else_g = self._unary_graph("else", v.name, v.shape)
        self.nodes.append(self.h.make_node("If", [self.use(cond)], [out], name=self.fresh("if_node"),
                                           then_branch=then_g, else_branch=else_g))
        self.add_value(out, v.shape)

    def loop_node(self) -> None:
        h = self.h
        v = self.rng.choice(self.floats())
        trips = self.scalar(self.fresh("trips"), INT64, self.rng.randint(1, 3))
        cond = self.scalar(self.fresh("keep"), BOOL, True)
        i_in, c_in, c_out = self.fresh("iter"), self.fresh("c_in"), self.fresh("c_out")
        x_in, x_out = self.fresh("carried"), self.fresh("carried_out")
        op = self.rng.choice(SHAPE_PRESERVING)
        body = h.make_graph(
            [h.make_node("Identity", [c_in], [c_out], name=self.fresh("body_cond")),
             h.make_node(op, [x_in], [x_out], name=self.fresh("body_op"))],
            self.fresh("body"),
            [h.make_tensor_value_info(i_in, INT64, []), h.make_tensor_value_info(c_in, BOOL, []),
             h.make_tensor_value_info(x_in, FLOAT, list(v.shape))],
            [h.make_tensor_value_info(c_out, BOOL, []), h.make_tensor_value_info(x_out, FLOAT, list(v.shape))])
        out = self.fresh("loop")
        self.nodes.append(h.make_node("Loop", [self.use(trips), self.use(cond), self.use(v.name)], [out],
                                      name=self.fresh("loop_node"), body=body))
        self.add_value(out, v.shape)

    def function_call(self) -> None:
        h = self.h
        name = f"F{len(self.functions)}"
        ops = [self.rng.choice(SHAPE_PRESERVING) for _ in range(self.rng.randint(1, 3))]
        body, prev = [], "x"
        for i, op in enumerate(ops):
            out = "y" if i == len(ops) - 1 else f"t{i}"
            body.append(h.make_node(op, [prev], [out]))
            prev = out
        self.functions.append(h.make_function("local", name, ["x"], ["y"], body,
                                              [h.make_opsetid("", self.opset)]))
        v = self.rng.choice(self.floats())
        out = self.fresh("f")
        self.nodes.append(h.make_node(name, [self.use(v.name)], [out], name=self.fresh("call"), domain="local"))
        self.add_value(out, v.shape)

    # -- the model --------------------------------------------------------------------------

    def build(self):
        h, rng = self.h, self.rng
        for _ in range(rng.randint(1, 3)):
            self.add_input(rng.choice(SHAPES))
        target = rng.randint(1, self.max_nodes)
        tries = 0
        while len(self.nodes) < target and tries < 6 * target:
            tries += 1
            r = rng.random()
            if r < 0.06:
                self.if_node()
            elif r < 0.10:
                self.loop_node()
            elif r < 0.15:
                self.function_call()
            else:
                self.schema_node()
        if not self.nodes:
            self.function_call()
        made = {o for n in self.nodes for o in n.output}
        outputs = [h.make_tensor_value_info(v.name, v.elem, list(v.shape))
                   for v in self.values if v.name in made and v.name not in self.consumed]
        outputs += [h.make_value_info(n, tp) for n, tp in self.other_outputs.items()]
        if not outputs:
            last = self.nodes[-1].output[0]
            outputs.append(h.make_value_info(last, self.types[last]))
        graph = h.make_graph(self.nodes, f"random_{self.opset}", self.inputs, outputs,
                             initializer=self.initializers)
        opsets = [h.make_opsetid("", self.opset)]
        if self.functions:
            opsets.append(h.make_opsetid("local", 1))
        return h.make_model(graph, ir_version=_default_ir_version(self.opset), opset_imports=opsets,
                            functions=self.functions, producer_name="irmodel.fuzz.generate")


def random_model(seed: int, *, max_nodes: int = 12, opset: int | None = None):
    """A valid model (for our ``check_model(full_check=True)``), the same for the same arguments.

    ``opset`` is the default domain's version (default: drawn from `OPSETS`);
    ``max_nodes`` bounds the nodes of the main graph (at least 1).
    """
    from irmodel import ValidationError, check_model  # noqa: PLC0415
    model = None
    for attempt in range(_MAX_ATTEMPTS):
        rng = FastRandom(seed * _MAX_ATTEMPTS + attempt)
        version = opset if opset is not None else rng.choice(OPSETS)
        model = _Builder(rng, version, max(1, max_nodes)).build()
        try:
            check_model(model, full_check=True)
        except ValidationError:
            continue
        return model
    return model


# -- near-valid models ---------------------------------------------------------------------

def _undefined_input(model, rng) -> bool:
    nodes = [n for n in model.graph.node if len(n.input)]
    if not nodes:
        return False
    node = rng.choice(nodes)
    node.input[rng.randrange(len(node.input))] = "undefined_value"
    return True


def _value_defined_twice(model, rng) -> bool:
    g = model.graph
    if len(g.node) < 2:
        return False
    a, b = rng.sample(range(len(g.node)), 2)
    g.node[max(a, b)].output[0] = g.node[min(a, b)].output[0]
    return True


def _unknown_operator(model, rng) -> bool:
    node = rng.choice(list(model.graph.node))
    node.op_type = "NoSuchOperator"
    node.domain = ""
    return True


def _no_default_opset(model, rng) -> bool:  # noqa: ARG001
    if not any(n.domain == "" for n in model.graph.node):
        return False
    keep = [o for o in model.opset_import if o.domain not in ("", "ai.onnx")]
    del model.opset_import[:]
    model.opset_import.extend(keep)
    return True


def _wrong_input_type(model, rng) -> bool:
    """A graph input fed directly to an operator that does not accept strings, made a string."""
    from irmodel import defs  # noqa: PLC0415
    opset = next((o.version for o in model.opset_import if o.domain == ""), None)
    targets = []
    for node in model.graph.node:
        if node.domain or node.op_type in ("Identity", "If", "Loop") or not len(node.input):
            continue
        schema = defs.get_schema(node.op_type, opset)
        first = schema.inputs[0].type_str
        allowed = next((c.allowed_type_strs for c in schema.type_constraints if c.type_param_str == first), (first,))
        if "tensor(string)" not in allowed:
            targets.append(node.input[0])
    inputs = [vi for vi in model.graph.input if vi.name in targets]
    if not inputs:
        return False
    rng.choice(inputs).type.tensor_type.elem_type = 8  # string
    return True


def _initializer_size(model, rng) -> bool:
    """An initializer whose dims promise one more row (or, for a scalar, two elements)
    than its data holds."""
    inits = list(model.graph.initializer)
    if not inits:
        return False
    t = rng.choice(inits)
    if len(t.dims):
        t.dims[0] = t.dims[0] + 1
    else:
        t.dims.append(2)
    return True


def _ir_version_zero(model, rng) -> bool:  # noqa: ARG001
    model.ir_version = 0
    return True


#: The semantic defects `near_valid_model` plants, each a function editing the model in place
#: (returning False when the model has nothing it applies to).
DEFECTS = {
    "undefined_input": _undefined_input,
    "value_defined_twice": _value_defined_twice,
    "unknown_operator": _unknown_operator,
    "no_default_opset": _no_default_opset,
    "wrong_input_type": _wrong_input_type,
    "initializer_size": _initializer_size,
    "ir_version_zero": _ir_version_zero,
}


def near_valid_model(seed: int, defect: str | None = None):
    """A valid model (`random_model`) with one semantic defect of `DEFECTS` planted.

    Decoders accept it; checkers must reject it.  ``defect`` names the defect (default:
    drawn by the seed among those that apply).  The defect's name is in the model's
    ``doc_string``, so a finding says what it was fed.
    """
    from irmodel import loads, dumps  # noqa: PLC0415
    base = dumps(random_model(seed))
    rng = FastRandom(seed ^ 0x5EED)
    names = [defect] if defect is not None else list(DEFECTS)
    rng.shuffle(names)
    for name in names:
        model = loads(base)
        if DEFECTS[name](model, rng):
            model.doc_string = f"near-valid: {name}"
            return model
    raise ValueError(f"defect {defect!r} does not apply to the model of seed {seed}")


def model_bytes(seed: int, kind: str) -> bytes:
    """The serialized model of ``seed``: kind ``'valid'`` (`random_model`) or ``'near-valid'``."""
    from irmodel import dumps  # noqa: PLC0415
    if kind == "valid":
        return dumps(random_model(seed))
    if kind == "near-valid":
        return dumps(near_valid_model(seed))
    raise ValueError(f"unknown model kind {kind!r} (valid, near-valid)")


__all__ = ["random_model", "near_valid_model", "model_bytes", "DEFECTS", "OPSETS", "SHAPE_PRESERVING"]
