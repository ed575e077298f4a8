"""Known slowdowns (stop 50): small programs where decorating made a function slower than
NumPy, each beside the kiln change that answered it. ``python -m benchmarks.slowdown_sweep
--known`` times them (plain against compiled, as every other row)."""
from __future__ import annotations

import numpy as np


def unique_index_counts(x):
    return np.unique(x, return_index=True, return_counts=True)


def chained_view_writes(a):
    a[0][1:3] = 5.0
    a[1, ::2] += 1.0
    return a


def strided_view_writes(x):          # cost model: writes priced from the lowering's calls
    v = x[1:][::2]
    v[:] = 0
    w = x.reshape(2, 3)
    w[:, -1] = 7
    return x, v, w


def iadd(a, b):                      # called as iadd(x, x): aot's merged-input short path
    a += b
    return a


def tanh_steps_n(A, x, n):           # cost model: a run-time trip count priced per trip
    for _ in range(n):
        x = np.tanh(A @ x)
    return x


def selection_mean(x, m):            # one pass less over m (kiln_selected_sum's count)
    return x[m].mean()


def rhs_with_folded_work(t, x, y, z, sigma, rho, beta):   # cost model: folded Python work
    c = sum([i * 0.25 for i in range(80)]) / 80
    yprime = np.empty(3)
    yprime[0] = sigma * (y - x) / rho + c
    yprime[1] = x * (rho - z) - y
    yprime[2] = x * y - beta * z
    return yprime


def lstsq(a, b):                     # cost model: one NumPy call (Composite.one_call)
    return np.linalg.lstsq(a, b, rcond=None)


def histogram(x):                    # counts and data-dependent edges
    return np.histogram(x, bins=10)


def int_quotients(a, b):             # a zero divisor every call: fpwarn's handler under
    q = a // b                       # simplefilter("ignore") looks at the filters once
    r = a % b
    q2, r2 = np.divmod(a, b)
    return q + r, q2 * r2


def record_fields(s, v, w):          # breaks at each statement reading a structured array
    s["x"] += v * 1.5
    a = np.sin(s["x"]) * np.cos(v) + w
    s["y"] = a.astype(np.int32)
    b = np.exp(-a * a) + s["x"]
    s["x"] -= b * 0.1
    c = np.tanh(b) * 2 + np.sqrt(np.abs(v))
    s["y"] += (c > 1).astype(np.int32)
    return s["x"].sum() + c.sum(), s


def int_power(a, k):                 # cost model: integer ** is NumPy's call (no C++ loop),
    return a ** k, 2 ** np.abs(a)    # not kernel work


def identity_returns(x):             # returned views replayed, a layout-keyed variant
    return np.asarray(x), x.view(), x[:], np.reshape(x, x.shape), np.array(x), x.astype(np.float64)


def identity_aliases(x):             # aliasing ops returned: no-copy calls replayed after a layout check
    return np.asarray(x), x.astype(x.dtype, copy=False), np.ascontiguousarray(x), x.view(), x[:], \
        np.reshape(x, x.shape), np.array(x), x.astype(np.float32), np.asarray(x, dtype=np.float64)


def exp_selected_sum(x):             # a selected sum whose term calls a vector function (exp)
    return np.exp(x)[x < 0.5].sum()


def dropout_step(h, Y, rng, p_drop):  # in place over the draws: fp predicates every launch
    keep = 1.0 - p_drop
    mask = (rng.random(h.shape) < keep) / keep
    err = np.maximum(h, 0) * mask - Y
    return 0.5 * np.mean(err ** 2), err * mask * (h > 0) / len(h)


def noise_step(x, rng, s):           # a tiny draw from a generator passed in: the draw's op
    return x * s + rng.random(x.shape) * 0.1   # kernel's Python around NumPy's call


def runtime_power(x, p):              # a run-time exponent: NumPy's fast paths, out of the loop
    return x ** p


def cases():
    """(name, fn, args) of each known slowdown, at the sizes it was found."""
    rng = np.random.default_rng(0)
    same = np.linspace(0.0, 1.0, 100)
    sparse = rng.random(100_000) < 0.01
    A = rng.standard_normal((8, 8)) * 0.3
    return [
        ("unique_index_counts 100", unique_index_counts, (rng.integers(0, 20, 100),)),
        ("chained_view_writes 4x4", chained_view_writes, (np.zeros((4, 4)),)),
        ("strided_view_writes 6", strided_view_writes, (np.arange(6.0),)),
        ("iadd(x, x) 100", iadd, (same, same)),
        ("tanh_steps_n 8, n=5", tanh_steps_n, (A, rng.standard_normal(8), 5)),
        ("tanh_steps_n 8, n=100", tanh_steps_n, (A, rng.standard_normal(8), 100)),
        ("selection_mean 1e5, 1%", selection_mean, (rng.standard_normal(100_000), sparse)),
        ("lstsq 9x3", lstsq, (rng.standard_normal((9, 3)), rng.standard_normal(9))),
        ("histogram 100", histogram, (rng.standard_normal(100),)),
        ("rhs_with_folded_work", rhs_with_folded_work, (0.0, 1.0, 2.0, 3.0, 10.0, 28.0, 8 / 3)),
        ("int_quotients 8 (zero divisors)", int_quotients,
         (np.arange(1, 9), np.array([0, 1, 0, 2, 0, 3, 0, 1]))),
        ("int_power 5", int_power, (np.arange(5), 3)),
        ("identity_returns 4", identity_returns, (np.arange(4.0, dtype=np.float32),)),
        ("identity_aliases 4", identity_aliases, (np.arange(4.0, dtype=np.float32),)),
        ("exp_selected_sum 1e5", exp_selected_sum, (rng.random(100_000),)),
        ("dropout_step 64x64", dropout_step,
         (rng.standard_normal((64, 64)), rng.standard_normal((64, 64)), np.random.default_rng(1), 0.1)),
        ("noise_step 4", noise_step, (np.arange(4.0), np.random.default_rng(2), 2.0)),
        ("runtime_power 1e5, p=2.0", runtime_power, (rng.random(100_000), 2.0)),
        ("runtime_power 1e5, p=3.0", runtime_power, (rng.random(100_000), 3.0)),
        ("record_fields 8", record_fields,
         (np.zeros(8, dtype=[("x", "f8"), ("y", "i4")]), np.arange(8.0), np.ones(8))),
    ]
