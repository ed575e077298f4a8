"""A wrapper whose call only allocates, launches kernels and returns (lowering/wrapper.py
``_fast_plan``) runs in C (fast_call.c ``FastCall``); it must answer exactly as the Python
``call`` it stands for, and hand every other case to it: another layout (a new variant),
NumPy's error mode set to raise (the graph run by NumPy), another argument count."""
import numpy as np
import pytest

import kiln
from kiln import config
from kiln.ir import trace
from kiln.ops import F, TensorMeta
from kiln.runtime.backend import compile_graph
from kiln.runtime.launch import module


def _compiled(fn, metas, names, example):
    return compile_graph(trace(fn, metas, names), example)


needs_launcher = pytest.mark.skipif(module() is None, reason="the launch extension does not build")


@needs_launcher
def test_small_pointwise_graph_runs_as_data():
    call = _compiled(lambda x, a: F.add(F.multiply(x, a), 1.0), [TensorMeta((3,), np.float64), 0.5],
                     ["x", "a"], [np.ones(3), 0.5])
    assert type(call).__name__ == "FastCall"
    assert "_fast_plan" in call.kiln_artifact.wrapper
    x = np.array([1.0, -2.0, 3.5])
    (out,) = call(x, 0.25)
    np.testing.assert_array_equal(out, x * 0.25 + 1.0)
    (again,) = call(x, 0.25)
    assert again is not out and not np.shares_memory(again, out)   # a fresh array per call
    (same,) = call.python_call(x, 0.25)
    np.testing.assert_array_equal(same, out)


@needs_launcher
def test_other_layouts_and_error_modes_go_to_the_python_call():
    call = _compiled(lambda x: F.multiply(F.exp(x), 2.0), [TensorMeta((4,), np.float64)], ["x"],
                     [np.ones(4)])
    assert type(call).__name__ == "FastCall"
    base = np.array([1.0, 2.0, 800.0, 4.0, 5.0, 6.0, 7.0, 8.0])
    strided = base[::2]
    (out,) = call(strided)   # other strides: a variant of its own, same answer
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(out, np.exp(strided) * 2.0)
    with np.errstate(over="raise"), pytest.raises(FloatingPointError):
        call(strided.copy())
    with pytest.raises(TypeError):
        call()


@needs_launcher
def test_outputs_that_are_inputs_and_several_outputs():
    call = _compiled(lambda x, y: (F.add(x, y), x, F.negative(y)),
                     [TensorMeta((2, 3), np.float32), TensorMeta((2, 3), np.float32)], ["x", "y"],
                     [np.ones((2, 3), np.float32)] * 2)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    y = np.full((2, 3), 0.5, np.float32)
    got = call(x, y)
    want = call.python_call(x, y) if type(call).__name__ == "FastCall" else got
    assert len(got) == 3 and got[1] is x
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
        assert g.dtype == w.dtype


@needs_launcher
def test_malformed_plans_are_refused():
    from kiln.cext import shipped_extension
    from kiln.runtime import launch
    m = shipped_extension(launch._FAST_CALL_SOURCE, "_kiln_fast_call_", "fast_call", numpy_api=True)
    with pytest.raises(ValueError):
        m.FastCall(1, print, print, None, (), (), ((print, ((0, 5),)),), ())
    with pytest.raises(ValueError):
        m.FastCall(1, print, print, None, (), (), (), ((1, 0),))


@needs_launcher
def test_a_graph_with_more_inputs_than_fast_call_holds_keeps_the_python_call():
    """FastCall holds 64 inputs: a graph over a long list's items (``for p in pts: out =
    out + x * p``) raised "FastCall: too many inputs or allocations" to the caller."""
    n = 100
    metas = [TensorMeta((3,), np.float64)] + [0.5] * n

    def fn(x, *scalars):
        out = F.multiply(x, scalars[0])
        for s in scalars[1:]:
            out = F.add(out, F.multiply(x, s))
        return out
    values = [float(v) for v in range(n)]
    call = _compiled(fn, metas, ["x"] + [f"p{i}" for i in range(n)], [np.ones(3)] + values)
    assert type(call).__name__ != "FastCall"
    x = np.array([1.0, -2.0, 3.5])
    (out,) = call(x, *values)
    np.testing.assert_allclose(out, x * sum(values))


@needs_launcher
def test_a_kernel_with_more_arguments_than_fast_call_holds_keeps_the_python_call(monkeypatch):
    """np.array of a list of 96 NumPy scalars: one kernel launch takes each item, more than
    FastCall's 64 (NumPy's test_umath test_memoverlap_accumulate_cmp); the call raised
    "FastCall: malformed arguments or outputs"."""
    items = [np.int32(i % 3) for i in range(96)]
    f = kiln.compile(lambda xs: np.array(xs, dtype=np.uint8), backend="cpp")
    monkeypatch.setattr(config, "cost_model", False)
    out = f(items)
    expect = np.array(items, dtype=np.uint8)
    assert out.dtype == expect.dtype
    np.testing.assert_array_equal(out, expect)


def test_a_result_of_more_dimensions_than_fast_call_holds_keeps_the_python_call(monkeypatch):
    """FastCall allocates results of up to 32 dimensions and SimpleEntry's array guards
    check as many; NumPy allows 64 (test_array_coercion TestNested: np.array of a list
    nested 64 deep). A kernel making a 40-dimensional result raised "FastCall: an
    allocation is (shape, dtype) ...", a 40-dimensional argument "SimpleEntry: an array
    guard's shape is a short tuple"."""
    f = kiln.compile(lambda x: x * 2 + 1, backend="cpp")
    monkeypatch.setattr(config, "cost_model", False)
    for ndim in (32, 40, 64):
        x = np.arange(3.0).reshape((1,) * (ndim - 1) + (3,))
        np.testing.assert_array_equal(f(x), x * 2 + 1)


@needs_launcher
@pytest.mark.parametrize("shape, axes", [((5, 2), (1, 0)), ((5, 4, 3), (2, 0, 1))])
def test_results_in_another_axis_order_run_as_data(shape, axes):
    """``a.T + b.T`` gives an F-ordered result as NumPy does: the wrapper allocated it as
    ``np.empty(...).transpose(...)``, which FastCall did not make, so the call stayed
    Python (2x5 float64: 0.66x NumPy's time; now 1.6x). FastCall allocates it with the
    result's strides: same strides, an array owning its data, fresh each call."""
    base = np.arange(float(np.prod(shape))).reshape(shape)
    a, b = base.transpose(axes), (base * 0.5 + 1.0).transpose(axes)
    call = _compiled(lambda x, y: F.add(x, y), [TensorMeta(a.shape, np.float64)] * 2, ["x", "y"],
                     [a, b])
    assert type(call).__name__ == "FastCall"
    (out,) = call(a, b)
    want = a + b
    np.testing.assert_array_equal(out, want)
    assert out.strides == want.strides and out.flags.owndata and out.flags.writeable
    (again,) = call(a, b)
    assert not np.shares_memory(again, out)
    (same,) = call.python_call(a, b)
    assert same.strides == out.strides


@needs_launcher
def test_an_allocation_with_strides_of_the_wrong_length_is_refused():
    from kiln.cext import shipped_extension
    from kiln.runtime import launch
    m = shipped_extension(launch._FAST_CALL_SOURCE, "_kiln_fast_call_", "fast_call", numpy_api=True)
    with pytest.raises(ValueError):
        m.FastCall(0, print, print, None, (), (((2, 3), np.dtype(np.float64), (8,)),), (), ())
