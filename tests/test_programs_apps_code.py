"""How application code is structured, through kiln.compile and checked like
tests/test_programs.py: dataclasses and objects holding arrays updated in place, compiled
functions calling compiled functions, generators of batches, **kwargs, recursion, early
returns of an argument, try/except around np.linalg.LinAlgError, globals read after the
code changed them, lists, tuples, 0-d arrays and NumPy scalars where arrays are expected,
float16, read-only, strided and broadcast inputs, and one function called with changing
shapes and dtypes. Then the edge cases of the ufunc methods kiln/ops/ufunc_methods.py
captures (reduceat, reduce, accumulate and at of ufuncs without a fused op): empty and
non-increasing segments, out-of-range indices, forbidden casts, out=, views.
Each program draws its data from its own generator.
"""
from __future__ import annotations

import dataclasses

import numpy as np

import kiln
from tests.test_programs import BACKENDS, program_registry, program_test

f32 = np.float32
PROGRAMS, program = program_registry()   # name -> (fn, the calls it is checked on)


def g(seed):
    return np.random.default_rng(seed)


# ----------------------------------------------------------------------------- code structure

@dataclasses.dataclass
class Linear:
    w: np.ndarray
    b: np.ndarray

    def forward(self, x):
        return x @ self.w + self.b


@program(lambda: (Linear(np.ones((3, 2)), np.zeros(2)), np.arange(6.0).reshape(2, 3), 0.1),)
def dataclass_sgd_step(model, x, lr):
    err = model.forward(x) - 1.0
    model.w -= lr * x.T @ err
    model.b -= lr * err.sum(0)
    return model.forward(x)


class Particles:
    def __init__(self, n):
        r = np.random.default_rng(3)
        self.pos, self.vel = r.random((n, 2)), r.standard_normal((n, 2)) * 0.1

    def step(self, dt):
        self.pos += self.vel * dt
        self.vel[(self.pos < 0) | (self.pos > 1)] *= -1
        self.pos = np.clip(self.pos, 0, 1)
        return self


@program(lambda: (Particles(6), 0.5, 4),)
def object_stepped_in_a_loop(p, dt, n):
    for _ in range(n):
        p.step(dt)
    return p.pos.mean(axis=0), p


@kiln.compile
def _unit(v):
    return v / np.linalg.norm(v)


@program((g(50).standard_normal((4, 3)),), (g(51).standard_normal((2, 3)).astype(f32),))
def compiled_calls_compiled(X):
    return np.stack([_unit(r) for r in X]), _unit(X.ravel())


def _batches(X, bs):
    for i in range(0, len(X), bs):
        yield X[i:i + bs]


@program((g(52).standard_normal((10, 3)), 4),)
def generator_of_batches(X, bs):
    tot = np.zeros(X.shape[1])
    for b in _batches(X, bs):
        tot += b.sum(0)
    return tot, [b.shape for b in _batches(X, bs)]


def _clipped(x, **kw):
    return np.clip(x, **kw)


def _affine(x, alpha, beta, gamma=None):
    return alpha * x + beta if gamma is None else gamma


@program((g(53).standard_normal(6), {"alpha": 0.5, "beta": np.arange(6.0)}),)
def kwargs_passed_on(x, cfg):
    return _clipped(x, **{"a_min": -0.5, "a_max": 0.5}), _clipped(x, a_min=0, a_max=None), _affine(x, **cfg)


def _tree_sum(x):
    if x.size <= 2:
        return x.sum()
    h = x.size // 2
    return _tree_sum(x[:h]) + _tree_sum(x[h:])


def _power(x, n):
    return x if n == 0 else x * _power(x, n - 1)


@program((g(54).standard_normal(9),), (g(55).standard_normal(4).astype(f32),))
def recursion(x):
    return _tree_sum(x), _power(x, 3)


@program((g(56).standard_normal(5),), (np.zeros(5),))
def early_return_of_the_argument(x):
    if x.std() == 0:
        return x
    return x - x.mean()


@program((np.array([[1.0, 2.0], [2.0, 4.0]]), np.ones(2)), (np.array([[2.0, 1.0], [1.0, 3.0]]), np.ones(2)))
def linalg_error_caught(A, b):
    try:
        x, how = np.linalg.solve(A, b), "solve"
    except np.linalg.LinAlgError as e:
        x, how = np.linalg.lstsq(A, b, rcond=None)[0], str(e)
    try:
        return np.linalg.inv(A), x, how
    except np.linalg.LinAlgError:
        return np.linalg.pinv(A), x, how


SCALE = 2.0


def _set_scale(v):
    global SCALE
    SCALE = v


