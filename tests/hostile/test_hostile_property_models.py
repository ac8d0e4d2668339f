"""Generated hostile models end in irmodel's documented errors only (issue 31, item 5).

The models (hypothesis over `irmodel.fuzz.strategies` and the mutators of `irmodel.fuzz`):

* valid models (`valid_models`) mutated one to three times by the structure mutator, the
  schema-aware wire mutator or the schema-less one, each with a drawn seed;
* small versions of the issue's cases (`hostile_models`) with drawn sizes, mutated too;
* huge numbers: a valid model whose dims, attribute integers or tensor dims are set to
  the int64 extremes and their neighbours;
* deep nesting: model-local functions calling each other inside nested Ifs, deeper than
  the decoder's 100-level bound.

On each, `check_model` (full check), `infer_shapes` with ``data_prop`` and with
``symbolic``, and the convert API (the model loaded from a file and saved into another
directory, as it is and with its tensors moved to external data) either return or raise
one of irmodel's documented errors: `irmodel.ValidationError` (and what subclasses it:
`InferenceError`, `ExternalDataError`, `ConversionError`), `wirefmt.DecodeError` and
`wirefmt.EncodeError`.  Anything else (IndexError, RecursionError, MemoryError,
OverflowError, a plain ValueError) fails the test.  A watchdog fails an example that runs
past `EXAMPLE_SECONDS` (a hang or a blow-up, not a speed measurement: a hypothesis
deadline would flake on a shared machine).  ``IRMODEL_HOSTILE_EXAMPLES`` raises the
number of examples for a longer local run.
"""

from __future__ import annotations

import os
import random
import signal
import tempfile

from hypothesis import HealthCheck, given, settings, strategies as st

import irmodel
from irmodel.fuzz import onnx_schema, strategies as ist, structure, wire
from wirefmt.errors import DecodeError, EncodeError

import hostile_models as hm

#: irmodel's documented errors (InferenceError, ExternalDataError, ConversionError are
#: ValidationErrors).
OURS = (irmodel.ValidationError, DecodeError, EncodeError)
EXAMPLES = int(os.environ.get("IRMODEL_HOSTILE_EXAMPLES", "25"))
EXAMPLE_SECONDS = 60
INT64_EXTREMES = [(1 << 63) - 1, (1 << 63) - 2, -(1 << 63), -(1 << 63) + 1, (1 << 62), -1, 0, (1 << 31), -(1 << 31)]
MUTATORS = [structure.custom_mutator, onnx_schema.custom_mutator, wire.custom_mutator]
#: Cases whose small size is still slow to run through everything: drawn smaller still.
CASE_SIZES = {c.name: c.small for c in hm.CASES if not c.needs_dir}


def _mutated(draw, data: bytes) -> bytes:
    for _ in range(draw(st.integers(0, 3))):
        mutate = draw(st.sampled_from(MUTATORS))
        data = mutate(data, max(1 << 16, 2 * len(data)), draw(st.integers(0, (1 << 32) - 1)))
    return data


@st.composite
def mutated_valid_models(draw) -> bytes:
    return _mutated(draw, irmodel.dumps(draw(ist.valid_models(max_nodes=6))))


@st.composite
def mutated_cases(draw) -> bytes:
    name = draw(st.sampled_from(sorted(CASE_SIZES)))
    case = hm.CASES_BY_NAME[name]
    size = draw(st.integers(1, min(40, CASE_SIZES[name]))) if case.full != hm.INT64_MAX else \
        draw(st.sampled_from(INT64_EXTREMES))
    return _mutated(draw, case.bytes_at(size))


@st.composite
def huge_numbers(draw) -> bytes:
    """A valid model with some of its integers (dims of values and tensors, attribute
    ints) set to int64 extremes."""
    model = draw(ist.valid_models(max_nodes=6))
    rng = random.Random(draw(st.integers(0, 1 << 30)))
    values = st.sampled_from(INT64_EXTREMES)
    g = model.graph
    for vi in [*g.input, *g.output, *g.value_info]:
        if vi.type.HasField("tensor_type") and rng.random() < 0.5:
            for d in vi.type.tensor_type.shape.dim:
                d.dim_value = draw(values)
    for t in g.initializer:
        if rng.random() < 0.5 and len(t.dims):
            t.dims[rng.randrange(len(t.dims))] = draw(values)
    for node in g.node:
        for a in node.attribute:
            if a.type == irmodel.AttributeProto.INT and rng.random() < 0.5:
                a.i = draw(values)
            elif a.type == irmodel.AttributeProto.INTS and len(a.ints) and rng.random() < 0.5:
                a.ints[rng.randrange(len(a.ints))] = draw(values)
    return irmodel.dumps(model)


@st.composite
def deep_nesting(draw) -> bytes:
    return hm.nested_function_ifs(draw(st.integers(1, 4)), draw(st.integers(1, 130)))


HOSTILE = st.one_of(mutated_valid_models(), mutated_cases(), huge_numbers(), deep_nesting())


class _Watchdog:
    """SIGALRM after `EXAMPLE_SECONDS`: the example fails with a TimeoutError."""

    def __enter__(self):
        def expired(signum, frame):
            raise TimeoutError(f"an example ran past {EXAMPLE_SECONDS} s")

        self.before = signal.signal(signal.SIGALRM, expired)
        signal.alarm(EXAMPLE_SECONDS)

    def __exit__(self, *exc):
        signal.alarm(0)
        signal.signal(signal.SIGALRM, self.before)


def _ends_in_our_errors(call, *args, **kwargs) -> None:
    try:
        call(*args, **kwargs)
    except OURS:
        pass


def _convert(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        os.mkdir(os.path.join(tmp, "in"))
        os.mkdir(os.path.join(tmp, "out"))
        path = os.path.join(tmp, "in", "m.onnx")
        with open(path, "wb") as f:
            f.write(data)
        try:
            model = irmodel.load(path)
        except OURS:
            return
        _ends_in_our_errors(irmodel.save, model, os.path.join(tmp, "out", "m.onnx"))
        _ends_in_our_errors(irmodel.save, irmodel.load(path), os.path.join(tmp, "out", "e.onnx"),
                            save_as_external_data=True, size_threshold=0)


@settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(HOSTILE)
def test_hostile_models_end_in_our_errors_only(data):
    with _Watchdog():
        try:
            model = irmodel.loads(data)
        except OURS:
            return
        _ends_in_our_errors(irmodel.checker.check_model, model, full_check=True)
        _ends_in_our_errors(irmodel.shape_inference.infer_shapes, data, data_prop=True)
        _ends_in_our_errors(irmodel.inference.infer_shapes, data, symbolic=True)
        _convert(data)
