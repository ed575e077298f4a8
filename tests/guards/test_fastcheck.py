"""The cache-hit path in C (kiln/guards/fastcheck.c): the array guard and the dispatcher
give the same answers as the Python forms they replace."""
import gc
import os
import re
import subprocess
import sys
import weakref

import numpy as np
import pytest

import kiln
from kiln.guards import fastcheck

check = fastcheck.array_check()
pytestmark = pytest.mark.skipif(check is None, reason="the C helper does not build here")
F8 = np.dtype("float64")


@pytest.mark.parametrize("x, dtype, shape, expected", [
    (np.ones((4, 3)), F8, (4, 3), True),
    (np.ones((4, 3)), F8, (4, 4), False),
    (np.ones((4, 3)), F8, (4,), False),                       # ndim differs
    (np.ones((4, 3)), np.dtype("float32"), (4, 3), False),
    (np.ones((4, 3)), F8, (-1, 3), True),                     # dynamic dim: >= 2
    (np.ones((1, 3)), F8, (-1, 3), False),                    # sizes 0 and 1 specialize
    (np.ones((0, 3)), F8, (-1, 3), False),
    (np.float64(1.0), F8, (), False),                         # a NumPy scalar, not an array
    (np.array(2.0), F8, (), True),                            # 0-d array
    (np.ones(3).astype(">f8"), F8, (3,), False),              # same kind, other byte order
    (np.ones(3).astype(">f8"), np.dtype(">f8"), (3,), True),  # equal by value, not identity
    (np.ones(3, dtype="i4,f8"), np.dtype("i4,f8"), (3,), True),
    (np.ma.ones(3), F8, (3,), False),                         # a subclass is another type
    ([1.0, 2.0, 3.0], F8, (3,), False),
    (np.ones((4, 3))[:, ::2], F8, (4, 2), True),              # views: shape, not layout
])
def test_array_matches_like_the_python_guard(x, dtype, shape, expected):
    python = (type(x) is np.ndarray and x.dtype == dtype and x.ndim == len(shape)
              and all(n >= 2 if s < 0 else n == s for n, s in zip(x.shape, shape)))
    assert python is expected
    assert check(x, np.ndarray, dtype, shape) is expected


def test_array_matches_rejects_bad_calls():
    with pytest.raises(TypeError):
        check(np.ones(3), np.ndarray, F8, [3])


class _OtherArray:
    """An array type with NumPy's attributes and not its struct (as cupy.ndarray)."""
    ndim, shape, dtype = 1, (3,), F8


def test_only_numpy_arrays_have_their_fields_read_in_c():
    # A type match against any other type is refused, not read as NumPy's struct: a
    # cupy.ndarray is guarded in Python (kiln/array_kinds.py, GuardSet.add_array).
    with pytest.raises(TypeError, match="numpy.ndarray only"):
        check(_OtherArray(), _OtherArray, F8, (3,))
    with pytest.raises(TypeError, match="numpy.ndarray only"):
        check([1.0, 2.0, 3.0], list, F8, (3,))
    assert check(_OtherArray(), np.ndarray, F8, (3,)) is False
    mod = fastcheck.module()
    bad = ((0, 0, None, (), 2, _OtherArray, F8, (3,)),)      # an 'array' spec on another type
    with pytest.raises(ValueError, match="numpy.ndarray"):
        mod.SimpleEntry(lambda x: x, 1, bad, None, (), (0,), True, object())


def _dispatcher():
    return fastcheck.dispatcher_base()


def test_compiled_functions_dispatch_in_c_and_answer_like_numpy():
    def f(x, scale=2.0, *, shift=0.5):
        return np.sin(x) * scale + shift
    cf = kiln.compile(f)
    assert isinstance(cf, _dispatcher()) and isinstance(cf, kiln.api.CompiledFunction)
    x = np.linspace(0, 1, 7)
    for call in [(x,), (x, 3.0), (x,), (x.astype(np.float32),)]:
        np.testing.assert_allclose(cf(*call), f(*call), rtol=1e-6)
    np.testing.assert_allclose(cf(x, shift=1.5), f(x, shift=1.5))
    np.testing.assert_allclose(cf(x=x, scale=1.0), f(x=x, scale=1.0))
    assert len(cf.cache_entries) == 2                         # float64 and float32
    with pytest.raises(TypeError) as caught:                  # binding errors as Python's
        cf(x, 1.0, 2.0)
    with pytest.raises(TypeError) as expected:
        f(x, 1.0, 2.0)
    assert str(caught.value) == str(expected.value)


