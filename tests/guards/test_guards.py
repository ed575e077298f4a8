"""What recompiles and what must not; recompile limit; automatic dynamic dims."""
import threading
import warnings

import numpy as np
import pytest

import kiln

from .conftest import CountingBackend

THRESHOLD = 0.5


def compiled_with_counter(fn, **kwargs):
    backend = CountingBackend()
    return kiln.compile(fn, backend=backend, **kwargs), backend


def test_changing_a_float_argument_does_not_recompile():
    def sgd(w, g, lr):
        return w - lr * g
    f, backend = compiled_with_counter(sgd)
    w, g = np.ones(3), np.full(3, 2.0)
    for lr in (0.1, 0.01, 0.5, 1e-4):
        np.testing.assert_allclose(f(w, g, lr), sgd(w, g, lr))
    assert len(backend.graphs) == 1


def test_int_argument_in_arithmetic_is_a_runtime_value():
    def f(x, n):
        return x * n + n
    c, backend = compiled_with_counter(f)
    for n in (1, 2, 300):
        np.testing.assert_array_equal(c(np.arange(3), n), f(np.arange(3), n))
    assert len(backend.graphs) == 1


def test_scalar_deciding_a_branch_guards_the_decision():
    def f(x, lr):
        if lr > 0:
            return x * lr
        return x
    c, backend = compiled_with_counter(f)
    c(np.ones(2), 0.1)
    c(np.ones(2), 0.2)
    assert len(backend.graphs) == 1
    np.testing.assert_array_equal(c(np.ones(2), -1.0), np.ones(2))
    assert len(c.cache_entries) == 2


def test_scalar_used_as_shape_is_specialized():
    def f(x, n):
        return x.reshape(n, -1)
    c, backend = compiled_with_counter(f)
    assert c(np.ones(6), 2).shape == (2, 3)
    assert c(np.ones(6), 3).shape == (3, 2)
    assert len(backend.graphs) == 2


def test_changing_a_global_recompiles():
    global THRESHOLD

    def f(x):
        return np.maximum(x, THRESHOLD)
    c, backend = compiled_with_counter(f)
    x = np.linspace(0, 1, 5)
    np.testing.assert_array_equal(c(x), np.maximum(x, 0.5))
    THRESHOLD = 0.8
    try:
        np.testing.assert_array_equal(c(x), np.maximum(x, 0.8))
    finally:
        THRESHOLD = 0.5
    assert len(backend.graphs) == 2


def test_changing_a_closure_value_or_attribute_recompiles():
    scale = [2.0]

    class Cfg:
        alpha = 1.0

    cfg = Cfg()

    def make():
        s = scale[0]

        def f(x):
            return x * s + cfg.alpha
        return f
    f = make()
    c, backend = compiled_with_counter(f)
    c(np.ones(2))
    cfg.alpha = 3.0
    np.testing.assert_array_equal(c(np.ones(2)), np.full(2, 5.0))
    assert len(backend.graphs) == 2


@pytest.mark.parametrize("second", [
    np.ones((3, 4), np.float32),      # dtype
    np.ones((3, 4, 1)),               # ndim
    np.ones((5, 4)),                  # shape (dynamic=False)
    np.ones((3, 4)).tolist(),         # type
])
def test_array_metadata_changes_recompile(second):
    def f(x):
        return np.sin(x) if isinstance(x, np.ndarray) else x
    c, backend = compiled_with_counter(f, dynamic=False)
    c(np.ones((3, 4)))
    c(np.ones((3, 4)))
    result = c(second)
    expected = f(second)
    assert type(result) is type(expected)
    assert len(c.cache_entries) == 2


