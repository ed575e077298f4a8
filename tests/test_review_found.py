"""Differences from NumPy found by reading NumPy's own code (not by the fuzzer, which
does not draw these calls): each compiled on every backend against NumPy."""
import numpy as np
import pytest

import kiln

BACKENDS = ["eager", "cpp"]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.bool_])
def test_conj_of_a_real_array_is_the_array_itself(backend, dtype):
    # ndarray.conj() returns self for a non-complex array (np.conjugate makes a copy):
    # a write through the result writes into the argument
    def f(x):
        y = x.conj()
        y[0] = 1
        return y.conjugate(), np.conjugate(x)

    a, b = np.zeros(4, dtype), np.zeros(4, dtype)
    want, got = f(a), kiln.compile(f, backend=backend)(b)
    np.testing.assert_array_equal(b, a)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)
    same = lambda x: x.conj()   # noqa: E731
    assert kiln.compile(same, backend=backend)(b) is b


@pytest.mark.parametrize("backend", BACKENDS)
def test_matrix_power_one_returns_the_argument(backend):
    def f(x):
        y = np.linalg.matrix_power(x, 1)
        y[0, 0] = -1.0
        return y.sum()

    a = np.arange(9.0).reshape(3, 3)
    b = a.copy()
    assert kiln.compile(f, backend=backend)(b) == f(a)
    np.testing.assert_array_equal(b, a)
    assert kiln.compile(lambda x: np.linalg.matrix_power(x, 1), backend=backend)(b) is b


@pytest.mark.parametrize("backend", BACKENDS)
def test_bool_element_takes_the_truth_of_a_one_element_array(backend):
    # NumPy stores bool(v) into a bool element; any other dtype refuses an array there
    def f(x, v):
        x[-1] = v
        return x

    for v in (np.array([0.0]), np.array([[2]]), np.array([np.nan])):
        a = np.array([True, False, True])
        b = a.copy()
        np.testing.assert_array_equal(kiln.compile(f, backend=backend)(b, v), f(a, v))
        np.testing.assert_array_equal(b, a)
    with pytest.raises(ValueError, match="setting an array element with a sequence"):
        kiln.compile(f, backend=backend)(np.zeros(3), np.array([1.0]))