def test_user_exceptions_come_out_unchanged_through_the_c_dispatcher():
    class Bad(Exception):
        pass

    def f(x, n):
        if n > 2:
            raise Bad(f"n={n}")
        return x + n
    cf = kiln.compile(f)
    x = np.ones(3)
    np.testing.assert_array_equal(cf(x, 1), x + 1)
    with pytest.raises(Bad, match="n=5"):
        cf(x, 5)
    np.testing.assert_array_equal(cf(x, 1), x + 1)


def test_methods_and_graph_breaks_through_the_c_dispatcher():
    class Model:
        def __init__(self):
            self.w = np.arange(3.0)

        @kiln.compile
        def forward(self, x):
            y = x * self.w
            print(end="")                                     # a graph break
            return y.sum()
    m = Model()
    x = np.ones(3)
    assert m.forward(x) == 3.0 and m.forward(x) == 3.0


class _Layer:
    def __init__(self, w, b):
        self.w, self.b = w, b

    def forward(self, x, scale=1.0):
        return np.tanh(self.w @ x + self.b) * scale

    @kiln.compile
    def compiled(self, x, scale=1.0):
        return np.tanh(self.w @ x + self.b) * scale


def test_a_compiled_bound_method_is_dispatched_in_c():
    # kiln.compile(obj.method): the C dispatcher prepends the object (it sent every call
    # to the Python dispatcher: 0.5x NumPy's time on a small matmul)
    rng = np.random.default_rng(7)
    layer = _Layer(rng.standard_normal((4, 4)), rng.standard_normal(4))
    cf = kiln.compile(layer.forward)
    x = rng.standard_normal(4)
    for _ in range(2):
        np.testing.assert_allclose(cf(x), layer.forward(x), rtol=1e-12)
    assert type(cf._kiln_checks) is tuple and cf._kiln_bound is layer
    np.testing.assert_allclose(cf(x, 2.0), layer.forward(x, 2.0), rtol=1e-12)
    np.testing.assert_allclose(cf(x=x, scale=3.0), layer.forward(x=x, scale=3.0), rtol=1e-12)
    layer.w = rng.standard_normal((6, 4))                  # an attribute the guards read
    layer.b = rng.standard_normal(6)
    np.testing.assert_allclose(cf(x), layer.forward(x), rtol=1e-12)
    layer.w = layer.w.astype(np.float32)
    got = cf(x)
    assert got.dtype == layer.forward(x).dtype
    np.testing.assert_allclose(got, layer.forward(x), rtol=1e-6)
    with pytest.raises(TypeError) as want:
        layer.forward()
    with pytest.raises(TypeError) as info:
        cf()
    assert str(info.value) == str(want.value)
    with pytest.raises(ValueError):                          # NumPy's own error
        cf(np.ones(5))


def test_a_method_compiled_on_its_class_is_a_method_descriptor():
    # obj.compiled is functools.partial(compiled, obj) (made in C); obj.compiled(x) calls
    # compiled(obj, x) with no partial made (Py_TPFLAGS_METHOD_DESCRIPTOR), Cls.compiled
    # is the compiled function itself
    import functools
    rng = np.random.default_rng(8)
    layer = _Layer(rng.standard_normal((3, 3)), rng.standard_normal(3))
    x = rng.standard_normal(3)
    cf = _Layer.__dict__["compiled"]
    assert _Layer.compiled is cf
    bound = layer.compiled
    assert type(bound) is functools.partial and bound.func is cf and bound.args == (layer,)
    assert type(cf).__flags__ & (1 << 17)                   # Py_TPFLAGS_METHOD_DESCRIPTOR
    for _ in range(2):
        np.testing.assert_allclose(layer.compiled(x), layer.forward(x), rtol=1e-12)
        np.testing.assert_allclose(bound(x, 0.5), layer.forward(x, 0.5), rtol=1e-12)
        np.testing.assert_allclose(_Layer.compiled(layer, x), layer.forward(x), rtol=1e-12)
    layer.compiled = lambda x: "shadowed"                   # an instance attribute wins
    assert layer.compiled(x) == "shadowed"


