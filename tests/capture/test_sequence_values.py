"""Lists of graph values made into arrays: ``np.array([h[0], 1.0], dtype=...)`` and
``A[i, j:k] = [h[i - 1], 2 * h[i], h[i]]`` (Numerical Recipes' spline rows), each converted
element by element as NumPy converts them (kiln/ops/from_data.py ``_as_array``,
kiln/ops/mutation.py ``_setitem_normalize``)."""
import warnings

import numpy as np

import kiln


def _run(fn, *args):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = fn(*args)
    return out, [(type(w.message), str(w.message)) for w in caught]


def spline_rows(h, A):
    for i in range(1, len(h)):
        A[i, i - 1:i + 2] = [h[i - 1], 2 * (h[i - 1] + h[i]), h[i]]
    A[0, :2] = (h[0], 1)
    return A


def test_a_list_of_graph_values_stored_into_a_float_row_is_captured():
    h = np.array([0.5, 1.5, 2.0])
    exp = spline_rows(h, np.zeros((4, 4), np.float32))
    got = kiln.compile(spline_rows, backend="eager")(h, np.zeros((4, 4), np.float32))
    np.testing.assert_array_equal(got, exp)
    assert got.dtype == exp.dtype
    assert kiln.explain(spline_rows)(h, np.zeros((4, 4))).graph_break_count == 0


def float32_from_list(z, A):
    A[1, :3] = [z[0], 3.0, z[1]]
    return np.array([z[0], 1.0, z[1]], dtype=np.float32), A


def test_each_entry_is_converted_to_the_dtype_on_its_own():
    # through the stack's float64 first, int64 2**60 + 2**36 + 1 was rounded twice (to
    # 2**60); two overflows warned once, where NumPy warns per element
    for z in (np.array([2**60 + 2**36 + 1, 7]), np.array([1e40, -1e40])):
        exp, exp_warns = _run(float32_from_list, z, np.zeros((2, 3), np.float32))
        got, got_warns = _run(kiln.compile(float32_from_list, backend="eager"), z,
                              np.zeros((2, 3), np.float32))
        for g, e in zip(got, exp):
            np.testing.assert_array_equal(g, e)
        assert got_warns == exp_warns