def test_recompile_limit_warns_once_naming_the_guard():
    def f(x, n):
        return x.reshape(n, -1)
    c, backend = compiled_with_counter(f)
    old = kiln.config.recompile_limit
    kiln.config.recompile_limit = 2
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for n in (1, 2, 3, 6, 3):
                assert c(np.ones(6), n).shape == (n, 6 // n)
    finally:
        kiln.config.recompile_limit = old
    assert len(backend.graphs) == 2
    assert len(c.cache_entries) == 2
    msgs = [str(w.message) for w in caught if "recompile_limit" in str(w.message)]
    assert len(msgs) == 1
    assert "n == " in msgs[0] and "(saw 3)" in msgs[0]


def _activation(x, kind):
    if kind == "relu":
        return np.maximum(x, 0.0)
    if kind == "tanh":
        return np.tanh(x)
    return x * 1.0


def test_calls_past_recompile_limit_check_each_entry_once(monkeypatch):
    # Past the limit a call that no entry takes runs uncompiled; it checked every entry
    # three times (the C dispatcher, the Python one, the miss under the lock): 20 values of
    # a mode string on 1000 elements ran at 4x NumPy's time
    monkeypatch.setattr(kiln.config, "recompile_limit", 2)
    c = kiln.compile(_activation, backend="eager")
    x = np.linspace(-1.0, 1.0, 1000)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for kind in ("relu", "tanh", "sigmoid"):
            np.testing.assert_array_equal(c(x, kind), _activation(x, kind))
    assert len([w for w in caught if "recompile_limit" in str(w.message)]) == 1
    counts = []
    for entry in c._entries:
        real = entry.check
        entry.check = (lambda real: lambda *a, **k: counts.append(1) or real(*a, **k))(real)
        entry.fast = None                        # (the mode's guard is checked in C too)
    c._entries = c._entries                      # published again with the counting checks
    before = c.calls_uncompiled
    for kind in ("swish", "gelu", "relu"):
        np.testing.assert_array_equal(c(x, kind), _activation(x, kind))
    assert c.calls_uncompiled == before + 2
    assert len(counts) == 3 * 2                  # each entry once a call (relu: the older one)


def test_automatic_dynamic_dims_after_size_only_recompile():
    def f(x, y):
        return (x * y).sum(axis=1) + x.shape[0]
    c, backend = compiled_with_counter(f)
    for n in (4, 5, 6, 7, 9):
        x, y = np.ones((n, 3)), np.full((n, 3), 2.0)
        np.testing.assert_array_equal(c(x, y), f(x, y))
    assert len(backend.graphs) == 2
    assert any("x.shape[0] >= 2" in g for g in c.records[1].guards)


def test_dynamic_dims_keep_size_one_static():
    def f(x):
        return x + 1
    c, backend = compiled_with_counter(f, dynamic=True)
    c(np.ones((4, 3)))
    c(np.ones((6, 3)))
    c(np.ones((1, 3)))
    assert len(backend.graphs) == 2


def test_dynamic_dim_flowing_into_a_shape_is_specialized():
    def f(x):
        return x.reshape(x.shape[0] * 2, -1)
    c, backend = compiled_with_counter(f, dynamic=True)
    assert c(np.ones((4, 6))).shape == (8, 3)
    assert c(np.ones((5, 6))).shape == (10, 3)
    assert len(backend.graphs) == 2


def test_dynamic_false_always_specializes():
    c, backend = compiled_with_counter(lambda x: x * 2, dynamic=False)
    for n in (3, 4, 5, 6):
        c(np.ones(n))
    assert len(backend.graphs) == 4


def test_reset_clears_caches():
    c, backend = compiled_with_counter(lambda x: x + 1)
    c(np.ones(2))
    kiln.reset()
    assert c.cache_entries == ()
    c(np.ones(2))
    assert len(backend.graphs) == 2


def test_four_threads_compile_once_and_agree():
    def f(x, lr):
        return np.tanh(x) * lr
    c, backend = compiled_with_counter(f)
    errors, barrier = [], threading.Barrier(4)

    def worker(i):
        try:
            barrier.wait()
            for j in range(50):
                x = np.full((8, 8), i + j / 50.0)
                np.testing.assert_allclose(c(x, 0.5 + i), f(x, 0.5 + i))
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)
    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(backend.graphs) == 1