def test_a_compiled_function_is_freed_after_use():
    def f(x):
        return x * 2
    cf = kiln.compile(f)
    cf(np.ones(3))
    ref = weakref.ref(cf)
    del cf
    gc.collect()
    assert ref() is None


def test_without_the_c_helper_the_python_path_gives_the_same_results(tmp_path):
    code = ("import numpy as np, kiln\n"
            "from kiln.guards import fastcheck\n"
            "assert fastcheck.module() is None\n"
            "f = kiln.compile(lambda x, y: np.exp(x) - y)\n"
            "x = np.linspace(0, 1, 5)\n"
            "print(type(f).__mro__[1].__name__, f(x, 1.0).round(6).tolist(), f(x, 2).round(6).tolist())\n"
            "print(f.cache_entries[0].check.__kiln_source__)\n")
    env = dict(os.environ, KILN_FAST_GUARDS="0", KILN_CACHE_DIR=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True).stdout
    x = np.linspace(0, 1, 5)
    assert out.splitlines()[0] == (f"object {(np.exp(x) - 1.0).round(6).tolist()} "
                                   f"{(np.exp(x) - 2).round(6).tolist()}")
    assert "array_matches" not in out and "x.shape == (5,)" in out


def test_simple_entries_run_in_c_and_fall_back_for_other_calls():
    def f(x, y, scale=2.0):
        return x * scale + y, y
    cf = kiln.compile(f)
    x, y = np.arange(6.0).reshape(2, 3), np.ones(3)
    for call, kw in [((x, y, 3.0), {}), ((x, y, 3.0), {}), ((x, y), {}), ((x,), {"y": y}),
                     ((x, y, 1.5), {}), ((x[:1], y, 3.0), {}), ((x, y.astype(np.float32), 3.0), {})]:
        got, want = cf(*call, **kw), f(*call, **kw)
        assert type(got) is tuple and len(got) == 2
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-6)
            assert g.dtype == w.dtype and g.shape == w.shape
        assert got[1] is (call[1] if len(call) > 1 else kw["y"])  # a parameter comes back itself
    assert any(type(e.fast).__name__ == "SimpleEntry" for e in cf.cache_entries)
    # defaults and keywords bind in C too (the Python entry's frame cost ~130 ns a call)
    entry_frames = []
    sys.setprofile(lambda frame, event, arg: event == "call" and frame.f_code.co_filename.startswith("<kiln")
                   and entry_frames.append(frame.f_code.co_filename))
    try:
        bound = [cf(x, y), cf(x, y=y), cf(y=y, x=x, scale=3.0), cf(x, y, scale=1.5)]
    finally:
        sys.setprofile(None)
    assert entry_frames == []
    for got, (args, kw) in zip(bound, [((x, y), {}), ((x,), {"y": y}), ((), {"y": y, "x": x, "scale": 3.0}),
                                        ((x, y), {"scale": 1.5})]):
        np.testing.assert_array_equal(got[0], f(*args, **kw)[0])


@pytest.mark.parametrize("args, kw", [((), {}), ((1, 2, 3, 4), {}), ((1,), {"x": 1}), ((1,), {"w": 2}),
                                      ((), {"y": 1.0})])
def test_calls_a_simple_entry_cannot_bind_raise_as_python(args, kw):
    def g(x, /, y=2.0, z=3.0):
        return x * y + z
    cf = kiln.compile(g, backend="eager")
    cf(np.ones(2))
    assert type(cf.cache_entries[0].fast).__name__ == "SimpleEntry"
    with pytest.raises(TypeError) as want:
        g(*args, **kw)
    with pytest.raises(TypeError, match=re.escape(str(want.value))):
        cf(*args, **kw)


