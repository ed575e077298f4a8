"""Realistic NumPy programs through kiln.compile, compared with running them without kiln
exactly as the contract (DESIGN.md §1, §1b, §4) says: values (float32 rtol 1e-5, float64
1e-12), dtypes, shapes, return types, exceptions (type and message), the final state of
every argument, and which outputs share memory with which arguments.

Each program is a plain function plus a list of calls (argument tuples); the calls run in
order on one compiled function, so later calls exercise cache hits, recompiles and
dynamic dims. Shapes are kept few: every distinct graph costs one g++ build.
"""
from __future__ import annotations

import copy
import math
import warnings

import numpy as np
import pytest

import kiln

BACKENDS = ["cpp", "eager", "aot_eager"]
f32, f64, i32, i64 = np.float32, np.float64, np.int32, np.int64
_rng = np.random.default_rng(1234)


def rn(*shape, dtype=f64):
    return _rng.standard_normal(shape).astype(dtype)


def ri(lo, hi, *shape, dtype=i64):
    return _rng.integers(lo, hi, shape).astype(dtype)


# ----------------------------------------------------------------------------- harness

def _tol(dtype):
    if dtype == np.float32:
        return dict(rtol=1e-5, atol=1e-6)
    if dtype == np.float64:
        return dict(rtol=1e-12, atol=1e-13)
    return dict(rtol=0, atol=0)


def _check_same(got, exp, where):
    assert type(got) is type(exp), f"{where}: type {type(got).__name__} != {type(exp).__name__}"
    if isinstance(exp, (list, tuple)):
        assert len(got) == len(exp), f"{where}: len {len(got)} != {len(exp)}"
        for i, (g, e) in enumerate(zip(got, exp)):
            _check_same(g, e, f"{where}[{i}]")
    elif isinstance(exp, dict):
        assert list(got) == list(exp), f"{where}: keys {list(got)} != {list(exp)}"
        for k in exp:
            _check_same(got[k], exp[k], f"{where}[{k!r}]")
    elif isinstance(exp, (np.ndarray, np.generic)):
        assert got.dtype == exp.dtype, f"{where}: dtype {got.dtype} != {exp.dtype}"
        assert got.shape == exp.shape, f"{where}: shape {got.shape} != {exp.shape}"
        if exp.dtype.kind in "fc":
            np.testing.assert_allclose(got, exp, equal_nan=True, err_msg=where, **_tol(exp.dtype))
        else:
            np.testing.assert_array_equal(got, exp, err_msg=where)
    elif isinstance(exp, float):
        assert got == exp or (math.isnan(got) and math.isnan(exp)) or math.isclose(got, exp, rel_tol=1e-12), \
            f"{where}: {got!r} != {exp!r}"
    else:
        assert got == exp, f"{where}: {got!r} != {exp!r}"


def _leaves(obj):
    if isinstance(obj, (list, tuple)):
        for o in obj:
            yield from _leaves(o)
    elif isinstance(obj, dict):
        for o in obj.values():
            yield from _leaves(o)
    elif isinstance(obj, np.ndarray):
        yield obj


def _run(fn, args):
    try:
        return ("ok", fn(*args))
    except Exception as e:          # noqa: BLE001 - user exceptions are part of the contract
        return ("raise", e)


def _alias_pattern(out, args):
    outs, ins = list(_leaves(out)), list(_leaves(args))
    return ([[np.shares_memory(o, a) for a in ins] for o in outs],
            [[o is a for a in ins] for o in outs],
            [[np.shares_memory(o, p) for p in outs] for o in outs])


def check_program(fn, calls, backend):
    compiled = kiln.compile(fn, backend=backend)
    for n, args in enumerate(calls):
        eager_args, kiln_args = copy.deepcopy(args), copy.deepcopy(args)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            exp = _run(fn, eager_args)
            got = _run(compiled, kiln_args)
        where = f"{fn.__name__} call {n}"
        if exp[0] == "raise":
            assert got[0] == "raise", f"{where}: expected {exp[1]!r}, got result {got[1]!r}"
            assert type(got[1]) is type(exp[1]) and str(got[1]) == str(exp[1]), \
                f"{where}: expected {exp[1]!r}, got {got[1]!r}"
        else:
            if got[0] == "raise":
                raise AssertionError(f"{where}: raised {got[1]!r}") from got[1]
            _check_same(got[1], exp[1], f"{where} result")
            assert _alias_pattern(got[1], kiln_args) == _alias_pattern(exp[1], eager_args), \
                f"{where}: outputs alias arguments differently"
        _check_same(list(kiln_args), list(eager_args), f"{where} args after call")


