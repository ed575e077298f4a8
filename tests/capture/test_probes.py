"""One probe per Python feature capture supports: each runs compiled and plain, compares
values/dtypes/shapes/argument state, and pins the number of graphs compiled."""
import math

import numpy as np
import pytest

import kiln

from .conftest import assert_same

X = np.linspace(-1.0, 1.0, 12).reshape(3, 4)
Y = np.linspace(0.5, 2.0, 4)
F32 = np.linspace(0, 1, 6, dtype=np.float32).reshape(2, 3)
SCALE = 3.0


def _helper_inner(a):
    return np.tanh(a) * 2.0


def _helper_outer(a, b):
    return _helper_inner(a) + _helper_inner(b)


class Config:
    def __init__(self):
        self.scale = 0.5
        self.act = "relu"
        self.layers = (4, 4)

    def apply(self, x):
        return x * self.scale

    @property
    def doubled(self):
        return self.scale * 2


class Model:
    def __init__(self, w):
        self.w = w
        self.bias = 1.0

    @kiln.compile
    def forward(self, x):
        return x @ self.w + self.bias

    def plain(self, x):
        return np.maximum(x @ self.w, 0) - self.bias


def test_closure_over_constant_and_array(probe):
    w = np.arange(4.0)
    k = 2.5

    def f(x):
        return x * w + k
    probe(f, X)


def test_nested_function_and_lambda(probe):
    def f(x):
        def inner(v, p=2):
            return v ** p
        sq = lambda v: v * v  # noqa: E731
        return inner(x) + sq(x) + inner(x, 3)
    probe(f, X)


def test_closure_made_in_frame_sees_later_assignment(probe):
    def f(x):
        s = 1.0

        def add(v):
            return v + s
        s = 2.0
        return add(x)
    probe(f, X)


def test_method_decorated_on_class():
    m = Model(np.ones((4, 2)))
    got = m.forward(X)
    expected = X @ m.w + 1.0
    np.testing.assert_allclose(got, expected)
    assert len(Model.forward.cache_entries) == 1
    m.forward(X)
    assert len(Model.forward.cache_entries) == 1


def test_compile_bound_method(probe):
    m = Model(np.ones((4, 2)))
    probe(m.plain, X)


def test_defaults_kwonly_varargs_kwargs(probe):
    def f(x, a=2.0, *rest, scale, shift=1.0, **extra):
        out = x * a * scale + shift
        for r in rest:
            out = out + r
        for k in extra:
            out = out - extra[k]
        return out
    probe(f, X, 3.0, Y, Y, kwargs={"scale": 0.5, "bonus": 2.0})
    probe(f, X, kwargs={"scale": 0.5})


def test_helpers_calling_helpers(probe):
    def f(x, y):
        return _helper_outer(x, y) * SCALE
    probe(f, X, Y)


def test_loops_range_list_zip_enumerate(probe):
    def f(x, ws):
        acc = np.zeros_like(x)
        for i in range(3):
            acc = acc + x * i
        for w in ws:
            acc = acc * w
        for i, (a, b) in enumerate(zip(ws, [1.0, 2.0])):
            acc = acc + a * b * i
        i = 0
        while i < 2:
            acc = acc - 1.0
            i += 1
        return acc
    probe(f, X, [Y, Y * 2])


def test_comprehensions(probe):
    def f(x):
        parts = [x * i for i in range(3)]
        named = {f"p{i}": p for i, p in enumerate(parts)}
        total = sum(p.sum() for p in parts)
        return np.stack(parts).sum(axis=0) + named["p1"] + total
    probe(f, X)


def test_tuple_returns_and_unpacking(probe):
    def pair(x):
        return x + 1, x - 1

    def f(x):
        a, b = pair(x)
        first, *rest = (a, b, a * b)
        return first, rest, (b, a)
    probe(f, X)


def test_isinstance_and_type(probe):
    def f(x, s):
        if isinstance(s, (int, float)) and isinstance(x, np.ndarray) and type(s) is float:
            return x * s
        return x
    probe(f, X, 2.0)


def test_user_object_attributes_and_methods(probe):
    cfg = Config()

    def f(x, cfg):
        y = cfg.apply(x) + cfg.doubled
        if cfg.act == "relu":
            y = np.maximum(y, 0)
        for width in cfg.layers:
            y = y * width
        return y
    probe(f, X, cfg)


def test_dict_and_list_building(probe):
    def f(x):
        out = {"a": x + 1}
        out["b"] = x * 2
        items = []
        items.append(out["a"])
        items.extend([out["b"], x])
        return {"sum": items[0] + items[1], "n": len(items), "keys": list(out)}
    probe(f, X)


def test_math_on_constants_and_numpy_constants(probe):
    def f(x):
        c = math.sqrt(2.0) * math.cos(0.0) + math.pi
        return x * c + np.pi - np.e + np.float32(2.0) * 1.0
    probe(f, X)