def test_a_simple_entry_misses_like_its_guards():
    def f(x):
        return np.cos(x)
    cf = kiln.compile(f)
    x = np.linspace(0, 1, 8)
    cf(x)
    fast = cf.cache_entries[0].fast
    assert fast is not None
    miss = kiln.api.MISS
    assert fast(np.linspace(0, 1, 9)) is miss
    assert fast(x.astype(np.float32)) is miss
    assert fast(list(x)) is miss
    assert fast(np.ma.asarray(x)) is miss
    np.testing.assert_allclose(fast(x), np.cos(x))
    np.testing.assert_allclose(fast(x=x), np.cos(x))        # a keyword, bound in C


def test_errors_raised_in_a_simple_entry_graph_come_out_unchanged():
    def f(a):
        return np.linalg.inv(a) + 1.0
    cf = kiln.compile(f)
    a = np.eye(3)
    np.testing.assert_allclose(cf(a), f(a))
    with pytest.raises(np.linalg.LinAlgError):
        cf(np.zeros((3, 3)))


def test_an_entry_the_cost_model_runs_as_python_is_checked_in_c(monkeypatch):
    from kiln.config import config
    monkeypatch.setattr(config, "cost_model", True)

    def f(x, y):
        return x - y
    cf = kiln.compile(f)
    x, y = np.arange(3.0), np.ones(3)
    np.testing.assert_array_equal(cf(x, y), f(x, y))
    entry = cf.cache_entries[0]
    if entry.graph is not None:
        pytest.skip("the cost model compiled this graph")
    assert type(entry.fast).__name__ == "SimpleEntry"
    np.testing.assert_array_equal(entry.fast(x, y), f(x, y))
    assert entry.fast(x, 1.0) is kiln.api.MISS                 # y's type is guarded
    np.testing.assert_array_equal(cf(x, y=y), f(x, y=y))


class _Box:
    pass


def test_an_entry_with_a_python_body_checks_its_guards_in_c():
    # a scalar computed from arguments, an attribute store replayed: the body is Python,
    # its guards are checked in C first (the Python entry answers keywords and defaults)
    def f(x, box, a, b=2.0):
        box.last = a
        return np.cos(x) * (a / b)
    cf = kiln.compile(f)
    x, box = np.linspace(0, 1, 8), _Box()
    np.testing.assert_allclose(cf(x, box, 3.0, 4.0), f(x, _Box(), 3.0, 4.0))
    entry = cf.cache_entries[0]
    assert type(entry.fast).__name__ == "SimpleEntry" and entry.fast.python_entry is entry.check
    np.testing.assert_allclose(entry.fast(x, box, 1.0, 8.0), np.cos(x) / 8.0)
    assert box.last == 1.0
    assert entry.fast(x.astype(np.float32), box, 1.0, 8.0) is kiln.api.MISS
    assert entry.fast(x, box, 1, 8.0) is kiln.api.MISS         # a's type is guarded
    np.testing.assert_allclose(entry.fast(x, box, a=5.0), np.cos(x) * 2.5)   # the Python entry
    assert box.last == 5.0
    with pytest.raises(ZeroDivisionError):                      # the user's own error
        cf(x, box, 7.0, 0.0)
    assert box.last == 7.0                                      # stored before it, as in Python


def test_a_builtin_not_shadowed_is_checked_in_c():
    # `int`, `abs`, `range` leave "'int' not in G" guards; they kept the entry out of C
    # (4x the call on a small function). A global of that name defined later must miss.
    ns = {"np": np}
    exec("def f(x):\n    return abs(x).astype(int) + 1\n", ns)
    f = ns["f"]
    cf = kiln.compile(f)
    x = np.linspace(-3.0, 3.0, 7)
    np.testing.assert_array_equal(cf(x), f(x))
    entry = cf.cache_entries[0]
    assert type(entry.fast).__name__ == "SimpleEntry"
    np.testing.assert_array_equal(entry.fast(x), f(x))
    ns["int"] = np.float32            # now `int` in f means the global
    assert entry.fast(x) is kiln.api.MISS
    got, want = cf(x), f(x)
    assert got.dtype == want.dtype == np.float32
    np.testing.assert_array_equal(got, want)
    del ns["int"]
    assert cf(x).dtype == np.int64


