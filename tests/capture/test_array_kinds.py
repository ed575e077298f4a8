"""Array kinds (kiln/array_kinds.py): NumPy arrays on the host, device arrays (CuPy's)
captured with their own guards, never read at capture, never guarded in C.

The device kind runs here on ``DeviceDouble`` (tests/capture/device_double.py: NumPy's
dispatch protocols, ``.device.id``, no ``__array__``, as CuPy); the eager backends run
its graphs through NumPy's protocols as a graph break runs the user's code. The same
programs on real CuPy arrays: tests/runtime/test_triton_cupy.py (needs a GPU)."""
import numpy as np
import pytest

import kiln
from kiln import array_kinds
from kiln.guards import fastcheck

from .device_double import KIND, XP, DeviceDouble

BACKENDS = ["eager", "aot_eager"]


def _get(value):
    if isinstance(value, tuple):
        return tuple(map(_get, value))
    return value.get() if isinstance(value, DeviceDouble) else value


def _same(got, want):
    assert type(got) is type(want)
    if isinstance(got, tuple):
        for g, w in zip(got, want):
            _same(g, w)
        return
    np.testing.assert_allclose(_get(got), _get(want), rtol=1e-12)
    if isinstance(want, DeviceDouble):
        assert got.dtype == want.dtype and got.shape == want.shape and got.device.id == want.device.id


def test_the_table():
    assert array_kinds.kind_of(np.zeros(3)) is array_kinds.NUMPY
    for other in [3.0, np.float64(1.0), [1.0], np.ma.ones(3), np.matrix([[1.0]])]:
        assert array_kinds.kind_of(other) is None     # subclasses are other types
    assert array_kinds.kind_of(DeviceDouble(np.ones(2))) is KIND
    assert array_kinds.reads_memory(np.ones(2)) and not array_kinds.reads_memory(DeviceDouble(np.ones(2)))


def test_cupy_is_recognised_by_name_without_importing_it():
    # cupy.ndarray is defined in cupy._core.core; kiln never imports CuPy to know it
    cls = type("ndarray", (), {"__module__": "cupy._core.core"})
    assert array_kinds.kind_of_type(cls) is array_kinds.CUPY
    assert array_kinds.CUPY.type_name == "cupy.ndarray" and not array_kinds.CUPY.c_guard


def test_numpy_guards_are_unchanged_and_checked_in_c():
    def f(x):
        return np.sin(x) + 1
    x = np.ones(4)
    guards = kiln.explain(f)(x).guards
    assert "type(x) is np.ndarray" in guards and not any("device" in g for g in guards)
    if fastcheck.module() is not None:
        cf = kiln.compile(f)
        cf(x)
        assert fastcheck.checked_in_c(f, cf.cache_entries[0].guards)


@pytest.mark.parametrize("backend", BACKENDS)
def test_device_arrays_are_graph_inputs_guarded_on_type_and_device(backend):
    def f(x, y):
        z = np.sin(x) * y + 1.0
        return z.sum(axis=0), np.maximum(z, 0.5)
    x = DeviceDouble(np.arange(12.0).reshape(3, 4))
    out = kiln.explain(f)(x, 2.0)
    assert out.graph_count == 1 and out.graph_break_count == 0
    assert "type(x) is DeviceDouble" in out.guards and "x.device.id == 0" in out.guards
    cf = kiln.compile(f, backend=backend)
    _same(cf(x, 2.0), f(x, 2.0))
    _same(cf(x, 3.0), f(x, 3.0))                       # a runtime scalar: no recompile
    assert len(cf.cache_entries) == 1
    # guarded in Python, never by fastcheck.c's reading of NumPy's struct
    assert cf.cache_entries[0].guards.c_specs is None
    x1 = DeviceDouble(np.ones((3, 4)), device=1)
    _same(cf(x1, 2.0), f(x1, 2.0))                     # another device: its own entry
    assert len(cf.cache_entries) == 2
    xn = np.ones((3, 4))
    _same(cf(xn, 2.0), f(xn, 2.0))                     # a NumPy array: its own entry
    assert len(cf.cache_entries) == 3


@pytest.mark.parametrize("backend", BACKENDS)
def test_types_seen_by_python_code_are_the_device_arrays(backend):
    def f(x):
        y = x * 2
        s = y.sum()        # CuPy: a 0-d array, not a NumPy scalar
        return isinstance(y, np.ndarray), type(s) is np.float64, s + 1
    x = DeviceDouble(np.arange(6.0))
    assert kiln.explain(f)(x).graph_break_count == 0
    _same(kiln.compile(f, backend=backend)(x), f(x))


def _raises_like_eager(f, *args, backend="aot_eager"):
    with pytest.raises(Exception) as eager:
        f(*args)
    with pytest.raises(type(eager.value)) as compiled:
        kiln.compile(f, backend=backend)(*args)
    assert str(compiled.value) == str(eager.value)


def test_mixing_numpy_and_device_arrays_raises_as_without_kiln():
    x = DeviceDouble(np.arange(4.0))
    _raises_like_eager(lambda x: x + np.ones(4), x)
    _raises_like_eager(lambda x: np.exp(x) * np.arange(4), x)


