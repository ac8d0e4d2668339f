"""Recipes of operators on other types: signal windows and transforms, strings, sequences,
optionals, and the sub-graph operators ``Scan`` and ``SequenceMap`` (see `irmodel.fuzz.recipes`)."""

from __future__ import annotations

from ._common import FLOAT, INT64, STRING, _emit, _scalar, _x

# -- signal ------------------------------------------------------------------------------

def _window(op):
    def recipe(b):
        return _emit(b, op, [_scalar(b, INT64, 4)])
    return recipe


def dft(b):
    return _emit(b, "DFT", [b.const(FLOAT, [1, 4, 1])])


def stft(b):
    return _emit(b, "STFT", [b.const(FLOAT, [1, 8, 1]), _scalar(b, INT64, 2), b.const(FLOAT, [4])])


def mel_weight_matrix(b):
    return _emit(b, "MelWeightMatrix", [_scalar(b, INT64, 2), _scalar(b, INT64, 8), _scalar(b, INT64, 16000),
                                        _scalar(b, FLOAT, 0.0), _scalar(b, FLOAT, 8000.0)])


# -- strings -----------------------------------------------------------------------------

def _strings(b, n=3):
    return b.const(STRING, [n])


def string_normalizer(b):
    return _emit(b, "StringNormalizer", [_strings(b)], locale="C",
                 case_change_action=b.rng.choice(("LOWER", "UPPER", "NONE")))


def string_concat(b):
    return _emit(b, "StringConcat", [_strings(b), _strings(b)])


def string_split(b):
    return _emit(b, "StringSplit", [_strings(b)], 2, delimiter=" ")


def regex_full_match(b):
    return _emit(b, "RegexFullMatch", [_strings(b)], pattern="[a-z]+")


def tfidf(b):
    return _emit(b, "TfIdfVectorizer", [b.const(INT64, [4], [1, 2, 3, 2])], mode="TF", min_gram_length=1,
                 max_gram_length=1, max_skip_count=0, ngram_counts=[0], ngram_indexes=[0, 1], pool_int64s=[2, 3])


# -- sequences, optionals, sub-graphs ------------------------------------------------------

def _sequence(b):
    """A sequence of two float tensors of one shape (SequenceConstruct); its name and element shape."""
    v = _x(b)
    out = b.emit("SequenceConstruct", [v.name, b.add_initializer(v.shape).name])
    return (out[0], v.shape) if out else (None, None)


def sequence_construct(b):
    return _sequence(b)[0] is not None


def sequence_empty(b):
    return _emit(b, "SequenceEmpty", [], dtype=FLOAT)


def _on_sequence(op, extra):
    def recipe(b):
        seq, shape = _sequence(b)
        return seq is not None and _emit(b, op, [seq, *extra(b, shape)], **({"axis": 0} if op == "ConcatFromSequence" else {}))
    return recipe


def split_to_sequence(b):
    return _emit(b, "SplitToSequence", [_x(b).name])


def optional_(b):
    return _emit(b, "Optional", [_graph_input(b).name])


def _graph_input(b):
    """A float graph input: an optional made of a constant is folded by onnxruntime while
    loading, which it cannot do for optionals."""
    return b.rng.choice([v for v in b.values if v.name in {i.name for i in b.inputs}])


def _on_optional(op):
    def recipe(b):
        out = b.emit("Optional", [_graph_input(b).name])
        return out is not None and _emit(b, op, out)
    return recipe


def _body(b, inputs: list, op: str = "Identity"):
    """A one-node graph: ``op`` on its first input, the others passed through."""
    h = b.h
    names = [b.fresh("b_in") for _ in inputs]
    outs = [b.fresh("b_out") for _ in inputs]
    nodes = [h.make_node(op if i == 0 else "Identity", [n], [o]) for i, (n, o) in enumerate(zip(names, outs))]
    return h.make_graph(nodes, b.fresh("body"),
                        [h.make_tensor_value_info(n, e, s) for n, (e, s) in zip(names, inputs)],
                        [h.make_tensor_value_info(o, e, s) for o, (e, s) in zip(outs, inputs)])


def scan(b):
    v = _x(b, min_rank=2)
    state = b.add_initializer(v.shape[1:])
    body = _body(b, [(FLOAT, list(v.shape[1:])), (FLOAT, list(v.shape[1:]))], b.rng.choice(("Relu", "Neg", "Abs")))
    return _emit(b, "Scan", [state.name, v.name], 2, body=body, num_scan_inputs=1)


def sequence_map(b):
    seq, shape = _sequence(b)
    return seq is not None and _emit(b, "SequenceMap", [seq], body=_body(b, [(FLOAT, list(shape))], "Neg"))


RECIPES = {
    "BlackmanWindow": _window("BlackmanWindow"),
    "HannWindow": _window("HannWindow"),
    "HammingWindow": _window("HammingWindow"),
    "DFT": dft,
    "STFT": stft,
    "MelWeightMatrix": mel_weight_matrix,
    "StringNormalizer": string_normalizer,
    "StringConcat": string_concat,
    "StringSplit": string_split,
    "RegexFullMatch": regex_full_match,
    "TfIdfVectorizer": tfidf,
    "SequenceConstruct": sequence_construct,
    "SequenceEmpty": sequence_empty,
    "SequenceAt": _on_sequence("SequenceAt", lambda b, s: [_scalar(b, INT64, 1)]),
    "SequenceLength": _on_sequence("SequenceLength", lambda b, s: []),
    "SequenceInsert": _on_sequence("SequenceInsert", lambda b, s: [b.add_initializer(s).name]),
    "SequenceErase": _on_sequence("SequenceErase", lambda b, s: [_scalar(b, INT64, 0)]),
    "ConcatFromSequence": _on_sequence("ConcatFromSequence", lambda b, s: []),
    "SplitToSequence": split_to_sequence,
    "Optional": optional_,
    "OptionalHasElement": _on_optional("OptionalHasElement"),
    "OptionalGetElement": _on_optional("OptionalGetElement"),
    "Scan": scan,
    "SequenceMap": sequence_map,
}
