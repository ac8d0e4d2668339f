"""Random valid ONNX models, built from the operator schemas and checked by inference.

NNSmith-style generators need a Python ML stack to know which graphs are valid; here the
two facts they need are ours: `irmodel.defs` says what an operator accepts (arity, type
constraints, attribute types and which are required) and `irmodel.inference` says what
it produces (``infer_node_outputs``).  A model grows node by node (`irmodel.fuzz.builder`):
an operator is drawn uniformly by name among every ai.onnx operator of the model's opset
and the ai.onnx.ml ones (`builder.operator_names`); one whose inputs and attributes the
schema alone can fill (float, int64 or bool tensors of one shape, attributes defaulted,
some written out) is built generically, the others by their recipe
(`irmodel.fuzz.recipes`: required attributes, shapes and indices given as valid
constants, strings, uint8 for the quantized operators, sequences, optionals, ``Scan`` and
``SequenceMap`` bodies, the ai.onnx.ml models).  Inference gives each node's outputs'
types, and a node inference rejects is drawn again.  Around that: initializers, an ``If``
whose branches read outer values, a ``Loop`` with a loop-carried value, and a model-local
function called from the graph.  The finished model passes our own
``check_model(full_check=True)``; the rare one that does not is drawn again from a
derived seed, so a seed always names one model.

Constants are valid data, not only well-typed: onnxruntime folds constant sub-graphs
while loading, so an index out of range or a wrong shape would refuse the model.  What
`benchmarks/bench_generator.py` measured over seeds 0..299 is in benchmarks/RESULTS.md
(187 distinct ai.onnx operators, all 300 pass onnx's full check, 298 load in onnxruntime).

`near_valid_model` takes a valid model and plants one semantic defect (a name that is
not defined, a value defined twice, an unknown operator, ...): inputs that pass every
decoder and exercise the checkers.  ``model_bytes(seed, kind)`` serializes either.
"""

from __future__ import annotations

from .builder import OPSETS, SHAPE_PRESERVING, _Builder  # noqa: F401 - OPSETS, SHAPE_PRESERVING re-exported
from .rng import FastRandom

_MAX_ATTEMPTS = 8  # models drawn from derived seeds before giving up on one seed



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
