"""Derivative rules of the factorizations that return several arrays (svd's U, S, Vh; qr's
Q, R; lstsq's x, residuals and singular values), of np.interp and of irfft/hfft, against
finite differences in float64, on the eager tape and through compiled functions (their
backward graphs compiled). The op table checks each packed op with random cotangents on
every packed slot; here the NumPy spellings are checked as users write them, with the
modes, shapes and keywords the table does not draw, and the cases with no derivative."""
import re
import warnings

import numpy as np
import pytest

import kiln

rng = np.random.default_rng(1414)


def _finite_differences(f, args, i, eps=1e-6):
    a = args[i]
    out = np.zeros_like(a)
    for k in np.ndindex(a.shape):
        d = np.zeros_like(a)
        d[k] = eps
        hi, lo = list(args), list(args)
        hi[i], lo[i] = a + d, a - d
        out[k] = (f(*hi) - f(*lo)) / (2 * eps)
    return out


def _check(fn, args, compiled):
    """fn returns a tuple of arrays; the loss is a random weighting of all of them."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cots = [rng.standard_normal(np.shape(o)) for o in fn(*args)]
    loss = lambda *a: sum(np.sum(c * o) for c, o in zip(cots, fn(*a)))  # noqa: E731
    leaves = [kiln.tensor(a, requires_grad=True) for a in args]
    (kiln.compile(loss) if compiled else loss)(*leaves).backward()
    for i, (leaf, a) in enumerate(zip(leaves, args)):
        np.testing.assert_allclose(leaf.grad.numpy(), _finite_differences(loss, args, i),
                                   rtol=1e-5, atol=1e-6, err_msg=f"input {i}")


def _matrix(m, n):
    a = rng.standard_normal((m, n))
    a[np.arange(min(m, n)), np.arange(min(m, n))] += 3.0 * np.arange(1, min(m, n) + 1)
    return a


SHAPES = [(4, 3), (3, 4), (3, 3), (2, 3, 2)]
CASES = {
    "svd": lambda a: np.linalg.svd(a, full_matrices=False),
    "svd_U_only": lambda a: (np.linalg.svd(a, full_matrices=False)[0][..., :1] ** 2,),
    "qr": lambda a: np.linalg.qr(a),
    "qr_r": lambda a: (np.linalg.qr(a, mode="r"),),
}


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("name", list(CASES))
def test_factorization_gradients(name, shape, compiled):
    a = _matrix(*shape[-2:]) if len(shape) == 2 else np.stack([_matrix(*shape[-2:]) for _ in range(shape[0])])
    _check(CASES[name], (a,), compiled)


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
def test_square_full_factorizations_differentiate(compiled):
    a = _matrix(3, 3)
    _check(lambda a: np.linalg.svd(a), (a,), compiled)
    _check(lambda a: np.linalg.qr(a, mode="complete"), (a,), compiled)


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
@pytest.mark.parametrize("shape,b_shape", [((5, 3), (5,)), ((5, 3), (5, 2)), ((3, 3), (3,)),
                                           ((2, 4), (2,)), ((2, 4), (2, 3))], ids=str)
def test_lstsq_gradients_of_x_residuals_and_singular_values(shape, b_shape, compiled):
    def fn(a, b):
        x, residuals, rank, s = np.linalg.lstsq(a, b, rcond=None)
        return x, residuals, s
    _check(fn, (_matrix(*shape), rng.standard_normal(b_shape)), compiled)


def test_lstsq_of_a_rank_deficient_system_has_nan_gradients():
    a = kiln.tensor(np.array([[1.0, 2.0], [2.0, 4.0], [0.0, 0.0]]), requires_grad=True)
    b = kiln.tensor(np.array([1.0, 2.0, 3.0]), requires_grad=True)
    np.linalg.lstsq(a, b, rcond=None)[0].sum().backward()
    assert np.isnan(a.grad.numpy()).all() and np.isnan(b.grad.numpy()).all()


@pytest.mark.parametrize("fn", [lambda a: np.linalg.svd(a), lambda a: np.linalg.qr(a, "complete")],
                         ids=["svd_full_tall", "qr_complete_tall"])
def test_factorizations_without_a_unique_derivative_raise(fn):
    a = kiln.tensor(_matrix(4, 3), requires_grad=True)
    with pytest.raises(kiln.NoDerivative, match="not unique"):
        fn(a)[0].sum().backward()


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
@pytest.mark.parametrize("ends", [{}, {"left": 0.5}, {"left": 1.0, "right": -2.0}], ids=str)
def test_interp_gradients_in_x_xp_and_fp(ends, compiled):
    xp = np.sort(rng.uniform(0.0, 5.0, 6)) + np.arange(6)
    fp = rng.standard_normal(6)
    x = rng.uniform(-1.0, 12.0, (3, 4))   # below, inside and above xp
    _check(lambda x, xp, fp: (np.interp(x, xp, fp, **ends),), (x, xp, fp), compiled)


def test_interp_with_a_period_has_no_derivative():
    x = kiln.tensor(np.array([0.5, 1.5]), requires_grad=True)
    with pytest.raises(kiln.NoDerivative, match="interp"):
        np.interp(x, np.array([0.0, 1.0]), np.array([1.0, 2.0]), period=2.0).sum().backward()


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
@pytest.mark.parametrize("kw", [{}, {"n": 5}, {"n": 3, "norm": "ortho"}, {"n": 8, "norm": "forward"},
                                {"axis": 0}], ids=str)
def test_real_irfft_and_hfft_gradients(kw, compiled):
    """Real inputs (the op table leaves the FFTs' gradients to test_complex_grads.py)."""
    x = rng.standard_normal((4, 3))
    _check(lambda x: (np.fft.irfft(x, **kw), np.fft.hfft(x, **kw)), (x,), compiled)


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
@pytest.mark.parametrize("kw", [{}, {"s": (4, 5)}, {"s": (2, 4), "axes": (0, 2)}, {"norm": "ortho"},
                                {"axes": (2, 0), "norm": "forward"}, {"s": (5, 3, 4), "axes": (0, 1, 2)}],
                         ids=str)
def test_irfftn_and_irfft2_gradients(kw, compiled):
    """A spectral solve's inverse transform: complex transforms over the leading axes, then
    irfft over the last (real inputs here; complex ones in test_complex_grads.py)."""
    x = rng.standard_normal((3, 4, 3))
    two = {k: v for k, v in kw.items() if k != "s" or len(v) == 2}
    fns = [lambda x: np.fft.irfftn(x, **kw)]
    if len(kw.get("axes", (0, 1))) == 2 and len(kw.get("s", (0, 0))) == 2:
        fns.append(lambda x: np.fft.irfft2(x, **two))
    _check(lambda x: tuple(f(x) for f in fns), (x,), compiled)


def _with_nans(a):
    a = a.copy()
    a[1, 2] = a[2, 0] = np.nan
    return a


ORDER_STATISTICS = {   # name: (fn, draw); even and odd lengths, NaNs only for the nan* forms
    "median": (lambda a: (np.median(a),), lambda: rng.standard_normal((3, 4))),
    "median_axis0": (lambda a: (np.median(a, axis=0),), lambda: rng.standard_normal((3, 4))),
    "median_axis1_keepdims": (lambda a: (np.median(a, axis=1, keepdims=True),), lambda: rng.standard_normal((3, 4))),
    "quantile": (lambda a: (np.quantile(a, 0.3, axis=-1),), lambda: rng.standard_normal((2, 5))),
    "percentile": (lambda a: (np.percentile(a, 85),), lambda: rng.standard_normal((3, 3))),
    "nanmedian": (lambda a: (np.nanmedian(a, axis=1),), lambda: _with_nans(rng.standard_normal((3, 4)))),
    "nanpercentile": (lambda a: (np.nanpercentile(a, 40),), lambda: _with_nans(rng.standard_normal((3, 4)))),
    "median_abs_deviation": (lambda a: (np.median(np.abs(a - np.median(a, axis=0)), axis=0),),
                             lambda: rng.standard_normal((5, 3))),
}


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
@pytest.mark.parametrize("name", list(ORDER_STATISTICS))
def test_median_and_quantile_gradients(name, compiled):
    """Linear quantiles (median, percentile, their nan* forms) had no derivative rule: a
    robust loss through np.median raised NoDerivative. The gradient goes to the elements
    ranked at the quantile (none to NaNs the nan* forms skip)."""
    fn, draw = ORDER_STATISTICS[name]
    a = draw()
    cot = rng.standard_normal(np.shape(fn(a)[0]))
    loss = lambda a: np.sum(cot * fn(a)[0])  # noqa: E731
    leaf = kiln.tensor(a, requires_grad=True)
    (kiln.compile(loss) if compiled else loss)(leaf).backward()
    want = _finite_differences(lambda a: loss(a), (np.nan_to_num(a, nan=0.0),), 0) \
        if not np.isnan(a).any() else _nan_skipping_differences(loss, a)
    np.testing.assert_allclose(leaf.grad.numpy(), want, rtol=1e-5, atol=1e-6)


def _nan_skipping_differences(f, a, eps=1e-6):
    out = np.zeros_like(a)
    for k in zip(*np.nonzero(~np.isnan(a))):
        hi, lo = a.copy(), a.copy()
        hi[k] += eps
        lo[k] -= eps
        out[k] = (f(hi) - f(lo)) / (2 * eps)
    return out


def test_quantiles_without_a_derivative_rule_say_so():
    x = kiln.tensor(np.arange(6.0), requires_grad=True)
    with pytest.raises(kiln.NoDerivative, match="quantile"):
        np.quantile(x, 0.4, method="weibull").backward()   # ('nearest' has one now, grads_real3)
    with pytest.raises(kiln.NoDerivative, match="quantile"):
        np.quantile(x, [0.25, 0.75]).sum().backward()


def _top1_put_along_axis(x, v):
    y = x * 1.0
    np.put_along_axis(y, np.array([[0, 0], [2, 1]]), v, axis=1)   # row 0 writes twice: the last lands
    np.put_along_axis(y, np.argmax(x, axis=1, keepdims=True), 0.0, axis=-1)
    return (np.sum(np.sin(y) * np.arange(1.0, 7.0).reshape(2, 3)),)


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
def test_put_along_axis_differentiates_and_is_captured(compiled):
    """np.put_along_axis had no op: a NoOpError on the tape and inside kiln.grad, a graph
    break in compiled code. It is NumPy's ``arr[fancy] = values`` (setitem)."""
    _check(_top1_put_along_axis, (np.array([[0.1, 0.9, -0.4], [1.2, -0.3, 0.5]]),
                                  np.array([[0.3, -0.6], [0.7, 0.2]])), compiled)
    assert kiln.explain(_top1_put_along_axis)(np.ones((2, 3)), np.ones((2, 2))).graph_break_count == 0


@pytest.mark.parametrize("bad", [np.array([[0.5]]), np.array([0]), np.array([[0], [1], [2]]), np.array([[5]])],
                         ids=["float", "rank", "shape", "range"])
def test_put_along_axis_raises_numpys_errors(bad):
    def put(a, i):
        np.put_along_axis(a, i, 1.0, axis=1)
    with pytest.raises(Exception) as want:
        put(np.zeros((2, 3)), bad)
    with pytest.raises(type(want.value), match=re.escape(str(want.value))):
        kiln.compile(put, backend="eager")(np.zeros((2, 3)), bad)


def _log_grid(a):
    return (np.sum(np.logspace(0.0, a[0], 4) ** 2) + np.sum(np.logspace(a, 2 * a, 3, base=2.0, endpoint=False, axis=-1)),)


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
def test_logspace_of_a_value_being_differentiated(compiled):
    """np.logspace and np.geomspace were functions of constants only: given a Tensor, NumPy's
    code handed it back to kiln until RecursionError. logspace is base ** linspace."""
    _check(_log_grid, (np.array([0.3, -0.2]),), compiled)
    with pytest.raises(kiln.UnsupportedArgument, match=r"numpy.geomspace of an array kiln computes.*np.exp\(np.linspace"):
        kiln.grad(lambda a: np.sum(np.geomspace(1.0, 1.0 + a, 4)))(np.array(0.3))


def _log_sum_exps(x):
    return (np.logaddexp.reduce(x, axis=None), np.logaddexp.reduce(x, axis=1),
            np.logaddexp2.reduce(x, axis=0, keepdims=True), np.logaddexp.reduce(x, axis=(0, 1), initial=0.5),
            np.logaddexp.reduce(x[0, 1]))


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
def test_logaddexp_reduce_differentiates_to_a_softmax(compiled):
    """np.logaddexp.reduce (a log-sum-exp) had no derivative rule: NoDerivative."""
    _check(_log_sum_exps, (np.array([[0.3, -1.0, 2.0], [0.5, 0.2, -0.7]]),), compiled)


def test_other_ufunc_reduces_name_the_ufunc_and_the_line():
    with pytest.raises(kiln.NoDerivative, match=rf"at {re.escape(__file__)}:\d+: .*'numpy.hypot.reduce'"):
        kiln.grad(lambda x: np.sum(np.hypot.reduce(x, axis=0)))(np.ones((2, 2)))


def _chain(a, b, c, d):
    return (np.linalg.multi_dot([a, b, c, d]), np.linalg.multi_dot([b, c]), np.linalg.multi_dot([a, b, c[:, 0]]))


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
def test_multi_dot_differentiates_in_numpys_order(compiled):
    """np.linalg.multi_dot had no op: NoOpError in kiln.grad, a graph break compiled. It
    multiplies in NumPy's cheapest order, so values are NumPy's bit for bit."""
    args = (rng.standard_normal(3), rng.standard_normal((3, 6)), rng.standard_normal((6, 2)), rng.standard_normal((2, 5)))
    _check(_chain, args, compiled)
    out = kiln.explain(_chain)(*args)
    assert out.graph_break_count == 0
    for got, want in zip(kiln.compile(_chain, backend="eager")(*args), _chain(*args)):
        assert type(got) is type(want)
        np.testing.assert_array_equal(got, want)