PROGRAMS = {}


def program(*calls):
    """Register ``fn`` with the calls it is checked on (each a tuple of arguments)."""
    def deco(fn):
        PROGRAMS[fn.__name__] = (fn, list(calls))
        return fn
    return deco


# ----------------------------------------------------------------------------- programs

@program((rn(4, 6, dtype=f32),), (rn(4, 6),), (rn(7, 6, dtype=f32),))
def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


@program((rn(3, 5),), (np.array([[1.0, np.inf, 2.0], [-np.inf, -np.inf, 0.0]]),))
def logsumexp(x):
    m = np.max(x, axis=1, keepdims=True)
    return np.log(np.sum(np.exp(x - m), axis=1)) + m[:, 0]


@program((rn(4, 8, dtype=f32), rn(8, dtype=f32), rn(8, dtype=f32)),
         (rn(2, 3, 8, dtype=f32), rn(8, dtype=f32), rn(8, dtype=f32)))
def layer_norm(x, g, b):
    mu = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + 1e-5) * g + b


@program((rn(2, 4, 8), rn(2, 4, 8), rn(2, 4, 8)))
def attention(q, k, v):
    s = q @ k.transpose(0, 2, 1) / np.sqrt(q.shape[-1])
    s = s - s.max(axis=-1, keepdims=True)
    p = np.exp(s)
    p /= p.sum(axis=-1, keepdims=True)
    return p @ v, p


@program((rn(10, 3), rn(4, 3)), (rn(12, 3, dtype=f32), rn(4, 3, dtype=f32)))
def kmeans_assign(x, c):
    d = ((x[:, None, :] - c[None, :, :]) ** 2).sum(-1)
    lab = d.argmin(axis=1)
    onehot = np.eye(c.shape[0])[lab]
    newc = (onehot.T @ x) / np.maximum(onehot.sum(0), 1)[:, None]
    return lab, newc, d.min(axis=1)


@program((rn(12),), (rn(20),))
def stencil_inplace(u):
    u[1:-1] = u[1:-1] + 0.1 * (u[2:] - 2 * u[1:-1] + u[:-2])
    return u