@program((g(57).standard_normal(3), 1.0), (g(58).standard_normal(3), 3.0), (g(59).standard_normal(3), 3.0),
         (g(60).standard_normal(3).astype(f32), 0.5))
def global_assigned_then_read(x, s):
    _set_scale(s)
    return x * SCALE


TABLE = {"a": 1.0}


@program((g(61).standard_normal(3), "a"), (g(62).standard_normal(3), "b"))
def global_dict_key_error(x, key):
    return x * TABLE[key]


@program(([1.0, 2.0, 3.0], (4, 5, 6)), (np.float32(2.0), 3), (np.array(2.5), np.int64(3)),
         (np.array(3, dtype=np.int32), np.int32(7)))
def lists_tuples_and_scalars(a, b):
    r = np.asarray(a) * np.asarray(b) + np.sqrt(np.abs(a))
    return r, type(r).__name__, np.asarray(a) > b


@program((g(63).standard_normal(5).astype(np.float16),), (g(64).standard_normal((3, 2)).astype(np.float16),))
def float16_arrays(x):
    return x * 2 + 1, x.sum(), np.exp(x).mean(), x.astype(np.float32).std(), (x > 0).mean(), x.T


def _read_only(a):
    a = a.copy()
    a.flags.writeable = False
    return a


@program(lambda: (_read_only(np.arange(12.0).reshape(3, 4)),), lambda: (np.arange(24.0).reshape(4, 6)[::2, 1::2],),
         (np.array([1.0, 2.0, 3.0])[::-1],), (np.broadcast_to(np.arange(3.0), (2, 3)),),
         (np.asfortranarray(g(65).standard_normal((3, 2))),))
def read_only_strided_and_broadcast(a):
    return (a * 2).T, a[:, ::-1].cumsum(axis=1) if a.ndim == 2 else a, a.ravel(), np.exp(a) - 1, a.copy()


@program((g(66).standard_normal(4),), (g(67).standard_normal((3, 2)),), (g(68).standard_normal(5).astype(f32),),
         (np.arange(4),), (g(69).standard_normal(6),), (np.ones((2, 3), bool),), (np.arange(6, dtype=np.uint8),))
def shapes_and_dtypes_change(x):
    return (x - x.mean()) / (x.std() + 1), x + 1, x * 2.5, x.sum(0)


@program((np.asfortranarray(g(93).standard_normal((3, 4))),), (g(94).standard_normal((3, 4)),),
         (g(95).standard_normal((4, 3)).T,), (g(96).standard_normal(5),), (g(97).standard_normal((4, 6))[::2, ::3],),
         (np.broadcast_to(np.arange(3.0), (2, 3)),), (np.array(2.0),),
         (np.asfortranarray(g(98).standard_normal((2, 3, 4))),))
def fortran_order_for_a_solver(x):
    # np.asfortranarray of a Fortran-ordered array is that array itself, as
    # np.ascontiguousarray of a C-ordered one is (kiln returned a new view of it)
    f = np.asfortranarray(x)
    c = np.ascontiguousarray(x)
    return f, c, np.asfortranarray(x * 2), f is x, c is x, np.asfortranarray(x, dtype=f32), np.asfortranarray(x.T)


@program(lambda: (np.asfortranarray(np.arange(12.0).reshape(3, 4)),), lambda: (np.arange(12.0).reshape(3, 4),))
def writes_through_asfortranarray(x):
    f = np.asfortranarray(x)
    f[0, 0] = -1.0
    f *= 2
    return x, f.sum()


@program(lambda: (np.asfortranarray(np.arange(12.0).reshape(3, 4)),), lambda: (np.arange(12.0).reshape(3, 4),),
         lambda: (np.arange(24.0).reshape(4, 6)[::2, 1::2],))
def c_order_for_a_c_library(x):
    # np.asarray(x, order="C") of a Fortran-ordered or strided x is a C-ordered copy:
    # kiln returned x itself, so writes through the result changed the caller's array
    c = np.asarray(x, order="C")
    c[0, 0] = -1.0
    f = np.asarray(x, order="F")
    f[-1, -1] = -2.0
    return x, c, f, np.array(x, order="C", copy=None), np.array(x, order="A"), np.asanyarray(x, order="C").strides


@program((np.ones(3), 0), (np.ones(3), 1), (np.ones(3), 2), (np.ones(3), 3), (np.ones(3), 4),
         (np.asfortranarray(np.ones((2, 2))), 5))
def copy_false_raises_where_numpy_must_copy(x, case):
    if case == 0:
        return np.asarray(x, copy=False)           # no copy needed: x itself
    if case == 1:
        return np.asarray(x, dtype=f32, copy=False)
    if case == 2:
        return np.asarray([1.0, 2.0], copy=False)
    if case == 3:
        return np.asarray(x[0], copy=False)        # a NumPy scalar
    if case == 4:
        return np.array(x.sum(), copy=False)
    return np.asarray(x, order="C", copy=False)