def test_runtime_scalar_as_fill_value_stays_runtime_but_sizes_specialize():
    def fill(x, v):
        return np.full((2, 2), v) + x

    def count(x, n):
        return np.arange(n) + x[0]
    c, backend = compiled_with_counter(fill)
    for v in (1.0, 2.0, 3.5):
        np.testing.assert_array_equal(c(np.ones(2), v), fill(np.ones(2), v))
    assert len(backend.graphs) == 1
    c, backend = compiled_with_counter(count)
    for n in (2, 3):
        np.testing.assert_array_equal(c(np.ones(2), n), count(np.ones(2), n))
    assert len(backend.graphs) == 2


def test_identity_of_two_arguments_is_guarded():
    def f(x, y):
        return (x is y), x + y
    c, backend = compiled_with_counter(f)
    a = np.ones(3)
    assert c(a, a)[0] is True
    assert c(a, np.ones(3))[0] is False
    assert c(a, a)[0] is True
    assert len(backend.graphs) == 2


@pytest.mark.parametrize("fn, stays_dynamic", [
    (lambda x, w: (x @ w).sum(axis=1), True),          # batch dim follows through matmul
    (lambda x, w: x[:, 0] * 2, True),                   # indexing a static axis
    (lambda x, w: np.concatenate([x, x], axis=1), True),
    (lambda x, w: x[1:] + 1, True),                     # size n - 1: a run-time length
    (lambda x, w: x[:5] * 1, True),                     # a clamp: len(range(n)[:5])
    (lambda x, w: x.reshape(-1), True),                 # size 4n: an expression
])
def test_dynamic_dims_through_other_ops(fn, stays_dynamic):
    c, backend = compiled_with_counter(fn, dynamic=True)
    for n in (3, 4, 7):
        x, w = np.arange(n * 4.0).reshape(n, 4), np.ones((4, 2))
        expected = fn(x, w)
        got = c(x, w)
        assert got.shape == expected.shape
        np.testing.assert_array_equal(got, expected)
    assert len(backend.graphs) == (1 if stays_dynamic else 3)


def test_patching_a_numpy_function_recompiles(monkeypatch):
    def f(x):
        return np.sin(x) * np.pi
    compiled = kiln.compile(f, backend="cpp")
    x = np.arange(3.0)
    np.testing.assert_array_equal(compiled(x), f(x))
    monkeypatch.setattr(np, "sin", np.cos)   # a test double, as test suites do
    np.testing.assert_allclose(compiled(x), np.cos(x) * np.pi, rtol=1e-15)
    monkeypatch.undo()
    np.testing.assert_allclose(compiled(x), np.sin(x) * np.pi, rtol=1e-15)


def test_a_counter_attribute_is_read_at_run_time_after_it_changes():
    # self.steps += 1 (an optimizer's step count): the first change recompiles once, with
    # the attribute read on each call from then on, never one graph per value.
    class Model:
        def __init__(self):
            self.w, self.steps, self.lr = np.zeros(4), 0, 0.5

        def step(self, x):
            self.w -= self.lr / (1 + self.steps) * (self.w - x)
            self.steps += 1
            return self.w.sum()

    eager, model = Model(), Model()
    compiled = kiln.compile(model.step, backend="cpp")
    for i in range(12):
        x = np.arange(4.0) + i
        np.testing.assert_allclose(compiled(x), eager.step(x), rtol=1e-12)
    assert model.steps == eager.steps == 12
    np.testing.assert_allclose(model.w, eager.w, rtol=1e-12)
    assert len(compiled.records) == 2


def test_writing_into_an_argument_keeps_its_dims_dynamic():
    # x[0] = v and x[...] = f(x) write a new value of x with x's own shape: the batch dim
    # stays dynamic instead of one graph per size.
    def first_row(x):
        x[0] = 1.0
        return x

    def doubled(x):
        x[...] = x * 2
        return x

    for fn in (first_row, doubled):
        compiled, backend = compiled_with_counter(fn)
        for n in (3, 5, 7, 2, 9, 64, 4):
            a = np.arange(n * 2.0).reshape(n, 2)
            b = a.copy()
            np.testing.assert_array_equal(compiled(b), fn(a))
            np.testing.assert_array_equal(a, b)
        assert len(backend.graphs) == 2


