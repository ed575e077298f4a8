"""Gradients of every differentiable op through aot_autograd (the NumPy interpreter for
both graphs) against the eager Tensor and against central finite differences (float64).

Each row is a NumPy call; its spelling normalizes it to an op call, so rows read like
user code. Every differentiable op in the registry must have a row or a reason below.
"""
from __future__ import annotations

import numpy as np
import pytest

import kiln
from kiln.aot import aot_autograd, aot_eager
from kiln.autograd import numerical_grad
from kiln.ir import trace
from kiln.ops import REGISTRY, TensorMeta, lookup
from kiln.ops.registry import Bound
from kiln.tensor import apply

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

rng = np.random.default_rng(0)
# (C-contiguous inputs only: kiln.autograd.numerical_grad perturbs through a reshape of its
# copy, which misses F-ordered arrays.)
X = rng.uniform(0.2, 0.8, (3, 4))
Y = rng.uniform(0.3, 0.9, (4,))
V = rng.standard_normal((3, 4))
VT = np.ascontiguousarray(V.T)
SQ = rng.standard_normal((3, 3)) + 3 * np.eye(3)
SPD = SQ @ SQ.T
IDX = np.array([0, 2, 0])
IDX2 = np.array([[0, 3], [1, 1], [2, 0]])

UNARY_DOMAIN = {"arccosh": X + 1.5}
SKIP = {
    "getitem_mask": "data-dependent length: captured graphs with Tensors break before it; "
                    "gradients on the eager tape (tests/ops/test_op_table.py)",
    "bincount": "data-dependent length, as getitem_mask (tests/ops/test_data_dependent_ops.py)",
    "empty_like": "uninitialized values",
    "cholesky_backward": "internal adjoint of cholesky (covered by the cholesky row)",
    # Checked against finite differences, eager and compiled, where their inputs need care:
    "ldexp": "an integer exponent (tests/ops/rows_pointwise.py's ldexp row)",
    "frexp_mantissa": "a two-output ufunc (tests/ops/rows_pointwise.py's frexp rows)",
    "sliding_window_view": "window parameters (tests/ops/rows_pointwise.py's row)",
    "interp": "sorted sample points (tests/ops/test_more_grads.py)",
    "quantile": "linear quantiles with a scalar q (tests/ops/test_more_grads.py)",
    "svd_packed": "separated singular values (tests/ops/test_more_grads.py)",
    "qr_packed": "tall and wide shapes (tests/ops/test_more_grads.py)",
    "lstsq_packed": "full-rank systems (tests/ops/test_more_grads.py)",
    "lstsq_residuals": "lstsq's residuals, read from lstsq_packed's result: full-rank "
                       "systems (tests/ops/test_more_grads.py's residuals gradient)",
    "irfft": "Hermitian input (tests/ops/test_more_grads.py, test_complex_grads.py)",
    "hfft": "Hermitian input (tests/ops/test_more_grads.py, test_complex_grads.py)",
    "irfft2": "Hermitian input (tests/ops/test_more_grads.py, test_complex_grads.py)",
    "irfftn": "Hermitian input (tests/ops/test_more_grads.py, test_complex_grads.py)",
    "ihfft": "a real input, complex result (tests/ops/test_complex_grads.py)",
    "complex_parts": "real parts, complex result (tests/ops/test_complex_grads.py)",
}


