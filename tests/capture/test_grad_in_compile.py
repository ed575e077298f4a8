"""kiln.grad / kiln.value_and_grad called inside a compiled function: the backward is
written into the same graph (one graph, no autograd at run time). Every case is compared
with the same function run without kiln (the eager kiln.grad), gradients also with
finite differences; whatever the eager version treats differently falls back to it."""
import functools

import numpy as np
import pytest

import kiln
from kiln.autograd import numerical_grad

from .conftest import assert_same

RNG = np.random.default_rng(5)


def mlp_loss(w1, b1, w2, x, y):
    h = np.maximum(x @ w1 + b1, 0.0)
    z = h @ w2
    z = z - z.max(axis=1, keepdims=True)
    p = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
    return -np.sum(y * np.log(p)) / x.shape[0]


def _data():
    x = RNG.standard_normal((6, 5))
    y = np.eye(3)[RNG.integers(0, 3, 6)]
    return RNG.standard_normal((5, 4)), RNG.standard_normal(4), RNG.standard_normal((4, 3)), x, y


def test_value_and_grad_of_an_mlp_is_one_graph_matching_eager_and_finite_differences(probe):
    def step(w1, b1, w2, x, y):
        return kiln.value_and_grad(mlp_loss, argnums=(0, 1, 2))(w1, b1, w2, x, y)

    args = _data()
    compiled, backend, (value, grads) = probe(step, *args)
    graph = backend.graphs[0]
    assert "matmul" in graph.op_names() and graph.op_names().count("matmul") >= 4
    assert isinstance(value, np.float64)
    for i, g in enumerate(grads):
        fd = numerical_grad(mlp_loss, args, i, np.ones(()))
        np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)


def test_in_place_sgd_step_on_the_arguments(probe):
    def train(w1, b1, w2, x, y):
        loss, grads = kiln.value_and_grad(mlp_loss, argnums=(0, 1, 2))(w1, b1, w2, x, y)
        for p, g in zip((w1, b1, w2), grads):
            p -= 0.1 * g
        return loss

    probe(train, *_data(), calls=3)  # the arguments' final state is compared too


def _loss_with_aux(w1, b1, w2, x, y):
    loss = mlp_loss(w1, b1, w2, x, y)
    h = np.maximum(x @ w1 + b1, 0.0)
    return loss, {"active": (h > 0).mean(), "hidden": h}


def test_has_aux_returns_the_aux_values_beside_the_loss(probe):
    """JAX's has_aux: fn returns (loss, aux); value_and_grad gives ((loss, aux), grads) and
    grad (grads, aux), the loss alone differentiated, in one graph as without aux."""
    def step(w1, b1, w2, x, y):
        (loss, aux), grads = kiln.value_and_grad(_loss_with_aux, argnums=(0, 2), has_aux=True)(
            w1, b1, w2, x, y)
        g1, aux1 = kiln.grad(_loss_with_aux, has_aux=True)(w1, b1, w2, x, y)
        return loss, aux["active"], aux["hidden"], grads, g1, aux1["active"]

    args = _data()
    compiled, backend, out = probe(step, *args)
    assert len(backend.graphs) == 1 and kiln.explain(step)(*args).graph_break_count == 0
    np.testing.assert_allclose(out[3][1], numerical_grad(mlp_loss, args, 2, np.ones(())),
                               rtol=1e-6, atol=1e-8)
    np.testing.assert_array_equal(out[3][0], out[4])


def test_has_aux_errors_say_what_to_return():
    args = _data()
    with pytest.raises(kiln.KilnError, match=r"got a tuple of 2; to return \(loss, aux\), pass has_aux=True"):
        kiln.value_and_grad(_loss_with_aux)(*args)
    with pytest.raises(kiln.KilnError, match=r"has_aux=True\): the function must return a pair"):
        kiln.grad(mlp_loss, has_aux=True)(*args)
    for backend in ("eager", "cpp"):   # compiled: the same errors, from the eager call
        with pytest.raises(kiln.KilnError, match="pass has_aux=True"):
            kiln.compile(lambda *a: kiln.value_and_grad(_loss_with_aux)(*a), backend=backend)(*args)


def test_grad_made_outside_and_scalar_argnums(probe):
    dloss = kiln.grad(lambda w, x: np.sum(np.tanh(x @ w) ** 2))

    def fn(w, x):
        return w - 0.5 * dloss(w, x), dloss(w * 2.0, x)

    probe(fn, RNG.standard_normal((3, 2)), RNG.standard_normal((4, 3)))