def test_methods_read_through_an_instance_are_guarded():
    class C:
        def m(self, x):
            return x * 2

        @staticmethod
        def sm(x):
            return x + 1

        @classmethod
        def cm(cls, x):
            return x - 1

        @property
        def p(self):
            return 3.0

    def f(c, x):
        return c.m(x) + c.sm(x) + c.cm(x) + c.p

    c, x = C(), np.ones(2)
    compiled = kiln.compile(f, backend="eager")
    changes = [lambda: setattr(c, "m", lambda x: x + 100), lambda: delattr(c, "m"),
               lambda: setattr(C, "sm", staticmethod(lambda x: x * 10)),
               lambda: setattr(C, "cm", classmethod(lambda cls, x: x * 0)),
               lambda: setattr(C, "p", property(lambda self: 7.0))]
    np.testing.assert_array_equal(compiled(c, x), f(c, x))
    for change in changes:
        change()
        np.testing.assert_array_equal(compiled(c, x), f(c, x))


_REGISTRY = {f"mod{i}": float(i) for i in range(200)}   # a sys.modules-sized global dict


def _from_registry(x, name):
    scale = _REGISTRY.get(name, -1.0)
    if "mod3" in _REGISTRY:
        x = x + _REGISTRY["mod3"]
    return x * scale


def test_a_large_global_dict_read_by_key_guards_only_those_keys():
    # array-api-compat reads sys.modules.get("numpy") under every scipy function: the whole
    # key tuple was guarded (a thousand-key comparison per call: scipy.signal.welch ran 8x
    # slower compiled, savgol_filter 23x), and any import recompiled.
    c, backend = compiled_with_counter(_from_registry)
    x = np.arange(3.0)
    for name in ("mod5", "absent"):
        np.testing.assert_array_equal(c(x, name), _from_registry(x, name))
    guards = [str(g) for e in c.cache_entries for g in e.guards]
    assert not any("tuple(" in g for g in guards), guards
    _REGISTRY["added"] = 1.0   # a new key elsewhere: no recompile
    try:
        np.testing.assert_array_equal(c(x, "mod5"), _from_registry(x, "mod5"))
        assert len(backend.graphs) == 2
        _REGISTRY["mod5"] = 7.0   # a key read changes: recompiles
        np.testing.assert_array_equal(c(x, "mod5"), _from_registry(x, "mod5"))
        assert len(backend.graphs) == 3
        _REGISTRY["absent"] = 2.0   # a key read as absent appears
        np.testing.assert_array_equal(c(x, "absent"), _from_registry(x, "absent"))
    finally:
        del _REGISTRY["added"], _REGISTRY["absent"]
        _REGISTRY["mod5"] = 5.0


def _numpy_namespace(x):
    import sys
    xp = np
    if xp is sys.modules.get("numpy"):
        return x * 2.0
    return x


def test_identity_of_modules_is_captured(probe):
    compiled, _, _ = probe(_numpy_namespace, np.arange(3.0), graphs=1)
    assert not [r for r in compiled.records if r.graph_break is not None]


def _check_same(got, want):
    for a, b in zip(got, want):
        assert type(a) is type(b) and np.asarray(a).dtype == np.asarray(b).dtype
        np.testing.assert_allclose(a, b, rtol=1e-6)


