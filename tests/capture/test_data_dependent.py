"""Data-dependent sizes inside graphs: x[mask], np.nonzero, np.argwhere, one-argument
np.where, np.flatnonzero, np.compress, np.unique and np.bincount run as extern ops whose
result length is an "unbacked" size, and the code after them stays in the same graph
(fused C++ kernels over the run-time length). Each program runs compiled on several
inputs whose selections have different lengths (0 and 1 included) and must match NumPy
without recompiling."""

import numpy as np
import pytest

import kiln
from kiln.runtime import cpp_backend

from .conftest import assert_same, run_probe, same_as_numpy

RNG = np.random.default_rng(7)


class CppCounting:
    """The C++ backend, counting graphs and checking none fell back to the interpreter."""

    def __init__(self):
        self.graphs = []

    def __call__(self, graph, example_inputs):
        self.graphs.append(graph)
        fn = cpp_backend(graph, example_inputs)
        assert not hasattr(fn, "__kiln_numpy_program__"), f"graph fell back to the NumPy interpreter:\n{graph}"
        return fn


def sel_stats(x):
    y = x[x > 0.25]
    return y.sum() * 2, np.max(y), (y * y).mean(), y - y.min(), y.reshape(-1, 1) * 2


def nonzero_gather(x, w):
    i, j = np.nonzero(x > 0.5)
    return w[i, j] * 2 + i, np.argwhere(x > 0.5).sum(axis=0)


def where_one_arg(x):
    (i,) = np.where(x < 0)
    return np.flatnonzero(x < 0) * 3 + i


def compress_rows(x, c):
    return np.compress(c > 0, x, axis=0).sum(axis=0), np.compress(c.ravel() > 0, c)


def unique_counts(k):
    u, counts = np.unique(k, return_counts=True)
    return u * 10 + counts, np.unique(k, return_inverse=True)[1] + 1


def bincount_weights(k, w):
    return np.bincount(k, weights=w * 2) + 1.0, np.bincount(k, minlength=4) * 3


def masked_from_two(x, y):
    m = x > y
    return (x[m] - y[m]) ** 2


def votes(d, labels, k):
    # k nearest labels per row, then the most common one: argmax of each row's bincount
    # (extern ops whose shape rules cannot run over the bincount's unbacked length), in a
    # graph whose distance part is one fused kernel; np.array of the 0-d winners is a stack
    near = labels[np.argsort(d, axis=1)[:, :k]]
    return np.array([np.bincount(v).argmax() for v in near]), (d * d).sum(axis=1)


def inputs(fn, n):
    """``n`` argument tuples for ``fn`` whose selections have different lengths."""
    out = []
    for t in range(n):
        if fn in (sel_stats, where_one_arg):
            # t == 1: nothing selected (max raises); t == 2: everything; t == 3: one value
            x = [RNG.standard_normal(13), -np.ones(13), np.ones(13),
                 np.where(np.arange(13) == 5, 1.0, -1.0)][t % 4]
            out.append((x if fn is sel_stats else -x,))
        elif fn is nonzero_gather:
            out.append((RNG.random((4, 5)) * (0.4 if t == 1 else 1.0), RNG.standard_normal((4, 5))))
        elif fn is compress_rows:
            out.append((RNG.standard_normal((6, 3)), RNG.standard_normal(6) - (5 if t == 1 else 0)))
        elif fn is unique_counts:
            out.append((RNG.integers(0, 3 + 4 * t, 11),))
        elif fn is votes:
            out.append((RNG.random((5, 12)), RNG.integers(0, 2 + t, 12), 3))
        elif fn is bincount_weights:
            out.append((RNG.integers(0, 2 + 3 * t, 9), RNG.standard_normal(9)))
        else:
            out.append((RNG.standard_normal(8), RNG.standard_normal(8) + (9 if t == 1 else 0)))
    return out


