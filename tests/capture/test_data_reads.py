"""Numbers read from array data, used as Python uses them, captured without a graph break:
Python's float ``/`` of floats read from data (``python_true_divide``: Python's own
ZeroDivisionError, never inf), NumPy's scalar types made from them (``np.uint16(int(h[0]))``,
``python_scalar_type``: NumPy's OverflowError and cast warning), and ``Z.flat[i]`` of a
run-time index (``Z.flat[np.abs(Z - z).argmin()]``, ``flat_item``: NumPy's wrap and its own
IndexError message). Each is checked against the function run without kiln: values and
types, exceptions, warnings, on every backend."""
import warnings

import numpy as np
import pytest

import kiln

BACKENDS = ["cpp", "eager", "aot_eager"]


def _outcome(fn, *args):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = ("ok", fn(*args))
        except Exception as e:   # noqa: BLE001 - the exception itself is compared
            result = ("raise", type(e), str(e))
    return result, [str(w.message) for w in caught]


def _same(got, want):
    (g, gw), (w, ww) = got, want
    assert gw == ww and g[0] == w[0], (got, want)
    if w[0] == "raise":
        assert g == w
        return
    for a, b in zip(g[1], w[1]):
        assert type(a) is type(b), (a, b)
        assert np.asarray(a).dtype == np.asarray(b).dtype
        assert np.asarray(a).tobytes() == np.asarray(b).tobytes(), (a, b)


def reads(a, f, Z, z, k):
    # a header of ints, a pair of floats, a grid and a value to find in it
    n = np.uint16(int(a[0]))              # NumPy's OverflowError past 65535
    x = float(f[0])
    ratio = x / float(f[1])               # Python's ZeroDivisionError on a zero
    near = Z.flat[np.abs(Z - z).argmin()]
    return (n + a, n, np.float32(float(f[1])), ratio, ratio * f, 1.0 / x, x / 4,
            near, Z.flat[k], Z.T.flat[k])


def _cases():
    a, f, Z = np.array([7, 3]), np.array([3.0, 0.5]), np.arange(12.0).reshape(3, 4)
    yield a, f, Z, 4.4, 5
    yield np.array([70000, 3]), f, Z, 4.4, 5                    # OverflowError
    yield a, np.array([3.0, 0.0]), Z, 4.4, 5                     # ZeroDivisionError
    yield a, np.array([-0.0, np.inf]), Z, 4.4, 5                 # warns in ratio * f, then 1.0 / x raises
    yield a, np.array([3.0, 1e300]), Z.astype(np.float32), 2.0, -1   # float32 overflow warns
    yield a, f, Z, 4.4, 12                                       # flat's own IndexError


@pytest.mark.parametrize("backend", BACKENDS)
def test_numbers_read_from_data_are_pythons(backend):
    compiled = kiln.compile(reads, backend=backend)
    for args in _cases():
        _same(_outcome(compiled, *args), _outcome(reads, *args))


def test_numbers_read_from_data_compile_without_a_break():
    out = kiln.explain(reads)(*next(_cases()))
    assert out.graph_count == 1 and out.graph_break_count == 0, out.break_reasons
    ops = out.ops_per_graph[0]
    assert {"python_true_divide", "python_scalar_type", "flat_item"} <= set(ops), ops


def element_reads(values, back, A):
    # viterbi's backtrack and an argmax's value: a Python int read from data as the index
    # of one element (stop 57: "Python int read from array ... passed to a NumPy function")
    j = int(np.argmax(values))
    path = [int(np.argmin(values))]
    for t in range(back.shape[0]):
        path.append(int(back[t, path[-1]]))
    k = int(back.sum() % 3)
    return values[j], path, A[k, j], A[k, -1], values[int(back[0, 0])]


def row_read(A):
    r = A[int(A.argmax())]          # a row: a view with an int (a copy with an array): as before
    r[0] = -1.0
    return r


@pytest.mark.parametrize("backend", BACKENDS)
def test_python_ints_read_from_data_index_elements(backend):
    from tests.test_programs import check_program
    rng = np.random.default_rng(3)
    back, A = rng.integers(0, 6, (4, 6)), rng.standard_normal((3, 6))
    check_program(element_reads, [(rng.standard_normal(6), back, A),
                                  (rng.standard_normal(6), back + 2, A)], backend)   # IndexError
    check_program(row_read, [(np.array([[0.0, 2.0], [1.0, 0.5]]),)], backend)
    out = kiln.explain(element_reads)(rng.standard_normal(6), back, A)
    assert out.graph_count == 1 and out.graph_break_count == 0, out.break_reasons


def item_reads(x, i, b):
    # ``.item()`` of 0-d values: the Python number of its kind (stop 57: it broke the graph)
    a = x[0, 0].item()
    f = x.astype(np.float32)[1, 1].item()        # a float32's double
    k = i.max().item()
    return a, k, f, (x > 0).any().item(), a * 2.0 + f, k + 1, x * a, np.array([a, f]), \
        b.sum().item(), x.sum().item() / 3


@pytest.mark.parametrize("backend", BACKENDS)
def test_item_of_0d_values(backend):
    from tests.test_programs import check_program
    args = (np.random.default_rng(4).standard_normal((3, 3)), np.arange(4), np.array([True, False]))
    check_program(item_reads, [args], backend)
    out = kiln.explain(item_reads)(*args)
    assert out.graph_count == 1 and out.graph_break_count == 0, out.break_reasons