@program((np.ones(3, f32), np.arange(3, dtype=np.int8)), (np.arange(3, dtype=np.int16), np.ones(3, np.uint8)),
         (np.float32(1.5), np.float64(2.0)), (np.array(1, np.int8), np.ones(2, bool)))
def dtype_of_the_result_decided_up_front(x, y):
    dt = np.result_type(x, y, 1.0)
    out = np.empty(np.shape(x), dtype=np.result_type(x, np.float32))
    out[...] = x
    return np.asarray(y, dtype=dt) * 2, out, np.can_cast(x, f32), np.can_cast(y, np.int64, casting="same_kind")


@program((g(70).standard_normal(6),),)
def views_of_the_argument_returned(x):
    c = x[1:]
    c *= 2
    return x[::2], x.reshape(2, 3).T, c, x


@program((g(71).standard_normal((4, 3)), np.array([2, 0, 1, 1])),)
def fancy_copies_and_view_writes(x, idx):
    y = x[idx]
    y[0] = 99.0
    x[idx[:2]] += 1
    z = x[:, ::-1]
    z[0] = -1
    return y, z, x


@program((g(72).standard_normal(5), 2), (g(73).standard_normal(5), -1), (g(74).standard_normal(5), 7))
def users_own_exceptions(x, i):
    if i < 0:
        raise ValueError(f"negative index {i}")
    return x[i] * 2


@program((g(75).standard_normal((3, 4)),), (g(76).standard_normal((1, 4)),), (g(77).standard_normal((5, 1)),),
         (np.zeros((0, 4)),))
def size_one_and_zero_dims(x):
    return x - x.mean(axis=0), x.max(axis=1, initial=-np.inf)


# ----------------------------------------------------------------------------- ufunc methods

@program((g(78).standard_normal(6), np.array([0, 4, 1])), (g(79).standard_normal(6).astype(f32), np.array([0, 6])),
         (g(80).standard_normal(6), np.array([0, -1])), (g(81).standard_normal(6), np.array([0.0, 2.0])),
         (np.zeros(0), np.array([0])), (g(82).standard_normal(5), np.array([], dtype=np.int64)),
         (np.arange(6, dtype=np.int32), np.array([0, 3])), (np.arange(6) > 2, np.array([0, 3])),
         (g(83).standard_normal(6), [0, 2, 2, 5]), (g(84).standard_normal(6), np.array([[0, 1], [2, 3]])))
def reduceat_segments(a, idx):
    return np.add.reduceat(a, idx) * 2


@program((g(85).standard_normal((4, 5)), np.array([0, 2])), (g(86).standard_normal((3, 4)).astype(f32), np.array([1, 0, 3])))
def reduceat_axes_and_ufuncs(a, idx):
    return (np.maximum.reduceat(a, idx, axis=1), np.multiply.reduceat(a, idx[:2], axis=0),
            np.add.reduceat(a, idx, axis=-1, dtype=np.float64), np.minimum.reduceat(a.T, idx))


@program((np.arange(8, dtype=np.int64), np.array([0, 3, 5])), (np.arange(8, dtype=np.uint8), np.array([1, 7])))
def reduceat_into_out(a, idx):
    out = np.zeros(len(idx), a.dtype)
    np.bitwise_or.reduceat(a, idx, out=out)
    return out, np.logical_and.reduceat(a > 2, idx), np.subtract.reduceat(a, idx)


@program((g(87).standard_normal((4, 5)),), (g(88).standard_normal((3, 2)).astype(f32),), (np.zeros((0, 3)),),
         (np.array(1.5),))
def logaddexp_reduce_forms(z):
    if z.ndim == 0:
        return np.logaddexp.reduce(z, axis=None), np.logaddexp2.reduce(z, axis=())
    return (np.logaddexp.reduce(z, axis=-1), np.logaddexp.reduce(z, axis=None),
            np.logaddexp2.reduce(z, keepdims=True), np.logaddexp.reduce(z, axis=0, initial=-np.inf),
            np.logaddexp.accumulate(z, axis=0))


@program((np.arange(1, 13, dtype=np.int64).reshape(3, 4),), (np.arange(1, 7, dtype=np.uint8).reshape(2, 3),))
def integer_ufunc_reductions(a):
    return (np.bitwise_or.reduce(a, axis=1), np.bitwise_xor.reduce(a, axis=None), np.gcd.reduce(a, axis=0),
            np.lcm.reduce(a[:, :2], axis=1), np.subtract.reduce(a, axis=1), np.subtract.accumulate(a, axis=1),
            np.bitwise_and.accumulate(a), np.logical_xor.reduce(a > 3, axis=0),
            np.logical_or.accumulate(a > 5, axis=1))


