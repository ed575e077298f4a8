"""Differences from NumPy found by probing one-line calls with Python scalars of every
kind (int, float, bool, complex, NumPy scalars) against plain NumPy: values, dtypes and
warnings, each on every backend."""
import warnings

import numpy as np
import pytest

import kiln

BACKENDS = ["eager", "cpp"]


def _run(fn, *args):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        out = fn(*args)
    return out, [(w.category, str(w.message)) for w in seen]


def _same(fn, backend, *args):
    got, want = _run(kiln.compile(fn, backend=backend), *args), _run(fn, *args)
    assert got[1] == want[1]
    assert type(got[0]) is type(want[0]) and got[0].dtype == want[0].dtype
    np.testing.assert_array_equal(got[0], want[0])


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("value", [1j, 2.5, 3, True])
def test_where_takes_a_python_number_as_weak(backend, value):
    """np.where(m, 1j, float32) is complex64 (NEP 50: a Python complex is weak, like a
    Python int or float); it was complex128."""
    x = np.random.default_rng(11).random(6).astype(np.float32)
    _same(lambda x, v: np.where(x > 0.5, v, x), backend, x, value)
    _same(lambda x, v: np.where(x > 0.5, x, v), backend, x, value)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.float16, np.float32])
def test_clip_by_a_scalar_argument_of_another_type(backend, dtype):
    """np.clip(bool array, True, None): the scalar argument is an int in C++ and the clip
    template did not deduce (a g++ error, then the NumPy interpreter with a warning)."""
    x = np.array([0, 1, 3, 0, 2]).astype(dtype)
    _same(lambda x, lo: np.clip(x, lo, None), backend, x, True)
    _same(lambda x, lo: np.clip(x, lo, 2), backend, x, 1)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_complex_constant_gives_no_complex_warning(backend):
    """x + np.int8(3) * 1j: the floating-point flag rules read the constant operand as a
    float, with NumPy's ComplexWarning (and its imaginary part dropped)."""
    x = np.random.default_rng(12).random(3)
    _same(lambda x, a: x + np.int8(3) * a, backend, x, 1j)
    _same(lambda x: x * (2 + 3j), backend, x)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", [lambda x: np.uint8(200) + np.uint8(100) + x,
                                lambda x: np.float32(3e38) * np.float32(10) + x,
                                lambda x: np.float64(1) / 0 + x],
                         ids=["uint8-add", "float32-mul", "divide"])
def test_numpy_scalar_math_that_warns_is_not_folded(backend, fn):
    """Capture folded NumPy scalar arithmetic on constants and dropped its overflow and
    divide warnings, which NumPy gives on every call."""
    compiled = kiln.compile(fn, backend=backend)
    for _ in range(2):   # every call warns, as NumPy's does
        got, want = _run(compiled, np.ones(2)), _run(fn, np.ones(2))
        assert got[1] == want[1] and want[1]
        np.testing.assert_array_equal(got[0], want[0])


def _same_tree(fn, backend, *args):
    got, want = _run(kiln.compile(fn, backend=backend), *args), _run(fn, *args)
    assert got[1] == want[1]
    assert type(got[0]) is type(want[0])
    for g, w in zip(got[0], want[0]) if isinstance(want[0], tuple) else [(got[0], want[0])]:
        assert type(g) is type(w) and g.dtype == w.dtype and np.shape(g) == np.shape(w)
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [np.int64, np.float32])
def test_average_returned_scale_is_a_scalar_like_its_average(backend, dtype):
    """np.average(x, returned=True) over every axis gives (np.float64, np.float64); the
    scale was a 0-d array (np.full_like of the 0-d average)."""
    x = np.random.default_rng(13).integers(0, 5, (4, 6)).astype(dtype)
    w = np.arange(1.0, 7.0)
    _same_tree(lambda x: np.average(x, returned=True), backend, x)
    _same_tree(lambda x, w: np.average(x, weights=np.broadcast_to(w, x.shape), returned=True),
               backend, x, w)
    _same_tree(lambda x, w: np.average(x, axis=1, weights=w, returned=True), backend, x, w)
    _same_tree(lambda x: np.average(x, axis=0, returned=True), backend, x)