def test_array_properties_in_branches(probe):
    def f(x):
        if x.ndim == 2 and x.shape[0] > 2:
            x = x.T
        if x.dtype == np.float64 and x.size > 4:
            x = x * 2
        n = len(x)
        return x.reshape(n, -1).sum(axis=1) / x.shape[1]
    probe(f, X)


def test_python_scalar_arguments_keep_weak_typing(probe):
    def f(x, lr):
        return x - lr * x
    _, _, got = probe(f, F32, 0.1)
    assert got.dtype == np.float32


def test_runtime_scalar_arithmetic_is_deferred(probe):
    def f(x, lr, step):
        rate = lr / (1 + step) * 2
        return x * rate
    probe(f, X, 0.5, 3)


def test_numpy_scalar_return_and_reductions(probe):
    def f(x):
        return x.sum(), np.mean(x, axis=0), x.max(axis=1, keepdims=True)
    _, _, got = probe(f, X)
    assert isinstance(got[0], np.float64)


def test_returned_argument_is_same_object_and_views_stay_views():
    def f(x):
        return x, x[1:], x.T

    compiled = kiln.compile(f)
    x = X.copy()
    a, b, c = compiled(x)
    assert a is x
    assert np.shares_memory(b, x) and np.shares_memory(c, x)


def test_inplace_on_fresh_array_stays_in_graph(probe):
    def f(x):
        h = x * 2.0
        h += 1.0
        h[0] = 5.0
        return h
    probe(f, X)


def test_scalar_arithmetic_and_abs_min_max(probe):
    def f(x, a, b):
        m = max(a, b) + min(a, 1.0) + abs(-a)
        return x * m + int(b)
    probe(f, X, 2.0, 3.5)


def test_fstring_and_str_methods_on_constants(probe):
    def f(x, mode):
        key = f"{mode}_{x.ndim}"
        if key.startswith("fast"):
            return x * 2
        return x
    probe(f, X, "fast")


def test_representative_numpy_function_is_one_graph(probe):
    def layer_norm(h, eps=1e-5):
        mu = h.mean(axis=-1, keepdims=True)
        var = ((h - mu) ** 2).mean(axis=-1, keepdims=True)
        return (h - mu) / np.sqrt(var + eps)

    def gelu(h):
        return 0.5 * h * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (h + 0.044715 * h ** 3)))

    def block(h, w, b):
        return gelu(layer_norm(h) @ w + b)

    def stats(h):
        return h.min(), h.max(), h.mean()

    def model(x, weights, biases, temperature=1.0):
        """A small network, written the way NumPy users write them (30+ lines)."""
        n_rows, n_cols = x.shape
        h = x
        residuals = []
        for i in range(len(weights)):
            h = block(h, weights[i], biases[i])
            if h.shape[-1] == x.shape[-1]:
                h = h + x
            residuals.append(h.mean(axis=0))
        # Broadcasting a column and a row statistic against the activations.
        col_mean = h.mean(axis=0, keepdims=True)
        row_max = h.max(axis=1)[:, None]
        h = h - 0.1 * col_mean + 0.01 * row_max
        trend = sum(residuals) / len(residuals)
        h = h + trend[None, :] * (1.0 / n_rows)
        logits = h / temperature
        shifted = logits - logits.max(axis=-1, keepdims=True)
        e = np.exp(shifted)
        probs = e / e.sum(axis=-1, keepdims=True)
        lo, hi, mean = stats(probs)
        clipped = np.clip(probs, 1e-6, 1.0)
        entropy = -(clipped * np.log(clipped)).sum(axis=-1)
        weighted = np.where(probs > mean, probs, 0.0)
        scores = weighted.sum(axis=0) * (hi - lo)
        norms = np.sqrt((h * h).sum(axis=1))
        scale = n_cols ** 0.5
        norms = norms / scale
        out = {
            "probs": probs,
            "entropy": entropy,
            "scores": scores,
        }
        return out, norms.mean(), (entropy.max(), entropy.argmax())

    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, 8))
    weights = [rng.standard_normal((8, 8)) * 0.3 for _ in range(3)]
    biases = [rng.standard_normal(8) * 0.1 for _ in range(3)]
    compiled, backend, _ = probe(model, x, weights, biases, 0.7)
    assert len(backend.graphs[0].calls) > 40


@kiln.compile
def _compiled_helper(a):
    return a * 3.0


def test_compiled_function_called_from_compiled_code_is_inlined(probe):
    def f(x):
        return _compiled_helper(x) + 1
    probe(f, X)