def _rows():
    rows = {}
    for name, op in REGISTRY.items():
        if op.vjp is None or op.category != "pointwise" or op.params:
            continue
        if op.inputs == ("x",):
            rows[name] = (None, (name, (UNARY_DOMAIN.get(name, X),), {}), {})
        elif op.inputs == ("x", "y"):
            rows[name] = (None, (name, (X, Y), {}), {})
    rows.update({
        "astype": (lambda x: x.astype(np.float64), (X,), {}),
        "clip": (np.clip, (X, 0.3, 0.7), {}),
        "where": (np.where, (X > 0.5, X, V), {}),
        "scalar_binary": (None, ("scalar_binary", (X, Y), {"ufunc": "multiply"}), {}),
        # ufunc(..., out=fallback, where=mask) (kiln/ops/masked.py)
        "masked_unary": (None, ("masked_unary", (X > 0.5, V, X), {"ufunc": "log"}), {}),
        "masked_binary": (None, ("masked_binary", (X > 0.5, V, X, Y), {"ufunc": "true_divide"}), {}),
        "copy": (np.copy, (X,), {}),
        "flatten": (lambda x: x.flatten(), (X,), {}),
        "copy_into": (None, ("copy_into", (V, Y, True), {"casting": "same_kind"}), {}),
        "broadcast_to": (np.broadcast_to, (Y, (3, 4)), {}),
        "broadcast_arrays_view": (lambda y: np.broadcast_arrays(y, np.zeros((3, 4)))[0], (Y,), {}),
        "expand_dims": (np.expand_dims, (X, 1), {}),
        "flip": (np.flip, (X, 1), {}),
        "moveaxis": (np.moveaxis, (X, 0, 1), {}),
        "ravel": (np.ravel, (X,), {}),
        "reshape": (np.reshape, (X, (4, 3)), {}),
        "squeeze": (np.squeeze, (X[:, None, :],), {}),
        "swapaxes": (np.swapaxes, (X, 0, 1), {}),
        "transpose": (np.transpose, (X,), {}),
        "getitem": (lambda x: x[1:, 2], (X,), {}),
        "index": (lambda x: x[IDX], (X,), {}),
        "index_add": (None, ("index_add", (X, (IDX,), V), {}), {}),
        "index_put": (None, ("index_put", (X, (IDX[:2],), V[:2]), {}), {}),
        "put_along_axis_add": (None, ("put_along_axis_add", (X, IDX2, V[:, :2]), {"axis": 1}), {}),
        "take": (np.take, (X, np.array([1, 3])), {"axis": 1}),
        # np.insert of a Fortran-ordered array: slices joined, then laid out (relayout)
        "relayout": (lambda x: np.insert(x, [1, 1], 0.5, axis=0), (np.asfortranarray(X),), {}),
        "take_along_axis": (np.take_along_axis, (X, IDX2), {"axis": 1}),
        "ufunc_reduce": (np.logaddexp.reduce, (X,), {"axis": 1}),
        "sum": (np.sum, (X,), {"axis": 1}),
        # x[m].sum(): NumPy's sum of the compacted selection (kiln/ops/reduction_where.py)
        "selected_sum": (None, ("selected_sum", (X, X > 0.5), {"dtype": None}), {}),
        "where_sum": (None, ("where_sum", (X, X > 0.5), {"axis": None, "keepdims": False,
                                                        "dtype": None, "initial": None}), {}),
        "mean": (np.mean, (X,), {"axis": 0}),
        "prod": (np.prod, (X,), {"axis": 1}),
        "max": (np.max, (X,), {"axis": 1}),
        "min": (np.min, (X,), {}),
        "ptp": (np.ptp, (X,), {"axis": 1}),
        "std": (np.std, (X,), {"axis": 1}),
        "var": (np.var, (X,), {"ddof": 1}),
        "sum_to": (None, ("sum_to", (X,), {"shape": (4,)}), {}),
        "cumsum": (np.cumsum, (X,), {"axis": 1}),
        "cumprod": (np.cumprod, (X,), {"axis": 1}),
        "cummax": (np.maximum.accumulate, (V,), {"axis": 1}),
        "cummin": (np.minimum.accumulate, (V,), {"axis": 0}),
        "cumfmax": (np.fmax.accumulate, (V,), {"axis": 1}),
        "cumfmin": (lambda v: np.fmin.accumulate(v[::-1]), (V,), {}),
        "choose": (np.choose, (np.array([[0, 1, 2, 1], [4, 0, -1, 1]]), [X[:2], V[1], 0.5]), {"mode": "wrap"}),
        "matmul": (np.matmul, (X, VT), {}),
        "dot": (np.dot, (X, Y), {}),
        "inner": (np.inner, (X, V), {}),
        "outer": (np.outer, (Y, X[0]), {}),
        "tensordot": (np.tensordot, (X, VT), {"axes": 1}),
        "einsum": (np.einsum, ("ij,kj->ik", X, V), {}),
        "solve": (np.linalg.solve, (SQ, V), {}),
        "inv": (np.linalg.inv, (SQ,), {}),
        "cond": (np.linalg.cond, (SQ,), {}),
        "cholesky": (np.linalg.cholesky, (SPD,), {}),
        "norm": (np.linalg.norm, (V,), {}),
        "vector_norm": (np.linalg.norm, (V,), {"axis": 1, "keepdims": True}),
        "concatenate": (np.concatenate, ((X, V),), {"axis": 1}),
        "stack": (np.stack, ((X, V),), {}),
        "repeat": (np.repeat, (X, 2), {"axis": 1}),
        "tile": (np.tile, (X, (2, 1)), {}),
        "tril": (np.tril, (V,), {}),
        "triu": (np.triu, (V,), {}),
        "zeros_like": (np.zeros_like, (X,), {}),
        "ones_like": (np.ones_like, (X,), {}),
        "full_like": (np.full_like, (X, np.array(2.5)), {}),
        "filled": (None, ("filled", (X, np.array(2.5)), {"shape": None, "dtype": None}), {}),
        "full": (np.full, ((3,), np.array(2.5)), {}),
        "linspace": (np.linspace, (np.array(0.5), np.array(2.0)), {"num": 5}),
        "real": (None, ("real", (X,), {}), {}),   # (np.real of a real array is the array itself)
        "imag": (np.imag, (X,), {}),
        "angle": (np.angle, (V,), {}),
        "sort": (np.sort, (V,), {"axis": 1}),
        "partition": (np.partition, (V, 1), {}),
        "diagonal": (np.diagonal, (V,), {"offset": 1}),
        "det": (np.linalg.det, (SQ,), {}),
        "slogdet_packed": (None, ("slogdet_packed", (SQ,), {}), {}),
        # symmetric eigenproblems read one triangle: gradients are folded onto it
        "eigh_packed": (None, ("eigh_packed", (SQ,), {"UPLO": "L"}), {}),
        "eigvalsh": (np.linalg.eigvalsh, (SQ, "U"), {}),
        "svdvals": (np.linalg.svdvals, (V,), {}),
        "pinv": (np.linalg.pinv, (V,), {}),
        "fft": (np.fft.fft, (X,), {"n": 5}),
        "ifft": (np.fft.ifft, (X,), {"axis": 0, "norm": "ortho"}),
        "rfft": (np.fft.rfft, (X,), {}),
        "fft2": (np.fft.fft2, (X,), {"s": (2, 5)}),
        "ifft2": (np.fft.ifft2, (X,), {"norm": "forward"}),
        "rfft2": (np.fft.rfft2, (X,), {}),
        "fftn": (np.fft.fftn, (X,), {"axes": (0,)}),
        "ifftn": (np.fft.ifftn, (X,), {}),
        "rfftn": (np.fft.rfftn, (X,), {"s": (4, 3)}),
        "convolve": (np.convolve, (Y, X[0]), {"mode": "same"}),
        "nonzero_or_raise": (None, ("nonzero_or_raise", (X,), {"message": "m", "error": "ValueError"}), {}),
        # flat writes: repeated positions (the last write stays), values repeated cyclically
        "put_values": (None, ("put_values", (V, np.array([1, 5, 1, -1]), Y[:3]), {"mode": "raise"}), {}),
        "placed": (None, ("placed", (V, V > 0, Y[:3]), {}), {}),
    })
    return rows


