"""np.where and bool -> number casts in generated C++ (kiln_select, cpp_prelude.h): between
8-byte elements the select is written with bit masks, so a loop whose condition is a bool
array vectorizes on AVX-512 processors too (GCC 12 left it scalar and branching there:
np.where(mask, a, -a) on float64 took 400 us per 1e5 random mask elements, now 25 us).
The result's bits are exactly one operand's: NaN payloads, signed zeros, int64/uint64
extremes."""
import numpy as np
import pytest

import kiln


def _bits(x):
    x = np.ascontiguousarray(x)
    if x.dtype.kind == "c":
        x = x.view(x.real.dtype)
    return x.view(f"u{x.dtype.itemsize}") if x.dtype.kind == "f" else x


def _same_bits(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(_bits(got), _bits(want))


def _operands(dtype, n=301):
    rng = np.random.default_rng(11)
    m = rng.random(n) > 0.5
    if np.dtype(dtype).kind == "f":
        a = rng.standard_normal(n).astype(dtype)
        payload = np.array([0x7FF8000000000ABC], np.uint64).view(np.float64)[0]
        special = np.array([np.nan, -np.nan, payload, -0.0, 0.0, np.inf, -np.inf,
                            np.finfo(dtype).tiny, np.finfo(dtype).max], dtype)
    else:
        info = np.iinfo(dtype)
        a = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
        special = np.array([info.min, info.max, 0, 1], dtype)
    a[:len(special)] = special
    b = a[::-1].copy()
    return m, a, b


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.uint64, np.int32, np.uint32,
                                   np.int8, np.complex128, np.complex64])
def test_where_on_a_bool_array_gives_one_operands_bits(dtype):
    if np.dtype(dtype).kind == "c":   # complex: the float operands as parts (kiln_cselect)
        m, re, im = _operands(np.float64 if dtype == np.complex128 else np.float32)
        a = np.empty(re.shape, dtype)
        a.real, a.imag = re, im
        b = a[::-1] * 1
    else:
        m, a, b = _operands(dtype)

    def f(m, a, b):
        return np.where(m, a, b), np.where(m[::-1], b, a)[::2], np.where(m, a, 7)

    for got, want in zip(kiln.compile(f)(m, a, b), f(m, a, b)):
        _same_bits(got, want)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.uint64, np.int16])
def test_bools_cast_to_numbers(dtype):
    m, a, _ = _operands(dtype)

    def f(m, a):
        return m.astype(dtype), (m * a)[::3], m.mean(), (a > a[::-1]).astype(dtype).sum()

    got, want = kiln.compile(f)(m, a), f(m, a)
    for g, w in zip(got, want):
        _same_bits(np.asarray(g), np.asarray(w))


def test_float32_clip_with_run_time_bounds_vectorizes():
    """Between 4-byte elements the select is written with bit masks too: np.clip of float32
    with Python float bounds (graph inputs) ran as a scalar loop branching on each compare
    (~600 us per 1e5 random elements against NumPy's 14; now ~14)."""
    import re

    from .helpers import compiled_with_disassembly
    f, disassembly = compiled_with_disassembly(lambda x, lo, hi: np.clip(x, lo, hi))
    x = np.random.default_rng(2).standard_normal(1000).astype(np.float32)
    x[:4] = [np.nan, -0.0, 0.5, -0.5]
    _same_bits(f(x, -0.5, 0.5), np.clip(x, -0.5, 0.5))
    _same_bits(f(x, np.nan, 0.5), np.clip(x, np.nan, 0.5))
    code = disassembly()
    bodies = [f for f in code.split("\n\n") if re.match(r"[0-9a-f]+ <kiln_fused_clip_0_body", f)]
    assert bodies and all(re.search(r"[yz]mm", f) for f in bodies), "the float32 clip did not vectorize"
