"""Issue 14, numbers from the file: sizes are bounded (`irmodel.limits`), computed in time
linear in the number of dims, never printed as unbounded integers; and the output tells
the truth (a malformed packed field is refused by ``dump`` as by every other reader).
"""

from __future__ import annotations

import math
import os

import onnx
import pytest
from hypothesis import given, settings, strategies as st

import irmodel
from irmodel import limits
from irmodel._dtypes.rows import ELEM_TYPES

import rich_mutants as hm
from cli_helpers import run_cli

INT64 = st.integers(min_value=-(1 << 63), max_value=(1 << 63) - 1)


# -- the bounded arithmetic ---------------------------------------------------------------------

@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.integers(0, 50), INT64), max_size=12))
def test_element_count_is_the_product_bounded(dims):
    n = limits.element_count(dims)
    if any(d < 0 for d in dims):
        assert n is None
    elif math.prod(dims) > limits.MAX_SIZE:
        assert n == limits.TOO_LARGE and limits.is_too_large(n)
    else:
        assert n == math.prod(dims)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 1 << 64), st.sampled_from(sorted({et.bits for et in ELEM_TYPES.values()})))
def test_byte_size_packs_and_rounds_up_bounded(count, bits):
    n = limits.byte_size(count, bits)
    if count > limits.MAX_SIZE or (count * bits + 7) // 8 > limits.MAX_SIZE:
        assert n == limits.TOO_LARGE
    else:
        assert n == -(-count * bits // 8)


def test_a_zero_dim_makes_the_count_zero_however_large_the_others():
    assert limits.element_count([1 << 62] * 1000 + [0]) == 0
    assert limits.element_count([0] + [1 << 62] * 1000) == 0


def test_sums_and_texts_are_bounded():
    assert limits.add_sizes([limits.MAX_SIZE, 1]) == limits.TOO_LARGE
    assert limits.add_sizes([1, 2, 3]) == 6
    assert limits.size_text(limits.TOO_LARGE, "bytes") == "too large (over 2^63-1 bytes)"
    assert limits.size_text(None) == "unknown" and limits.size_text(12) == "12"


class _Dim(int):
    """An int that records the bit length of every product it takes part in."""

    seen: list = []

    def __rmul__(self, other):
        _Dim.seen.append(max(int(other).bit_length(), int(self).bit_length()))
        return int(other) * int(self)

    __mul__ = __rmul__


def test_element_count_never_multiplies_big_integers():
    """Linear: every multiplication is of numbers below 2**64 (and so below 2**128 after),
    however many dims of 2**62 there are: no quadratic chain of big-integer products."""
    _Dim.seen = []
    assert limits.element_count([_Dim(1 << 62)] * 10_000) == limits.TOO_LARGE
    assert _Dim.seen and max(_Dim.seen) <= 64


# -- through the commands and the API -------------------------------------------------------------

def _write(tmp_path, name: str, data: bytes) -> str:
    path = os.path.join(tmp_path, name)
    with open(path, "wb") as f:
        f.write(data)
    return path


def test_250_dims_of_2_62_are_too_large_everywhere_and_nothing_crashes(tmp_path):
    path = _write(tmp_path, "dims.onnx", hm.tensor_with_dims([1 << 62] * 250))
    onnx.load(path)  # the reference loads it
    status, out, err = run_cli(["inspect", path])
    assert status == 0, err
    assert "initializers:   1, too large (over 2^63-1 bytes)" in out
    status, out, err = run_cli(["inspect", "--json", path])
    assert status == 0 and '"initializer_bytes": 9223372036854775808' in out  # TOO_LARGE, 19 digits
    status, out, err = run_cli(["dump", path])
    assert status == 0 and "(250 dims)" in out
    for argv in (["dump", "--json"], ["raw"], ["convert", path, os.path.join(tmp_path, "o.onnx")]):
        assert run_cli([*argv, path] if argv[0] != "convert" else argv)[0] == 0
    with pytest.raises(irmodel.ValidationError, match="too many elements"):
        irmodel.to_array(irmodel.load(path).graph.initializer[0])


def test_100000_dims_in_a_09_mb_file_are_refused_by_to_array_and_summarised_by_inspect(tmp_path):
    path = _write(tmp_path, "dims.onnx", hm.tensor_with_dims([1 << 62] * 100_000))
    assert os.path.getsize(path) < 1_100_000
    status, out, err = run_cli(["inspect", path])
    assert status == 0 and "too large" in out, err
    with pytest.raises(irmodel.ValidationError, match=r"\(100000 dims\) describe too many"):
        irmodel.to_array(irmodel.load(path).graph.initializer[0])


def test_huge_dims_with_a_zero_make_an_empty_size_not_a_long_computation(tmp_path):
    path = _write(tmp_path, "zero.onnx", hm.tensor_with_dims([1 << 62] * 200 + [0]))
    status, out, _ = run_cli(["inspect", path])
    assert status == 0 and "initializers:   1, 0 bytes" in out


def test_negative_dims_and_unknown_types_are_reported_not_crashed(tmp_path):
    for name, data in (("neg", hm.tensor_with_dims([-1, 1 << 62])),
                       ("dtype", hm.tensor_with_dims([2, 2], data_type=99))):
        path = _write(tmp_path, f"{name}.onnx", data)
        for argv in (["inspect"], ["inspect", "--json"], ["dump"]):
            status, out, err = run_cli([*argv, path])
            assert status == 0, (name, argv, err)
        with pytest.raises(irmodel.ValidationError):
            irmodel.to_array(irmodel.load(path).graph.initializer[0])


@pytest.mark.parametrize("key, value", [("length", "²"), ("offset", "\u0663"), ("length", "\uff11")])
def test_non_ascii_digits_in_external_entries_are_refused_by_every_path(tmp_path, key, value):
    assert value.isdigit()  # what made the old check pass them
    (tmp_path / hm.DATA_FILE).write_bytes(b"\0" * 16)
    path = _write(tmp_path, "m.onnx", hm.external_model([("location", hm.DATA_FILE), (key, value)]))
    status, out, err = run_cli(["inspect", path])
    assert status == 0 and "invalid entries" in out and "not a non-negative decimal integer" in out
    assert run_cli(["inspect", "--json", path])[0] == 0
    assert run_cli(["dump", path])[0] == 0
    status, _, err = run_cli(["convert", path, os.path.join(tmp_path, "o.onnx")])
    assert status == 1 and "not a non-negative decimal integer" in err
    with pytest.raises(irmodel.ExternalDataError, match="not a non-negative decimal integer"):
        irmodel.to_array(irmodel.load(path).graph.initializer[0])


def test_a_location_with_a_nul_is_refused_by_every_path(tmp_path):
    path = _write(tmp_path, "m.onnx", hm.external_model([("location", "w.b\x00n")]))
    status, out, _ = run_cli(["inspect", path])
    assert status == 0 and "unsafe location" in out and "\\x00" in out
    assert run_cli(["convert", path, os.path.join(tmp_path, "o.onnx")])[0] == 1
    with pytest.raises(irmodel.ExternalDataError, match="NUL"):
        irmodel.to_array(irmodel.load(path).graph.initializer[0])


# -- truth of output ------------------------------------------------------------------------------

@pytest.mark.parametrize("nbytes", [7, 9, 1])
def test_dump_refuses_a_packed_float_field_every_reader_refuses(tmp_path, nbytes):
    data = hm.packed_floats(nbytes)
    with pytest.raises(Exception):
        onnx.ModelProto.FromString(data)
    path = _write(tmp_path, "m.onnx", data)
    for argv in (["dump"], ["dump", "--json"]):
        status, out, err = run_cli([*argv, path])
        assert status == 1 and f"packed data of {nbytes} bytes is not a multiple of 4" in err, argv
    with pytest.raises(irmodel.DecodeError):
        irmodel.to_array(irmodel.load(path).graph.initializer[0])


def test_dump_refuses_a_truncated_packed_varint_field(tmp_path):
    # int64_data (field 7) packed: 1, then a varint cut short
    t = hm._tag(1, 0) + b"\x02" + hm._tag(2, 0) + b"\x07" + hm._ld(7, b"\x01\x80") + hm._ld(8, b"i")
    path = _write(tmp_path, "m.onnx", hm._tag(1, 0) + b"\x08" + hm._ld(7, hm._ld(5, t)))
    status, _, err = run_cli(["dump", path])
    assert status == 1 and "varint" in err


def test_dump_still_previews_a_well_formed_packed_field(tmp_path):
    path = _write(tmp_path, "m.onnx", hm.packed_floats(8))
    status, out, _ = run_cli(["dump", path])
    assert status == 0 and "float_data [0, 0]" in out