@program((g(89).standard_normal((3, 4)), (0, 1)), (np.zeros(0), 0), (g(90).standard_normal(5), 0))
def reduce_errors_and_scalars(a, axis):
    r = np.subtract.reduce(a, axis=axis)     # several axes: not reorderable; empty: no identity
    return r, type(r).__name__, np.hypot.reduce(a, dtype=np.float32), np.divide.reduce(np.abs(a) + 1)


@program((np.zeros((4, 3)), np.array([0, 1, 1, 3]), g(91).standard_normal((4, 3))),
         (np.zeros((4, 3)), np.array([2, 2]), 1.5))
def at_into_an_argument(acc, rows, val):
    np.subtract.at(acc, rows, val)
    np.maximum.at(acc, (rows, 0), 0.25)
    return acc


@program((np.arange(10, dtype=np.int64), np.array([0, 0, 9, 3])), (np.arange(4, dtype=np.uint8), np.array([1, 1])),
         (np.zeros(3, np.int64), np.array([0, 5])))
def at_on_integers_and_errors(x, i):
    np.bitwise_or.at(x, i, 16)
    np.bitwise_xor.at(x, i[:1], 1)
    y = x * 2
    np.maximum.at(x, i, 2.5)   # a float into an int array: NumPy's casting error
    return x, y


@program((g(92).standard_normal((6, 4)), np.array([0, 2, 2, 5])),)
def at_through_views(x, i):
    v = x[:, 1]
    np.maximum.at(v, i, 10.0)
    np.minimum.at(x.T, (1, i), -10.0)
    y = np.zeros(3)
    np.maximum.at(y, np.array([0, 2, 2]), x[:3, 0])
    z = y * 2
    np.maximum.at(y, [1], 7.0)
    return x, v.sum(), y, z


test_program = program_test(PROGRAMS, BACKENDS, share=8)


def test_result_type_of_arrays_is_folded():
    """np.result_type(x, y, 1.0) and np.can_cast(x, ...) read only dtypes (NEP 50): they
    fold while capturing instead of breaking ('numpy.result_type has no kiln op')."""
    fn, calls = PROGRAMS["dtype_of_the_result_decided_up_front"]
    for args in calls:
        assert kiln.explain(fn)(*args).break_reasons == []


def _weighted(a, w=np.ones(3), *, k=1.0):
    return (a * w * k).sum()


def test_replaced_defaults_are_seen():
    """Giving a function new defaults (``f.__defaults__ = ...``, ``f.__kwdefaults__ = ...``)
    after it was compiled: the cache entry kept binding omitted arguments to the old ones."""
    old = _weighted.__defaults__, _weighted.__kwdefaults__
    try:
        for backend in ("cpp", "eager"):
            _weighted.__defaults__, _weighted.__kwdefaults__ = old[0], dict(old[1])
            compiled = kiln.compile(_weighted, backend=backend)
            x = np.arange(3.0)
            assert compiled(x) == _weighted(x)
            _weighted.__defaults__ = (np.full(3, 3.0),)
            assert compiled(x) == _weighted(x) == 9.0
            assert compiled(a=x) == 9.0
            _weighted.__kwdefaults__ = {"k": 2.0}
            assert compiled(x) == _weighted(x) == 18.0
            _weighted.__defaults__[0][:] = 5.0     # the same tuple, its array written
            assert compiled(x) == _weighted(x) == 30.0
    finally:
        _weighted.__defaults__, _weighted.__kwdefaults__ = old


def _log_ratio_ignoring_errors(x):
    y = x * 2
    with np.errstate(divide="ignore", invalid="warn"):   # ('ignore' alone: no break at all)
        r = np.log(np.abs(y)) / y
    return np.nan_to_num(r) + 1


def test_errstate_breaks_at_the_users_lines():
    """Leaving np.errstate was inlined into NumPy's own __exit__, and broke there: a break
    reported at numpy/_core/_ufunc_config.py ("attribute 'reset' of ContextVar ... is a
    descriptor") instead of the user's with statement."""
    x = np.arange(3.0)
    report = kiln.explain(_log_ratio_ignoring_errors)(x)
    assert report.break_reasons and all(b.filename == __file__ for b in report.break_reasons), \
        [(b.filename, b.lineno, b.reason) for b in report.break_reasons]
    for backend in ("cpp", "eager"):
        with np.errstate(divide="warn"):
            np.testing.assert_array_equal(kiln.compile(_log_ratio_ignoring_errors, backend=backend)(x),
                                          _log_ratio_ignoring_errors(x))
            assert np.geterr()["divide"] == "warn"