PROGRAMS = [sel_stats, nonzero_gather, where_one_arg, compress_rows, unique_counts,
            bincount_weights, masked_from_two, votes]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_one_graph_one_build_for_every_length(fn):
    calls = inputs(fn, 4)
    assert kiln.explain(fn)(*calls[0]).graph_break_count == 0
    backend = CppCounting()
    compiled = kiln.compile(fn, backend=backend)
    for args in calls:
        want, want_err = None, None
        try:
            want = fn(*args)
        except Exception as e:  # noqa: BLE001  (max of an empty selection)
            want_err = e
        if want_err is not None:
            with pytest.raises(type(want_err), match=str(want_err)):
                compiled(*args)
            continue
        assert_same(compiled(*args), want)
    assert len(backend.graphs) == 1


def _unique_all(x):
    v, inv, c = np.unique(x, return_inverse=True, return_counts=True)
    return v, inv, c, c[inv] * 2, v[np.argmax(c)]


def test_unique_inverse_and_counts_run_one_np_unique():
    """np.unique(x, return_inverse=True, return_counts=True) compiles to one np.unique
    (the values), the inverse their insertion points and the counts its bincount: three
    np.unique calls cost 1.6x NumPy's one on a row of 70 ints. NaN, -0.0 and bool too."""
    backend = CppCounting()
    compiled = kiln.compile(_unique_all, backend=backend)
    floats = (np.array([[1.0, np.nan, -0.0], [0.0, np.nan, 2.0]]),
              np.array([[5.0, -np.inf, 5.0], [np.nan, 0.0, 1.0]]))
    for x in floats + (np.array([3, 1, 1, 2, 3, 3, 0], np.int32), np.array([True, False, True, True])):
        assert_same(compiled(x), _unique_all(x))
    ops = [n.target.name for g in backend.graphs for n in g.nodes if n.kind == "call"]
    assert backend.graphs and ops.count("unique") == len(backend.graphs)
    assert "unique_inverse" not in ops and "unique_counts" not in ops


def test_max_of_an_empty_selection_raises_numpys_error():
    compiled = kiln.compile(sel_stats, backend=CppCounting())
    compiled(np.linspace(-1, 1, 9))
    with pytest.raises(ValueError, match="zero-size array to reduction operation maximum"):
        compiled(-np.ones(9))


def test_selections_by_one_mask_share_their_length():
    """x[m] and y[m] meet in one kernel (one size), and the eager backend agrees."""
    run_probe(masked_from_two, RNG.standard_normal(8), RNG.standard_normal(8), graphs=1)
    run_probe(nonzero_gather, RNG.random((4, 5)), RNG.standard_normal((4, 5)), graphs=1)


@pytest.mark.parametrize("fn", [
    lambda x: len(x[x > 0]) * x,                       # the length read by Python
    lambda x: x[x > 0] + x[x < 1],                     # two different lengths meet
    lambda x: x[x > 0] + np.ones(9),                   # a length meets a static size
    lambda x: np.unique(x) + np.bincount(np.arange(9)),
    lambda x: x[x > 0].reshape(2, -1),                 # a shape computed from it
], ids=["len", "two-lengths", "static", "unique-bincount", "reshape"])
def test_uses_that_need_the_length_break_the_graph_and_match_numpy(fn):
    x = np.linspace(-2.0, 2.0, 9)
    expected_err = None
    try:
        expected = fn(x)
    except ValueError as e:
        expected_err = e
    compiled = kiln.compile(fn)
    if expected_err is not None:   # NumPy's own error, from the code after the break
        with pytest.raises(ValueError, match="could not be broadcast"):
            compiled(x)
        with pytest.raises(ValueError, match="could not be broadcast"):
            kiln.explain(fn)(x)
        return
    assert_same(compiled(x), expected)
    assert kiln.explain(fn)(x).graph_break_count == 1


def _len_and_iteration(x):
    pos = x[x > 0]
    total = 0.0
    for v in pos:                  # iterating over a selection takes it
        total += v * 2
    if not len(pos):
        return -1.0
    a, b = x[x > 2]                # unpacking too (NumPy's ValueError when not two)
    return total / len(pos), list(x[x < 0]), a - b


def test_len_of_a_selection_and_iterating_over_it_say_why_they_break():
    # they break the graph where the length is read as a Python number, and say so (they
    # were "iterating over a boolean-mask selection is not supported")
    for x in (np.linspace(-2.0, 4.0, 7), np.zeros(3), np.arange(-2, 4)):
        same_as_numpy(kiln.compile(_len_and_iteration), _len_and_iteration, x, errors=ValueError)
    reasons = [b.reason for b in kiln.explain(_len_and_iteration)(np.linspace(-2.0, 4.0, 7)).break_reasons]
    assert "iteration of x[mask] is known only when the graph runs" in reasons[0]
    assert not any("boolean-mask selection is not supported" in r for r in reasons)