ROWS = {k: v for k, v in _rows().items() if k not in SKIP}


def _bound(row) -> Bound:
    fn, args, kwargs = row
    if fn is None:
        name, inputs, params = args
        return Bound(REGISTRY[name], inputs, params)
    try:
        return lookup(fn).bind(*args, **kwargs)
    except Exception:
        pass
    # a lambda written with methods/operators: bind through the Tensor front end
    return None


def _flat_floats(inputs):
    """Paths (i, sub) of float arrays among the op inputs."""
    paths = []
    for i, v in enumerate(inputs):
        items = [(sub, w) for sub, w in enumerate(v)] if isinstance(v, tuple) and v and \
            all(isinstance(w, np.ndarray) for w in v) else [(None, v)]
        for sub, w in items:
            if isinstance(w, np.ndarray) and w.dtype.kind == "f":
                paths.append((i, sub, w))
    return paths


def _substitute(inputs, paths, values):
    out = list(inputs)
    for (i, sub, _), v in zip(paths, values):
        if sub is None:
            out[i] = v
        else:
            seq = list(out[i])
            seq[sub] = v
            out[i] = tuple(seq)
    return tuple(out)


def _case(name):
    row = ROWS[name]
    bound = _bound(row)
    if bound is None:  # method/operator rows: record the op through one eager call
        fn, args, kwargs = row
        t = fn(kiln.tensor(args[0], requires_grad=True))
        node = t.grad_fn
        bound = Bound(node.op, _substitute_first(node.inputs, args[0]), node.params)
    return bound