@pytest.mark.parametrize("kind", [np.complex128, np.complex64, complex])
def test_complex_scalar_argument_is_a_runtime_value(kind):
    """A complex scalar (NumPy's or Python's) is guarded by type, its value passed at run
    time, as a float's is: changing it does not recompile, and the values and dtypes
    (NEP 50: a Python complex is weak) are NumPy's."""
    def fn(x, z):
        return x * z + z * 2.0, z * 3, abs(z) + x, np.exp(z) * x
    f, backend = compiled_with_counter(fn)
    x = np.random.default_rng(31).standard_normal(5).astype(np.float32)
    for z in (1 + 2j, 3 - 1j, -0.5 + 0.25j, 2 + 0j):
        _check_same(f(x, kind(z)), fn(x, kind(z)))
    assert len(backend.graphs) == 1
    assert kiln.explain(fn)(x, kind(1 + 1j)).graph_break_count == 0
    _check_same(kiln.compile(fn)(x, kind(2 - 3j)), fn(x, kind(2 - 3j)))


@pytest.mark.parametrize("kind", [np.complex128, np.complex64, complex])
def test_complex_scalar_after_a_graph_break_stays_compiled(kind):
    """The rest of a function after a break (a resume function) gets the complex scalar
    as an argument: it is captured there, not run as Python (npbench's contour_integral)."""
    def fn(x, z):
        kiln.graph_break()
        return x * z + 1.0, z * z
    explained = kiln.explain(fn)(np.ones(3), kind(1 + 2j))
    assert explained.graph_break_count == 1
    f, backend = compiled_with_counter(fn)
    x = np.random.default_rng(32).standard_normal(4)
    for z in (1 + 2j, 3 - 1j, 0.5j):
        _check_same(f(x, kind(z)), fn(x, kind(z)))
    assert len(backend.graphs) == 1   # the resume function's, once for every value


@pytest.mark.parametrize("first, then", [(0.0, -0.0), (-0.0, 0.0), (np.float64(-0.0), np.float64(0.0))])
def test_a_float_zero_the_graph_specialized_on_keeps_its_sign(first, then):
    # ``G['EPS'] == 0.0`` held for -0.0 (they compare equal), and the graph built for 0.0
    # gave inf where NumPy gives -inf
    ns = {"np": np, "EPS": first}
    exec("def f(x):\n    return 1.0 / (x * EPS)\n", ns)
    f, backend = compiled_with_counter(ns["f"])
    x = np.ones(2)
    with np.errstate(divide="ignore"):
        np.testing.assert_array_equal(f(x), ns["f"](x))
        ns["EPS"] = then
        np.testing.assert_array_equal(f(x), ns["f"](x))
    assert len(backend.graphs) == 2


def test_explaining_a_recompile_warns_nothing_numpy_would_not():
    # Explaining a miss tries every guard, not only those up to the first failure as the
    # entry does: brentq's guards on its secant steps (``fb / fa``), past a failed one,
    # computed on another call's values, which the function never divides ("invalid
    # value encountered in scalar divide" from the explainer)
    from tests.test_programs_real16 import brentq_on_a_helper_with_args as brentq
    compiled = kiln.compile(brentq, backend="eager")
    compiled(np.array([5.0, 5.0, 5.0, 105.0]), np.arange(1.0, 5.0), np.array([98.0]))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        roots, _ = compiled(np.array([3.0, 103.0]), np.array([0.5, 1.0]), np.array([99.5]))
    assert [str(w.message) for w in caught] == []
    np.testing.assert_allclose(roots, brentq(np.array([3.0, 103.0]), np.array([0.5, 1.0]),
                                             np.array([99.5]))[0])


def test_explaining_a_recompile_reads_no_item_of_a_defaultdict_with_other_keys():
    # The explainer tried ``type(busy[1])`` on a defaultdict whose keys guard had failed:
    # its ``__missing__`` inserted ``1: 0.0`` into the user's dict (real21's bank queue)
    from collections import defaultdict

    def totals(d, x):
        return d[0] * x + d[1] if 1 in d else d[0] * x

    compiled = kiln.compile(totals, backend="eager")
    compiled(defaultdict(float, {0: 2.0, 1: 3.0}), np.arange(3.0))
    d = defaultdict(float, {0: 2.0})
    np.testing.assert_array_equal(compiled(d, np.arange(3.0)), np.arange(3.0) * 2.0)
    assert dict(d) == {0: 2.0}