def test_a_written_mask_counts_again():
    def f(x):
        m = x > 0
        a = x[m]
        m[:2] = True
        b = x[m]
        return a.sum(), b.sum(), b * 2
    x = np.linspace(-1.0, 1.0, 7)
    compiled, _, _ = run_probe(f, x, graphs=1)
    got = kiln.compile(f, backend=CppCounting())(x)
    assert_same(got, f(x))


def test_gradient_through_a_selection():
    def loss(w, x):
        y = (w * x)[x > 0]
        return (y * y).sum() + np.bincount((x > 0).astype(np.int64), weights=w)[1]
    x = np.linspace(-1.0, 2.0, 7)
    w = RNG.standard_normal(7)
    g = kiln.grad(kiln.compile(loss))(w, x)
    eps, fd = 1e-6, np.zeros(7)
    for i in range(7):
        d = np.zeros(7)
        d[i] = eps
        fd[i] = (loss(w + d, x) - loss(w - d, x)) / (2 * eps)
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)


def _element_loads(n, w, write):
    elems = np.column_stack([np.arange(n - 1), np.arange(1, n)])
    flat = elems.ravel()
    if write == "base":
        elems[0, 0] = n + 2          # through the base, after the view: NumPy's counts grow
    elif write == "view":
        flat[::2][-1] = n + 1
    loads = np.bincount(flat, weights=w, minlength=n)
    return loads, loads[1:-1] * 2.0


@pytest.mark.parametrize("backend", ["eager", "cpp"])
def test_counts_of_joined_aranges_have_their_static_length(backend):
    """A finite-element assembly's ``np.bincount(np.column_stack([np.arange(n - 1),
    np.arange(1, n)]).ravel(), minlength=n)``: an arange's values are below its stop and a
    join's or a view's below its inputs' bounds, so the counts have n entries before they
    run and the code after them stays in the graph (it broke there). A write into the
    base or a view of it drops the bound: NumPy's longer counts."""
    w = RNG.random(16)
    for write in (None, "base", "view"):
        expected = _element_loads(9, w, write)
        assert_same(kiln.compile(_element_loads, backend=backend)(9, w, write), expected)
    assert kiln.explain(_element_loads)(9, w, None).graph_break_count == 0


def _csr_row_sums(order, starts, ends):
    out = np.zeros(len(starts), dtype=np.int64)
    for c in range(len(starts)):
        js = order[starts[c]:ends[c]]            # bounds read from arrays
        out[c] += len(js) * 10 + js.sum()
    return out


@pytest.mark.parametrize("fn", [
    _csr_row_sums,
    lambda x, a: (x[:np.argmax(x)].sum(), x[a.min():].shape),
    lambda x, a: x[1:a[1]] * 2,
    lambda x, a: x[a[0]:a[1]:a[2]],
    lambda x, a: np.where(x[a[0]:a[1]] > 2, 1.0, x[a[0] + 1:a[1] + 1]),
], ids=["csr-rows", "argmax-and-min", "stop", "start-stop-step", "two-windows"])
@pytest.mark.parametrize("backend", ["cpp", "eager"])
def test_a_slice_bound_read_from_an_array_breaks_the_graph(fn, backend):
    # the graph's shape rule has no value for such a bound: the slice came out empty
    # (len(order[starts[c]:ends[c]]) == 0, x[1:a[1]] * 2 == []); Python slices instead
    x, a = np.arange(8.0), np.array([1, 5, 2])
    args = (np.array([3, 0, 5, 1, 2, 4]), np.array([0, 2, 4]), np.array([2, 4, 6])) \
        if fn is _csr_row_sums else (x, a)
    compiled = kiln.compile(fn, backend=backend)
    for _ in range(2):
        same_as_numpy(compiled, fn, *args)
    reasons = [b.reason for b in kiln.explain(fn)(*args).break_reasons]
    assert any("a slice bound taken from an array" in r for r in reasons), reasons