def test_closed_over_values_are_constants_as_in_eager(probe):
    # y is computed from w before the call: d/dw of f(w) treats it as a constant.
    def fn(w):
        y = np.sin(w)
        return kiln.grad(lambda v: np.sum(v * y))(w)

    w = RNG.standard_normal(4)
    _, _, got = probe(fn, w)
    np.testing.assert_allclose(got, np.sin(w), rtol=1e-15)


def test_output_not_depending_on_the_argument_gives_zeros(probe):
    def fn(w, x):
        return kiln.value_and_grad(lambda w, x: np.sum(x * 2.0), argnums=(0, 1))(w, x)

    _, _, (value, (gw, gx)) = probe(fn, RNG.standard_normal(3), RNG.standard_normal(3))
    assert not gw.any() and np.all(gx == 2.0)


def test_float32_and_cpp_backend():
    w, x = RNG.standard_normal((8, 4)).astype(np.float32), RNG.standard_normal((16, 8)).astype(np.float32)

    def fn(w, x):
        loss, g = kiln.value_and_grad(lambda w, x: np.mean(np.tanh(x @ w) ** 2))(w, x)
        return loss, w - 0.1 * g

    compiled = kiln.compile(fn, backend="cpp")
    want_loss, want_w = fn(w, x)
    got_loss, got_w = compiled(w, x)
    assert type(got_loss) is type(want_loss) and got_w.dtype == np.float32
    np.testing.assert_allclose(got_loss, want_loss, rtol=1e-5)
    np.testing.assert_allclose(got_w, want_w, rtol=1e-5, atol=1e-6)
    assert len(compiled.records) == 1 and compiled.records[0].graph_break is None


@pytest.mark.parametrize("case", ["int_argument", "vector_output", "writes_argument",
                                  "graph_break_inside", "no_derivative", "same_array_twice"])
def test_what_eager_treats_differently_falls_back_to_it(case, probe):
    w = RNG.standard_normal(4)
    if case == "int_argument":
        fn = lambda w: kiln.grad(lambda a: np.sum(a * 2.0))(np.arange(4))  # noqa: E731
    elif case == "vector_output":
        fn = lambda w: kiln.grad(lambda a: a * 2.0)(w)  # noqa: E731
    elif case == "writes_argument":
        def body(a):
            a[0] = 1.0
            return np.sum(a * a)
        fn = lambda w: kiln.grad(body)(w.copy())  # noqa: E731
    elif case == "graph_break_inside":
        def body(a):
            print("inside", file=__import__("sys").stderr)
            return np.sum(a ** 3)
        fn = lambda w: kiln.grad(body)(w) * 2.0  # noqa: E731
    elif case == "no_derivative":
        fn = lambda w: kiln.grad(lambda a: np.sum(np.floor(a) * 1.0 + np.sign(a)))(w)  # noqa: E731
    else:
        fn = lambda w: kiln.grad(lambda a, b: np.sum(a * b), argnums=(0, 1))(w, w)  # noqa: E731
    compiled = kiln.compile(fn, backend="aot_eager")
    try:
        want = fn(w)
    except Exception as e:
        with pytest.raises(type(e)) as got:
            compiled(w)
        assert str(got.value) == str(e)
        return
    assert_same(compiled(w), want)