def _substitute_first(inputs, x):
    return (x,) + tuple(inputs[1:])


def _cpp():
    try:
        from kiln.runtime import cpp_backend
    except ImportError:  # pragma: no cover - the backend is optional
        return None
    return cpp_backend


@pytest.mark.parametrize("name", sorted(ROWS))
def test_gradient_through_aot(name):
    check_gradient(name, aot_eager)


# cpp_backend bug (10:31 UTC): norm's 0-d result comes back with shape (1,). Strict, so
# the mark must go when it is fixed.
CPP_KNOWN: dict[str, str] = {}  # op name -> why its cpp gradient is known wrong (none now)


@pytest.mark.skipif(_cpp() is None, reason="kiln.runtime.cpp_backend is not available")
@pytest.mark.parametrize("name", [
    pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=CPP_KNOWN[n])) if n in CPP_KNOWN
    else n for n in sorted(ROWS)])
def test_gradient_through_aot_cpp(name):
    cpp = _cpp()
    check_gradient(name, lambda g, ex: aot_autograd(g, ex, cpp, cpp), rtol=1e-9)


def check_gradient(name, backend, rtol=1e-12):
    bound = _case(name)
    op, inputs, params = bound.op, bound.inputs, bound.params
    assert op.name == name or name in ("astype",), f"row {name} binds to {op.name}"
    paths = _flat_floats(inputs)
    leaves = [p[2] for p in paths]
    metas = [TensorMeta(v.shape, v.dtype) for v in leaves]
    graph = trace(lambda *ps: op(*_substitute(inputs, paths, ps), **params), metas)
    f = backend(graph, leaves)

    tensors = [kiln.tensor(v, requires_grad=True) for v in leaves]
    (out,) = f(*tensors)
    expected = op.impl(*inputs, **params)
    np.testing.assert_allclose(out.numpy(), expected, rtol=rtol, atol=1e-12)
    # Outputs that are views of inputs are rebuilt by replaying the view on the input
    # Tensor (so they alias it, as in NumPy): their grad_fn is the eager view node.
    # (astype(copy=False), ascontiguousarray: when NumPy returns the input itself).
    if not (op.may_alias and np.shares_memory(expected, inputs[0])):
        assert "CompiledFunctionBackward" in repr(out.grad_fn)
    assert out.grad_fn is not None
    cot = np.random.default_rng(1).standard_normal(np.shape(expected))
    out.backward(cot)

    eager_leaves = [kiln.tensor(v, requires_grad=True) for v in leaves]
    eager_out = apply(Bound(op, _substitute(inputs, paths, eager_leaves), params))
    eager_out.backward(cot)

    for k, (t, e) in enumerate(zip(tensors, eager_leaves)):
        got = t.grad.numpy() if t.grad is not None else np.zeros_like(leaves[k])
        want = e.grad.numpy() if e.grad is not None else np.zeros_like(leaves[k])
        np.testing.assert_allclose(got, want, rtol=max(rtol, 1e-10), atol=1e-12,
                                   err_msg=f"{name}: input {k} vs eager")
        numeric = numerical_grad(lambda *vs: op.impl(*_substitute(inputs, paths, vs), **params),
                                 leaves, k, cot)
        np.testing.assert_allclose(got, numeric, rtol=1e-5, atol=1e-6,
                                   err_msg=f"{name}: input {k} vs finite differences")


def test_every_differentiable_op_has_a_row():
    missing = [n for n, op in REGISTRY.items()
               if op.vjp is not None and n not in ROWS and n not in SKIP]
    assert not missing, f"differentiable ops without a gradient row in tests/aot: {missing}"