def test_a_layout_keyed_graph_keeps_its_short_path_and_checks_layouts():
    # reshape of an input is a view or a copy as the input's layout says, so the graph's
    # variants are keyed by layout; the short path of the first must not serve another.
    def f(x):
        y = x.reshape(-1)
        y[0] = 7.0
        return y * 2.0, x.sum()

    cf = kiln.compile(f)
    base = np.arange(12.0).reshape(3, 4)
    cf(base.copy())
    aot = cf.cache_entries[0].check.__globals__["_kiln_graph"]
    assert aot.layout_inputs == (0,) and aot._plain is not None   # the short path is kept
    for make in (np.copy, lambda a: np.asfortranarray(a), lambda a: a.copy()[:, ::2],
                 np.copy, lambda a: a.T.copy().T):
        a, b = make(base), make(base)
        got, want = cf(a), f(b)
        np.testing.assert_array_equal(got[0], want[0])
        assert got[1] == want[1]
        np.testing.assert_array_equal(a, b)          # written through the view, or not


_BASE = np.arange(24.0)
_VIEWS = [_BASE[:6], _BASE[6:], _BASE[5:9], _BASE[::2], _BASE[1::2], _BASE[::-1], _BASE[:0],
          _BASE.reshape(4, 6)[:, 0], _BASE.reshape(4, 6)[:, 5], _BASE.reshape(4, 6).T,
          _BASE.view(np.int8)[3:9], np.zeros(3), np.zeros((2, 0)), np.broadcast_to(_BASE[:1], (5, 3))]


@pytest.mark.skipif(fastcheck.module() is None, reason="the C helper is not built")
@pytest.mark.parametrize("i", range(len(_VIEWS)))
def test_any_overlap_is_numpys_may_share_memory(i):
    # aot checks a call's distinct array inputs for overlap on every call (aot/runtime.py)
    f = fastcheck.overlap_check()
    for j, other in enumerate(_VIEWS):
        if j != i:
            assert f((_VIEWS[i], other)) is bool(np.may_share_memory(_VIEWS[i], other)), (i, j)
    assert f(tuple(v for k, v in enumerate(_VIEWS) if k != i and v.size == 0) + (_VIEWS[i],)) is False
    assert f((_VIEWS[i], [1.0])) is None      # not an ndarray: NumPy decides


class _Scaled:
    def __init__(self, c):
        self.c = c

    def apply(self, x):
        return x * self.c


@pytest.mark.parametrize("c, others", [
    (3.0, [4.0, 3, True, -0.0, float("nan"), float("inf")]),   # 3 == 3.0: its type is guarded
    (3, [4, 3.0, True, 2 ** 70]),
    (1, [True, 1.0, 0]),
    (0.0, [-0.0, 0, False, float("nan")]),                      # 1 / -0.0 is -inf
    (-0.0, [0.0, 0, -1e-300]),
    (float("inf"), [float("-inf"), float("nan"), 1e300]),
    ("mode", ["other", "Mode"]),
    (None, [0, False, "None"]),
    (True, [1, 1.0, False]),
])
def test_a_constant_specialized_on_is_checked_in_c(c, others):
    # ``self.c == 3.0`` (a float attribute the graph specialized on) kept the entry in
    # Python (a method ``x * self.c`` on 1 element ran as Python, 0.9x NumPy); checked in
    # C it compiles (1.9x). Every other value must miss and recompile, as in Python.
    def f(x, obj):
        if obj.c is None or isinstance(obj.c, str):
            return x + 1.0 if obj.c == "mode" else x - 1.0
        return x * obj.c
    cf = kiln.compile(f, backend="eager")
    x = np.linspace(1, 2, 5)
    np.testing.assert_array_equal(cf(x, _Scaled(c)), f(x, _Scaled(c)))
    entry = cf.cache_entries[0]
    assert type(entry.fast).__name__ == "SimpleEntry"
    assert any(kind in ("equals", "id") and value is c for _, kind, value, *_ in entry.guards.c_specs)
    assert entry.fast(x, _Scaled(c)) is not kiln.api.MISS
    if isinstance(c, str):      # equal, not the same object
        assert entry.fast(x, _Scaled("".join(["mo", "de"]))) is not kiln.api.MISS
    for other in others:
        python = entry.check(x, _Scaled(other))
        assert (entry.fast(x, _Scaled(other)) is kiln.api.MISS) is (python is kiln.api.MISS) is True, other
        got, want = cf(x, _Scaled(other)), f(x, _Scaled(other))
        np.testing.assert_array_equal(got, want)
        assert np.array_equal(np.signbit(got), np.signbit(want))