def test_implicit_copies_to_the_host_raise_as_without_kiln():
    x = DeviceDouble(np.arange(4.0))
    _raises_like_eager(lambda x: np.asarray(x) * 2, x)
    _raises_like_eager(lambda x: np.array([x[0], x[1]]) + 1, x)

    def iterate(x):
        total = 0.0
        for v in np.nditer(x):
            total += v
        return total
    _raises_like_eager(iterate, x)


@pytest.mark.parametrize("backend", BACKENDS)
def test_user_code_reading_values_runs_as_python_on_the_device_array(backend):
    def f(x):
        s = x.max().item()          # explicit: allowed on CuPy (a sync), a graph break here
        return np.tanh(x / s) * 2
    x = DeviceDouble(np.linspace(0.5, 2.0, 5))
    out = kiln.explain(f)(x)
    assert out.graph_break_count == 1 and "item" in out.break_reasons[0].reason
    _same(kiln.compile(f, backend=backend)(x), f(x))


@pytest.mark.parametrize("backend", BACKENDS)
def test_in_place_updates_of_device_arguments(backend):
    def f(x):
        x += 1.0           # (a CuPy array has no flags.writeable: nothing to guard)
        x[0] = 5.0
        return x * 2
    a, b = DeviceDouble(np.ones(3)), DeviceDouble(np.ones(3))
    _same(kiln.compile(f, backend=backend)(a), f(b))
    np.testing.assert_array_equal(a.get(), b.get())


def test_capture_reads_no_device_memory():
    # speculation (eigvals' dtype from the data) expects the op's default on a device array
    # and checks the result's dtype when the graph runs, without a copy to the host
    def f(x):
        return np.linalg.eigvals(x[:, :3] @ x[:, :3].T + 3 * np.eye(3))

    def g(x):
        t = 0.0
        for i in range(3):
            t += x[i, 0]      # a 0-d device array from the first step on, as on CuPy
        return t
    x = DeviceDouble(np.linspace(-1, 1, 12).reshape(3, 4))
    _raises_like_eager(f, x)   # np.eye is a NumPy array: CuPy raises, and so does kiln

    def h(x):
        return np.linalg.eigvals(x[:, :3] @ x[:, :3].T)
    for backend in BACKENDS:
        _same(kiln.compile(h, backend=backend)(x), h(x))
    for backend in BACKENDS:
        _same(kiln.compile(g, backend=backend)(x), g(x))


@pytest.mark.parametrize("backend", BACKENDS)
def test_one_device_array_passed_twice_and_written(backend):
    # aot's aliasing check sees device arrays too: the write through ``a`` is seen by ``b``
    def f(a, b):
        a += 1.0
        return b * 2
    x, y = DeviceDouble(np.ones(3)), DeviceDouble(np.ones(3))
    _same(kiln.compile(f, backend=backend)(x, x), f(y, y))
    np.testing.assert_array_equal(x.get(), y.get())


def _insert_two(x):
    return np.insert(x, [1, 3], [7.0, 8.0]) * 2   # constant arrays (the values, their places)


def _insert(x):
    return np.insert(x, 1, 9.0) - x.sum()   # a constant index array (where elements go)


def _diff_append(x):
    return np.diff(x, append=0.0)       # an array made from a Python float


@pytest.mark.parametrize("backend", BACKENDS + [lambda graph, example_inputs: graph])
@pytest.mark.parametrize("f", [_insert_two, _insert, _diff_append])
def test_graph_constants_are_copied_to_the_device_once(backend, f, monkeypatch):
    # CuPy refuses a NumPy operand, so a graph's constant arrays (those kiln's decompositions
    # make) go to the arguments' GPU, once per compiled graph, not once per call
    copies = []
    to_device = XP.asarray
    monkeypatch.setattr(XP, "asarray", lambda *a, **k: copies.append(1) or to_device(*a, **k))
    cf = kiln.compile(f, backend=backend)
    assert kiln.explain(f)(DeviceDouble(np.ones(5))).graph_break_count == 0
    with XP.cuda.Device(1):   # (CuPy computes on the current device: the user's GPU)
        for k in (1, 2, 3):
            _same(cf(DeviceDouble(np.arange(5.0) * k, device=1)),
                  f(DeviceDouble(np.arange(5.0) * k, device=1)))
            if k == 1:
                made = len(copies)
    assert made > 0 and len(copies) == made


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_array_made_from_a_runtime_scalar_on_a_gpu_runs_as_python(backend):
    # the scalar changes per call, so the array cannot be a constant: CuPy makes it
    def f(x, s):
        return np.diff(x, append=s)
    x = DeviceDouble(np.arange(4.0))
    cf = kiln.compile(f, backend=backend)
    for s in (0.0, 5.0):
        _same(cf(x, s), f(x, s))
    (brk,) = kiln.explain(f)(x, 1.0).break_reasons
    assert "run-time scalar" in brk.reason and "GPU" in brk.reason