@program((rn(6, 7),))
def stencil_2d(u):
    new = u.copy()
    new[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
    return new, np.abs(new - u).max()


@program((rn(5, 4),), (ri(-5, 5, 5, 4),), (ri(-5, 5, 3, 4, dtype=i32),))
def cumulative(x):
    return np.cumsum(x, axis=0), x.cumsum(), np.cumsum(x, axis=1, dtype=np.float32)


@program((ri(-20, 20, 10), 3), (ri(-20, 20, 10, dtype=i32), -4), (ri(-20, 20, 10), np.int64(7)))
def intdiv(a, k):
    return a // k, a % k, np.floor_divide(a, -3), np.remainder(-a, 5), divmod(a, k), a // 2 * k


@program((rn(8), rn(8)), (rn(8, dtype=f32), rn(8, dtype=f32)))
def boolean_logic(a, b):
    m = (a > 0) & ~(b < 0) | (a == b)
    n = np.logical_xor(a > 0.5, b > 0.5)
    return m, n, m.sum(), np.where(m, a, b), m.any(), n.all(), (m ^ n).astype(np.int32)


@program((rn(5, dtype=f32), 2.5, 3), (rn(5, dtype=f32), 2, True), (ri(0, 5, 5, dtype=i32), 2.5, 3),
         (np.arange(5, dtype=np.int8), 3, 100))
def nep50_mix(x, s, k):
    return x * s, x + k, x / k, (x * 2.0).dtype, x - np.float64(1.0), x ** 2, np.float32(2) * x


@program((rn(4, dtype=f32), rn(4, dtype=f64), ri(0, 4, 4, dtype=i32), ri(0, 4, 4),
          np.array([True, False, True, False])))
def dtype_mix(a, b, i, j, m):
    return a + b, a + i, a + j, i + j, i * m, a * m, m + m, i / j, np.maximum(i, a), i - m


@program((rn(3, 4),), (rn(3, 4, dtype=f32),))
def scalars_returned(x):
    s = x.sum()
    return s, x.max(), x[1, 2], float(x.mean()), s * 2, np.sqrt(np.abs(s)), x.shape, x.size


@program((rn(0, 4),), (rn(1, 4),), (rn(3, 0),))
def size_zero_one(x):
    return x.sum(axis=0), x.sum(axis=1), x * 2 + 1, x.mean(axis=0), x.T @ x, np.cumsum(x, axis=0)


@program((rn(6, 8)[::2, 1::3],), (rn(6, 8).T,), (np.broadcast_to(rn(1, 8), (5, 8)),),
         (np.asfortranarray(rn(5, 8)),), (rn(6, 8)[::-1, ::-2],))
def layouts(x):
    y = np.sin(x) * 2 + x.sum(axis=0)
    return y, y.T.copy(), x[::-1] + 1, x.ravel(), (x @ x.T).sum(1)


@program((rn(3), [1.0, 2.0, 3.0, 0.5]), (rn(3, dtype=f32), [1.0, -2.0]))
def horner(x, coeffs):
    acc = np.zeros_like(x)
    for c in coeffs:
        acc = acc * x + c
    return acc


@program((rn(10), -0.5, 0.5), (rn(10, dtype=f32), -1, 1), (ri(-10, 10, 10), -3, 3))
def clipping(x, lo, hi):
    return np.clip(x, lo, hi), x.clip(min=lo), np.minimum(np.maximum(x, lo), hi)


@program((ri(0, 5, 7), 5), (ri(0, 3, 4, dtype=i32), 3))
def onehot(labels, k):
    return np.eye(k)[labels], np.eye(k, dtype=np.float32)[labels].sum(0)


@program((rn(4, 5),))
def argmax_onehot(x):
    idx = x.argmax(axis=1)
    oh = np.zeros_like(x)
    oh[np.arange(x.shape[0]), idx] = 1.0
    return oh, idx


@program((np.array([1.0, np.nan, -np.inf, np.inf, 0.0, -0.0]),),
         (np.array([np.nan, 1.0, 2.0], dtype=f32),))
def nan_inf(x):
    return np.maximum(x, 0), np.fmax(x, 0), x.max(), np.nanmax(x) if False else x.min(), np.isnan(x), \
        np.sign(x), np.sqrt(x), x / 0.0 if False else x * 0.0, np.exp(x), np.tanh(x)


@program((rn(3, 4),), (rn(3, 4, dtype=f32),))
def inplace_ops(x):
    x += 1
    x *= 2
    x[0] = 0
    x[:, 1] -= x[:, 2]
    np.exp(x, out=x)
    return x


@program((rn(3, 4), rn(4)))
def inplace_alias(x, b):
    y = x[1:]
    y += b
    z = x.T
    z[0] = -1
    return y, z, x


class _Linear:
    def __init__(self, w, b):
        self.w, self.b, self.scale = w, b, 0.5

    def __call__(self, x):
        return self.act(x @ self.w + self.b) * self.scale

    def act(self, h):
        return np.maximum(h, 0)


_lin = _Linear(rn(4, 3), rn(3))


@program((rn(2, 4),), (rn(5, 4),))
def user_method(x):
    return _lin(x)


def _make_closure():
    eps = 1e-6

    def normalize(x):
        return x / (np.linalg.norm(x, axis=-1, keepdims=True) + eps)
    return normalize


_normalize = _make_closure()


@program((rn(3, 4),), (rn(3, 4, dtype=f32),))
def closure_helper(x):
    y = _normalize(x)
    return {"y": y, "norms": np.sqrt((y * y).sum(-1)), "list": [y[0], y[-1]]}


@program((rn(3, 4), 2), (rn(3, 4), 0), (rn(3, 4), -1))
def user_raises(x, k):
    if k < 0:
        raise ValueError(f"k must be non-negative, got {k}")
    return x.reshape(-1)[k], x[k]


@program((rn(3, 4),), (rn(4, 3),))
def numpy_raises(x):
    return x @ x


@program((rn(2, 3), rn(2, 3)), (rn(2, 3, dtype=f32), rn(3)))
def stack_concat(a, b):
    return np.concatenate([a, b], axis=0), np.stack([a, a + b], axis=-1), np.hstack([a, a]), \
        np.vstack([a[0], b[-1]])


@program((rn(6),), (rn(9),))
def reversed_slices(x):
    return x[::-1], x[::-1] * 2, x[-2::-2].sum(), np.flip(x)[1:]


@program((rn(3, 4),))
def view_returns(x):
    return x.T, x[1], x[:, ::2], x.reshape(4, 3), x


@program((rn(4),), (rn(4, dtype=f32),))
def zero_d(x):
    s = np.float64(2.0) * x.sum()
    a = np.array(3.0)
    return a * x, a + 1, np.asarray(s), x.dot(x), np.add(x.sum(), 1)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_program(name, backend):
    fn, calls = PROGRAMS[name]
    check_program(fn, calls, backend)