def test_a_nan_constant_stays_checked_in_python():
    cf = kiln.compile(lambda x, obj: x * obj.c, backend="eager")
    x = np.ones(3)
    np.testing.assert_array_equal(cf(x, _Scaled(float("nan"))), x * float("nan"))
    assert cf.cache_entries[0].guards.c_specs is None
    np.testing.assert_array_equal(cf(x, _Scaled(2.0)), x * 2.0)
    mod = fastcheck.module()
    with pytest.raises(ValueError, match="int, float"):
        mod.SimpleEntry(lambda x: x, 1, ((0, 0, None, (), 5, float("nan"), None, None),), None, (),
                        (0,), True, object())


def test_a_graph_that_may_raise_is_called_from_c_and_its_error_keeps_the_note():
    """An entry whose graph may raise (a[i] out of range) adds a note naming the user's
    line to the exception: the SimpleEntry adds it in C, so the graph is called from C
    with no Python entry body in between (count_leading_pos, a while loop over a[i], was
    1.5x NumPy's time through that body and the wrapper and launcher behind it)."""
    def f(a, i):
        return a[i] * 2 + a
    cf = kiln.compile(f, backend="cpp")
    a = np.arange(5.0)
    cf(a, 1)
    entry = cf.cache_entries[0]
    files = []
    sys.setprofile(lambda frame, event, arg: files.append(frame.f_code.co_filename) if event == "call" else None)
    try:
        got = entry.fast(a, 2)
    finally:
        sys.setprofile(None)
    np.testing.assert_array_equal(got, f(a, 2))
    assert files and not any("entry" in name for name in files), files
    with pytest.raises(IndexError) as want:
        f(a, 7)
    with pytest.raises(IndexError) as caught:
        cf(a, 7)
    assert str(caught.value) == str(want.value) and len(cf.cache_entries) == 1
    assert any("return a[i] * 2 + a" in n and f"{__file__}:" in n for n in caught.value.__notes__)


def test_a_module_attribute_guard_reads_the_module_and_misses_when_it_changes():
    # G['m'].scale is sin: read from the module's dict in C (not through its getattr); a
    # name the dict lacks is the module's __getattr__'s, and either changing misses
    import types
    mod = types.ModuleType("kiln_guarded_module")
    mod.scale = np.sin

    def lazy(name):
        if name == "lazy":
            return np.cos
        raise AttributeError(name)
    mod.__getattr__ = lazy
    ns = {"np": np, "m": mod}
    exec("def f(x):\n    return m.scale(x) + m.lazy(x)\n", ns)
    f = ns["f"]
    cf = kiln.compile(f)
    x = np.linspace(0, 1, 8)
    np.testing.assert_allclose(cf(x), f(x))
    entry = cf.cache_entries[0]
    assert type(entry.fast).__name__ == "SimpleEntry"
    assert any("G['m'].scale is" in g for g in kiln.explain(f)(x).guards)
    np.testing.assert_allclose(entry.fast(x), np.sin(x) + np.cos(x))
    mod.scale = np.tanh
    assert entry.fast(x) is kiln.api.MISS
    np.testing.assert_allclose(cf(x), np.tanh(x) + np.cos(x))
    mod.lazy = np.exp                     # now in the dict: found before __getattr__
    np.testing.assert_allclose(cf(x), np.tanh(x) + np.exp(x))
    del mod.lazy
    np.testing.assert_allclose(cf(x), np.tanh(x) + np.cos(x))
    # G['m'] is mod pins the root G['m'].scale starts from (no second lookup): another
    # module under that name misses on the first guard, whatever its attributes
    other = types.ModuleType("kiln_other_module")
    other.scale, other.lazy = np.tanh, np.exp
    ns["m"] = other
    assert all(e.fast(x) is kiln.api.MISS for e in cf.cache_entries if e.fast is not None)
    np.testing.assert_allclose(cf(x), np.tanh(x) + np.exp(x))
    ns["m"] = mod
    np.testing.assert_allclose(cf(x), np.tanh(x) + np.cos(x))
