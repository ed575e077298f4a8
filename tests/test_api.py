"""The public entry points: kiln.compile's forms and options, backends, pickling."""
import functools
import pickle

import numpy as np
import pytest

import kiln


@pytest.fixture(autouse=True)
def _fresh():
    kiln.reset()
    yield


def square_plus(x, c=1.0):
    """Docstring kept."""
    return x * x + c


def test_bare_and_parametrized_decorator():
    f = kiln.compile(square_plus)
    g = kiln.compile(backend="eager", fullgraph=True, dynamic=False)(square_plus)
    x = np.arange(3.0)
    np.testing.assert_array_equal(f(x), x * x + 1)
    np.testing.assert_array_equal(g(x, c=2.0), x * x + 2)
    assert f.__name__ == "square_plus" and f.__doc__ == "Docstring kept."
    assert f.__wrapped__ is square_plus


def test_backend_callable_gets_graph_and_example_inputs_once_per_graph():
    seen = []

    def backend(graph, example_inputs):
        seen.append((graph, example_inputs))
        return graph
    f = kiln.compile(square_plus, backend=backend)
    x = np.arange(3.0)
    for c in (1.0, 2.0, 3.0):
        np.testing.assert_array_equal(f(x, c), x * x + c)
    assert len(seen) == 1
    graph, example = seen[0]
    assert [p.name for p in graph.placeholders] == ["x", "c"]
    assert example[0] is x and example[1] == 1.0
    assert graph.op_names() == ["multiply", "add"]


def test_backend_result_is_what_runs():
    f = kiln.compile(lambda x: x + 1, backend=lambda g, ex: (lambda *a: (np.zeros(2),)))
    np.testing.assert_array_equal(f(np.ones(2)), np.zeros(2))


def test_unknown_backend_and_non_function():
    with pytest.raises(kiln.KilnError, match="unknown kiln backend"):
        kiln.compile(square_plus, backend="nope")
    with pytest.raises(kiln.KilnError, match="expects a Python function"):
        kiln.compile(len)


@pytest.mark.parametrize("option", [{"dynamic": "yes"}, {"dynamic": 1}, {"fullgraph": None}])
def test_an_option_of_the_wrong_kind_is_a_clear_error(option):
    # dynamic="yes" compiled as if it were True; it is an error naming the option now
    (name, value), = option.items()
    with pytest.raises(kiln.KilnError, match=rf"kiln.compile\({name}={value!r}\): {name} takes"):
        kiln.compile(square_plus, **option)
    with pytest.raises(kiln.KilnError, match=f"{name} takes"):
        kiln.compile(**option)


def test_return_types_match_numpy():
    f = kiln.compile(lambda x: (x.sum(), x.shape, x.ndim, float(2.5), x[0]))
    x = np.arange(3.0)
    got, expected = f(x), (lambda x: (x.sum(), x.shape, x.ndim, float(2.5), x[0]))(x)
    assert [type(v) for v in got] == [type(v) for v in expected]
    assert got == expected


def test_pickle_roundtrip_keeps_options():
    f = kiln.compile(square_plus, backend="aot_eager", fullgraph=True, dynamic=False)
    g = pickle.loads(pickle.dumps(f))
    assert (g.fullgraph, g.dynamic, g.backend_name) == (True, False, "aot_eager")
    assert kiln.compile(square_plus).backend_name == "cpp"   # the default
    np.testing.assert_array_equal(g(np.ones(2)), np.full(2, 2.0))


def test_astype_without_copy_is_not_rewritten_in_place():
    def f(x):
        y = x.astype(x.dtype, copy=False)
        y += 1
        return y
    x = np.zeros(3)
    out = kiln.compile(f)(x)
    np.testing.assert_array_equal(x, np.ones(3))  # the argument was updated, as in NumPy
    assert out is x


def test_parameter_named_like_a_builtin():
    def f(type, len):
        return type * len
    c = kiln.compile(f)
    c(np.ones(2), 2.0)
    c(np.ones(2), 3.0)
    assert len(c.cache_entries) == 1


def test_wrong_arguments_raise_like_python_and_do_not_poison_the_cache():
    f = kiln.compile(square_plus)
    with pytest.raises(TypeError) as eager:
        square_plus(np.ones(2), 1.0, 2.0)
    with pytest.raises(TypeError) as compiled:
        f(np.ones(2), 1.0, 2.0)
    assert str(compiled.value) == str(eager.value)
    np.testing.assert_array_equal(f(np.ones(2)), np.full(2, 2.0))
    assert len(f.cache_entries) == 1 and f.cache_entries[0].graph is not None
    with pytest.raises(TypeError) as compiled:
        f(np.ones(2), 1.0, 2.0)  # now through the installed entry
    assert str(compiled.value) == str(eager.value)


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "cpp"])
def test_unused_gather_with_a_bad_index_still_raises(backend):
    def f(x, idx):
        unused = x[idx]  # noqa: F841  (NumPy raises here even though nothing reads it)
        return x * 2

    with pytest.raises(IndexError) as want:
        f(np.ones(3), np.array([5]))
    with pytest.raises(IndexError) as got:
        kiln.compile(f, backend=backend)(np.ones(3), np.array([5]))
    assert str(got.value) == str(want.value)


def test_an_error_raised_inside_the_graph_names_the_users_line():
    def f(m):
        y = m * 2
        return np.linalg.inv(y) @ y
    with pytest.raises(np.linalg.LinAlgError) as got:
        kiln.compile(f, backend="cpp")(np.zeros((2, 2)))
    assert str(got.value) == "Singular matrix"                 # the exception itself unchanged
    assert any("np.linalg.inv(y)" in n and f"{__file__}:" in n for n in got.value.__notes__)


class _Affine:
    def __init__(self, w):
        self.w = w

    def __call__(self, x, shift=0.0):
        return x @ self.w + shift


def test_partials_and_callable_objects_compile():
    # kiln.compile(partial(f, a)) and kiln.compile(model) raised "expects a Python
    # function"; the partial's function and the object's __call__ are compiled now
    x = np.arange(6.0).reshape(2, 3)
    scaled = kiln.compile(functools.partial(lambda a, b, c=0.0: a * b + c, 2.0, c=1.0))
    assert isinstance(scaled.func, kiln.api.CompiledFunction)
    np.testing.assert_array_equal(scaled(x), 2.0 * x + 1)
    model = _Affine(np.eye(3) * 3)
    compiled = kiln.compile(model)
    np.testing.assert_array_equal(compiled(x, shift=1.0), x @ model.w + 1.0)
    model.w = np.eye(3)                      # its attributes are read (and guarded) per call
    np.testing.assert_array_equal(compiled(x), x)
    with pytest.raises(kiln.KilnError, match="functools.partial"):
        kiln.compile(functools.partial(len))