def test_functools_wraps_decorated_functions_compile_with_their_own_signature(probe):
    def logged(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            args = list(args)
            return fn(*args, **kwargs) * 2.0
        return wrapper

    @logged
    def f(x, y=1.0):
        return np.sum(x) + y

    probe(f, np.arange(3.0), graphs=1)


def test_nested_grad_on_a_differentiated_value_is_a_clear_error_compiled_or_not():
    inner = lambda w: np.sum(w ** 3)  # noqa: E731
    nested = lambda w: kiln.grad(lambda v: np.sum(kiln.grad(inner)(v)))(w)  # noqa: E731
    for fn in (nested, kiln.compile(nested, backend="cpp")):
        with pytest.raises(kiln.KilnError, match="higher-order gradients are not supported"):
            fn(np.array([1.0, 2.0]))
    # an inner gradient of something else is a constant: fine both ways
    other = lambda w: kiln.grad(lambda v: np.sum(v * kiln.grad(inner)(np.ones(2))))(w)  # noqa: E731
    assert_same(kiln.compile(other, backend="cpp")(np.array([1.0, 2.0])), other(np.array([1.0, 2.0])))


def test_gradients_stay_right_when_shapes_change():
    # Derivative rules write sizes into the graph: every shape gets its own graph.
    fn = lambda x: kiln.grad(lambda w: np.sum(w[:1].squeeze() ** 2) + np.sum(w * x))(x)  # noqa: E731
    compiled = kiln.compile(fn, backend="cpp")
    for shape in ((2, 3), (4, 5), (6, 7), (4, 5)):
        x = RNG.standard_normal(shape)
        assert_same(compiled(x), fn(x))


_XG = RNG.standard_normal(3)


def test_values_first_reached_inside_the_differentiated_function():
    # Closures over arguments the graph has not used yet, globals, unused arguments: their
    # inputs enter the graph while f is traced (placeholders go before existing nodes).
    def readme_step(w, x, y):
        loss, g = kiln.value_and_grad(lambda w: np.mean((x @ w - y) ** 2))(w)
        w -= 0.1 * g
        return loss

    def globals_and_unused(w, x):
        return kiln.grad(lambda v: np.sum(v * _XG))(w), kiln.grad(lambda v: np.sum(np.sin(v) * x))(w)

    x, y = RNG.standard_normal((4, 3)), RNG.standard_normal(4)
    for backend in ("eager", "cpp"):
        w_eager, w_kiln = np.zeros(3), np.zeros(3)
        compiled = kiln.compile(readme_step, backend=backend)
        for _ in range(3):
            assert_same(compiled(w_kiln, x, y), readme_step(w_eager, x, y))
            np.testing.assert_allclose(w_kiln, w_eager, rtol=1e-12)
        assert w_kiln.any()
        w = RNG.standard_normal(3)
        assert_same(kiln.compile(globals_and_unused, backend=backend)(w, x[0]), globals_and_unused(w, x[0]))


def test_value_and_gradient_types_are_the_eager_ones():
    # eager: the value of a 0-d result is a NumPy scalar, a gradient is always an array.
    def size_one_value(x):
        return kiln.value_and_grad(lambda y: (y * y).reshape(()))(x)

    def grad_of_a_scalar(a):
        return kiln.grad(lambda y: y * 2.0)(a.sum())

    for fn, arg in ((size_one_value, np.array([3.0])), (grad_of_a_scalar, np.arange(3.0))):
        for backend in ("eager", "cpp"):
            assert_same(kiln.compile(fn, backend=backend)(arg), fn(arg))


def _tree_loss(params, layers, x):
    h = np.tanh(x @ params["w"] + params["b"])
    for W, c in layers:
        h = np.sin(h @ W + c[0])
    return np.sum(h ** 2)


def test_gradients_of_dicts_lists_and_tuples_of_arrays_are_one_graph(probe):
    """kiln.value_and_grad inside a compiled function with a dict (or list, tuple) of
    parameters broke the graph: a compiled Adam step over a dict ran as Python with the
    eager tape (10x NumPy's hand-written step). The gradients keep the structure."""
    def adam_like(params, layers, x, m):
        loss, (g, gl) = kiln.value_and_grad(_tree_loss, argnums=(0, 1))(params, layers, x)
        for k in params:
            m[k] = 0.9 * m[k] + g[k]
            params[k] -= 0.1 * m[k]
        return loss, g, gl

    params = {"w": RNG.standard_normal((3, 4)), "b": RNG.standard_normal(4)}
    layers = [(RNG.standard_normal((4, 4)), (np.array(0.3), RNG.standard_normal(4)))]
    x, m = RNG.standard_normal((5, 3)), {"w": np.zeros((3, 4)), "b": np.zeros(4)}
    _, _, (loss, g, gl) = probe(adam_like, params, layers, x, m, calls=3)
    assert type(g) is dict and list(g) == ["w", "b"] and type(gl) is list and type(gl[0]) is tuple
    assert type(gl[0][1]) is tuple and gl[0][1][0].shape == ()
    want = kiln.grad(_tree_loss, argnums=(0, 1))(params, layers, x)
    assert_same((g, gl), want)
    fd = numerical_grad(lambda w: _tree_loss({"w": w, "b": params["b"]}, layers, x), [params["w"]], 0, np.ones(()))
    np.testing.assert_allclose(want[0]["w"], fd, rtol=1e-6, atol=1e-8)