def test_generator_expression_and_unused_values(probe):
    def f(x):
        unused = np.abs(x)  # noqa: F841  (dropped from the graph: it never warns)
        kept = np.exp(x)  # noqa: F841  (kept: NumPy computes it, and warns of overflow)
        return tuple(v * 2 for v in (x, x + 1)), max(i * 2 for i in range(3))
    _, backend, _ = probe(f, X)
    assert "absolute" not in backend.graphs[0].op_names()
    assert "exp" in backend.graphs[0].op_names()


def test_function_with_no_array_work_compiles_no_graph(probe):
    def f(x, n):
        return x.shape[0] * 2 + n, None
    probe(f, X, 3, graphs=0)


def test_set_literal_and_membership(probe):
    def f(x, mode):
        if mode in {"a", "b"} and 2 in (1, 2):
            return x + len({1, 2, 2})
        return x
    probe(f, X, "a")


def test_numpy_helpers_fold_on_constants(probe):
    def f(x):
        eps = np.finfo(x.dtype).eps
        if np.issubdtype(x.dtype, np.floating) and np.dtype("float64") == x.dtype:
            return x + eps * np.prod(x.shape)
        return x
    probe(f, X)


def test_loop_with_break_continue_else(probe):
    def f(x):
        for i in range(10):
            if i % 2:
                continue
            if i > 6:
                break
            x = x + i
        else:
            x = x * 100
        return x
    probe(f, X)


def test_inlined_closure_updates_enclosing_cell(probe):
    def f(x):
        total = 0

        def bump(v):
            nonlocal total
            total += 1
            return v * 2
        y = bump(bump(x))
        return y + total
    probe(f, X)


def test_returned_containers_passed_in_are_the_same_objects():
    def f(pair, items, opts):
        return pair, items, opts, pair[0] + 1
    c = kiln.compile(f)
    pair, items, opts = (X, X * 2), [X], {"k": 1}
    out = c(pair, items, opts)
    assert out[0] is pair and out[1] is items and out[2] is opts


def _helper_with_mutable_default(x, seen=[]):  # noqa: B006  (the point of the test)
    seen.append(1)
    return x * len(seen)


def _helper_with_default_scale(x, scale=2.0):
    return x * scale


def test_mutable_default_of_a_helper_is_mutated_for_real():
    def f(x):
        return _helper_with_mutable_default(x)
    c = kiln.compile(f)
    before = len(_helper_with_mutable_default.__defaults__[0])
    outs = [c(X)[0, 1] for _ in range(3)]
    assert len(_helper_with_mutable_default.__defaults__[0]) == before + 3
    assert outs == [X[0, 1] * (before + i + 1) for i in range(3)]


def test_changed_default_of_a_helper_recompiles(probe):
    def f(x):
        return _helper_with_default_scale(x)
    compiled, backend, _ = probe(f, X)
    _helper_with_default_scale.__defaults__ = (3.0,)
    try:
        np.testing.assert_array_equal(compiled(X), X * 3.0)
    finally:
        _helper_with_default_scale.__defaults__ = (2.0,)
    assert len(backend.graphs) == 2


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.bool_])
@pytest.mark.parametrize("scalar", [2, 0.5, True, np.float32(1.5), np.float64(0.25), np.int8(3)])
def test_scalar_promotion_matches_numpy(probe, dtype, scalar):
    def f(x, s):
        return x * s + s, s * 2
    probe(f, np.arange(4).astype(dtype), scalar)


# -- NumPy scalars are not 0-d arrays ---------------------------------------------------------

def _scalar_rebinds(x):
    s = x.sum()
    t = s
    s += 1          # a new np.float64: t keeps the old value
    return t, s


def _scalar_accumulates(x):
    x = x[0]
    acc = x[0]
    out = []
    for i in range(1, 3):
        acc += x[i]
        out.append(acc)
    return out


def _scalar_types(x):
    s = x.sum()
    first = x[0]
    return (type(s).__name__, isinstance(s, np.ndarray), isinstance(s, np.generic),
            isinstance(s, float), type(first).__name__, s + 1 if not isinstance(s, np.ndarray) else 0)


def _element_updates(x):
    x[0] += 1
    x[1, 2] *= 3
    s = x[0, 1]
    s -= 10
    return x, s


def _zero_d_array_stays_one(x):
    a = np.zeros(())
    b = a
    a += x.sum()
    return b, type(b).__name__


@pytest.mark.parametrize("fn", [_scalar_rebinds, _scalar_accumulates, _scalar_types,
                                _element_updates, _zero_d_array_stays_one])
@pytest.mark.parametrize("backend", ["eager", "aot_eager", "cpp"])
def test_numpy_scalars_are_immutable_values(fn, backend):
    x = np.arange(6.0).reshape(2, 3)
    want_x, got_x = x.copy(), x.copy()
    want = fn(want_x)
    compiled = kiln.compile(fn, backend=backend)
    for _ in range(2):
        got_x = x.copy()
        assert_same(compiled(got_x), want)
        assert_same(got_x, want_x, "argument after the call")
