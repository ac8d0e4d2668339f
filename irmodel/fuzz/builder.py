"""The state of one random model while it grows, and the pool of operators it draws from.

`irmodel.fuzz.generate` says what the models are and why; this module is the machinery:
`_Builder` holds the values made so far (name, shape, element type), makes initializers
(`const`, `pick`), and adds a node only when our inference accepts it (`emit`), keeping
its outputs as values later nodes may read.  An operator is drawn uniformly by name
(`operator_names`): from its recipe (`irmodel.fuzz.recipes`) when it needs a particular
form, else generically from its schema (`_Pool`).
"""

from __future__ import annotations

import random
import struct

from irmodel import TensorProto

FLOAT, INT64, STRING, BOOL = TensorProto.FLOAT, TensorProto.INT64, TensorProto.STRING, TensorProto.BOOL
FLOAT16, DOUBLE = TensorProto.FLOAT16, TensorProto.DOUBLE
FLOAT_TYPES = frozenset({FLOAT, FLOAT16, DOUBLE})
#: The ai.onnx.ml version used with each default-domain version (released together, both
#: supported by onnxruntime 1.23).
ML_OPSETS = {13: 2, 14: 2, 15: 3, 16: 3, 17: 3, 18: 3, 19: 4, 20: 4, 21: 5}
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
#: Operators left out of the generic pool: those a recipe builds (`irmodel.fuzz.recipes`,
#: which takes precedence anyway), those made on purpose (sub-graphs), and those no runtime
#: can load (``ImageDecoder``, ``DeformConv``: no onnxruntime kernel).
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

    @classmethod
    def by_name(cls, opset: int) -> dict:
        return {s.name: s for s in cls.at(opset)}


def operator_names(opset: int) -> list:
    """The operators a node is drawn from at ``opset``: the pool's and those with a recipe
    whose schema exists there (ai.onnx, and ai.onnx.ml at `ML_OPSETS`), sorted."""
    names = _NAMES.get(opset)
    if names is None:
        from irmodel import defs  # noqa: PLC0415
        from .recipes import RECIPES, domain_of  # noqa: PLC0415
        names = set(_Pool.by_name(opset))
        for name in RECIPES:
            domain = domain_of(name)
            try:
                s = defs.get_schema(name, opset if domain == "" else ML_OPSETS.get(opset, 3), domain)
            except LookupError:
                continue
            if s is not None and not s.deprecated:
                names.add(name)
        names = _NAMES[opset] = sorted(names)
    return names


_NAMES: dict = {}


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
        self.data: dict = {}  # name -> TensorProto of the initializers, for inference of shape inputs
        self.ml_opset: int | None = None  # set when a node of ai.onnx.ml is drawn
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
        self.data[name] = self.initializers[-1]
        self.add_value(name, shape, elem)
        return self.values[-1]

    def scalar(self, name: str, elem: int, value):
        t = self.h.make_tensor(name, elem, [], [value])
        self.initializers.append(t)
        return name

    def use(self, name: str) -> str:
        self.consumed.add(name)
        return name

    # -- what the operator recipes (`irmodel.fuzz.recipes`) build with --------------------

    def const(self, elem: int, shape, values=None, stem: str = "c") -> str:
        """An initializer of any element type holding ``values`` (default: valid small data:
        ones for integers, small positive floats, alternating booleans, short strings)."""
        shape = list(shape)
        n = 1
        for d in shape:
            n *= d
        if values is None:
            if elem in FLOAT_TYPES:
                values = [round(self.rng.uniform(0.1, 2.0), 3) for _ in range(n)]
            elif elem == BOOL:
                values = [i % 2 == 0 for i in range(n)]
            elif elem == STRING:
                values = [self.rng.choice((b"a", b"bc", b"Hello", b" x y ")) for _ in range(n)]
            else:
                values = [1] * n
        name = self.fresh(stem)
        t = self.h.make_tensor(name, elem, shape, list(values))
        self.initializers.append(t)
        self.data[name] = t
        self.types[name] = self.h.make_tensor_type_proto(elem, shape)
        return name

    def pick(self, rank: int | None = None, min_rank: int = 1, elem: int = FLOAT) -> _Value:
        """A value of ``elem`` (and ``rank``, or at least ``min_rank``): one made so far, or a new
        initializer."""
        ok = [v for v in self.values if v.elem == elem and
              (len(v.shape) == rank if rank is not None else len(v.shape) >= min_rank)]
        if ok and self.rng.random() < 0.7:
            return self.rng.choice(ok)
        r = rank if rank is not None else self.rng.randint(max(1, min_rank), max(4, min_rank))
        shape = tuple(self.rng.randint(1, 3) + (1 if i > 0 else 0) for i in range(r))
        return self.add_initializer(shape, elem) if elem in ELEMENT_TYPES.values() else self._typed(shape, elem)

    def _typed(self, shape: tuple, elem: int) -> _Value:
        name = self.const(elem, shape, stem="w")
        self.values.append(_Value(name, shape, elem))
        return self.values[-1]

    def emit(self, op: str, inputs: list, n_out: int = 1, domain: str = "", ranks: tuple = (),
             **attrs) -> list | None:
        """Append one node if inference accepts it; its outputs' names (None if refused).

        Outputs with a static tensor type of `ELEMENT_TYPES` become values later nodes may
        read; any other inferred type (a sequence, an optional, uint8, an unknown dim) goes
        to the graph's outputs as inferred.  An output inference knows nothing of refuses it.
        ``ranks``: the rank of each output whose inference gives no shape (the ai.onnx.ml
        operators, functions without a shape rule): the graph output is declared with that
        many unnamed dims, as a graph output must have a shape.
        """
        from irmodel import defs  # noqa: PLC0415
        from irmodel.inference import InferenceError, infer_node_outputs  # noqa: PLC0415
        if len(self.nodes) >= self.max_nodes:  # a recipe's second node would pass the bound
            return None
        version = self.opset if domain == "" else self.ml_version(domain)
        try:
            schema = defs.get_schema(op, version, domain)
        except LookupError:
            return None
        if schema is None or schema.deprecated:
            return None
        outputs = [self.fresh("v") for _ in range(n_out)]
        node = self.h.make_node(op, inputs, outputs, name=self.fresh("n"), domain=domain or None)
        for key, value in attrs.items():
            node.attribute.append(value if hasattr(value, "ref_attr_name") else self.h.make_attribute(key, value))
        types = {n: self.types[n] for n in self.types}  # outer scope too, for sub-graphs
        data = {n: self.data[n] for n in inputs if n in self.data}
        opsets = [self.h.make_opsetid("", self.opset)]
        if domain:
            opsets.append(self.h.make_opsetid(domain, version))
        try:
            out = infer_node_outputs(schema, node, types, input_data=data, opset_imports=opsets)
        except InferenceError:
            return None
        if domain and self.ml_opset is None:
            self.ml_opset = version
        if not self._typed_outputs(out, outputs):
            return None
        for name, rank in zip(outputs, ranks):
            tt = out[name].tensor_type if out[name].HasField("tensor_type") else None
            if tt is not None and not tt.HasField("shape"):
                out[name] = self.h.make_tensor_type_proto(tt.elem_type, [None] * rank)
        return self._record(node, out, inputs)

    def ml_version(self, domain: str) -> int:
        """The ai.onnx.ml version of this model (fixed by the default opset)."""
        return ML_OPSETS.get(self.opset, 3)

    @staticmethod
    def _typed_outputs(out: dict, outputs: list) -> bool:
        return all(name in out and out[name].WhichOneof("value") for name in outputs)

    def _record(self, node, out: dict, inputs: list) -> list:
        for name in node.output:
            tp = out[name]
            shape = None
            if tp.HasField("tensor_type") and tp.tensor_type.HasField("shape"):
                dims = tp.tensor_type.shape.dim
                if all(d.HasField("dim_value") for d in dims):
                    shape = tuple(d.dim_value for d in dims)
            elem = tp.tensor_type.elem_type if tp.HasField("tensor_type") else 0
            if (shape is not None and elem in ELEMENT_TYPES.values() and 0 < len(shape) <= 4
                    and all(0 < d <= 64 for d in shape)):
                self.add_value(name, shape, elem)
            else:
                self.other_outputs[name] = tp
                self.types[name] = tp
        for n in inputs:
            if n:
                self.use(n)
        self.nodes.append(node)
        return list(node.output)

    # -- nodes from the schema pool ---------------------------------------------------------

    def schema_node(self, schema=None) -> bool:
        """A node of ``schema`` (default: drawn from the pool) on values of `ELEMENT_TYPES`."""
        rng = self.rng
        schema = schema or rng.choice(_Pool.at(self.opset))
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
        hints = dict(ATTRIBUTE_HINTS.get(schema.name, {}))
        for attr in schema.attributes.values():  # some defaults written out: attributes of every schema type
            if attr.name not in hints and rng.random() < 0.3:
                default = attr.default_value
                if default.type:
                    default.name = attr.name
                    hints[attr.name] = default  # as the schema writes it (an empty list keeps its type)
        return self.emit(schema.name, names, max(1, schema.min_output), **hints) is not None

    def operator_node(self) -> bool:
        """A node of an operator drawn uniformly by name (`operator_names`): its recipe
        (`irmodel.fuzz.recipes`) when it has one, else the schema's generic form."""
        from .recipes import RECIPES  # noqa: PLC0415
        name = self.rng.choice(operator_names(self.opset))
        recipe = RECIPES.get(name)
        if recipe is not None:
            return bool(recipe(self))
        return self.schema_node(_Pool.by_name(self.opset)[name])

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
            if r < 0.04:
                self.if_node()
            elif r < 0.07:
                self.loop_node()
            elif r < 0.10:
                self.function_call()
            else:
                self.operator_node()
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
        if self.ml_opset is not None:
            opsets.append(h.make_opsetid("ai.onnx.ml", self.ml_opset))
        if self.functions:
            opsets.append(h.make_opsetid("local", 1))
        return h.make_model(graph, ir_version=_default_ir_version(self.opset), opset_imports=opsets,
                            functions=self.functions, producer_name="irmodel.fuzz.generate")
