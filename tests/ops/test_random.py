"""np.random.* and Generator methods (kiln/ops/random.py): each spelling captured in one
graph, drawing exactly the numbers plain NumPy draws for the same seed (values, dtypes,
types, shapes) and leaving the generator in NumPy's state; never merged, dropped or
drawn twice, including where a graph reruns as Python."""

import numpy as np
import pytest

import kiln
from kiln.errors import NoDerivative

x4 = np.linspace(0.5, 2.0, 4)
big = np.linspace(0.1, 3.0, 100_000)

# fn(x): RNG is a module-level Generator (or a RandomState where the name says so),
# made anew with the same seed before each run; np.random.* calls draw from NumPy's
# global state, seeded the same before each run.
CASES = {
    "normal": lambda x: x + np.random.normal(size=x.shape),
    "normal_params": lambda x: np.random.normal(x, x * 2),
    "normal_scalar_args": lambda x: np.random.normal(1.5, 0.5, (2, 3)),
    "rand_randn": lambda x: (np.random.rand(2, 3), np.random.randn(4), np.random.rand()),
    "random_family": lambda x: (np.random.random(3), np.random.random_sample((2,)),
                                     np.random.ranf(2), np.random.sample(1), np.random.random()),
    "randint": lambda x: (np.random.randint(0, 10, size=5), np.random.randint(7),
                               np.random.randint(3, size=2, dtype=np.int32), np.random.randint(5, dtype=np.int64)),
    "uniform_exponential": lambda x: (np.random.uniform(-1, x), np.random.exponential(x),
                                           np.random.uniform()),
    "discrete": lambda x: (np.random.poisson(x), np.random.binomial(10, 0.3, 4),
                                np.random.geometric(0.2, 3), np.random.poisson(),
                                np.random.negative_binomial(3, 0.5, 2), np.random.hypergeometric(5, 4, 3, 2),
                                np.random.logseries(0.5, 2), np.random.zipf(2.0, 3)),
    "continuous": lambda x: (np.random.beta(x, 2.0), np.random.gamma(x), np.random.standard_gamma(x),
                                  np.random.chisquare(3, 2), np.random.f(2, 3, 2), np.random.gumbel(size=2),
                                  np.random.laplace(x), np.random.logistic(size=3), np.random.lognormal(x),
                                  np.random.noncentral_chisquare(3, x), np.random.noncentral_f(2, 3, x),
                                  np.random.pareto(x), np.random.power(x), np.random.rayleigh(x),
                                  np.random.standard_cauchy(2), np.random.standard_exponential(2),
                                  np.random.standard_normal(3), np.random.standard_t(x),
                                  np.random.triangular(0, 1, 2, 3), np.random.vonmises(0, x),
                                  np.random.wald(x, 1.0), np.random.weibull(x)),
    "vectors": lambda x: (np.random.dirichlet(x, 3), np.random.multinomial(10, x / x.sum(), 2),
                               np.random.dirichlet([1.0, 2.0])),
    "choice_permutation": lambda x: (np.random.choice(x, 3), np.random.choice(5, 2, replace=False),
                                          np.random.choice(x, 2, p=x / x.sum()), np.random.choice(x),
                                          np.random.choice(6), np.random.permutation(x), np.random.permutation(5)),
    "shuffle_argument": lambda x: np.random.shuffle(x),
    "seed_inside": lambda x: (np.random.seed(3), np.random.normal(size=2), np.random.seed(4),
                                   np.random.random(2)),
    "unused_draw": lambda x: (np.random.normal(size=3), x * 2)[1],
    "same_call_twice": lambda x: (np.random.normal(size=3), np.random.normal(size=3)),
    "generator": lambda x: (x + RNG.normal(size=4), RNG.integers(5), RNG.integers(0, 3, size=(2, 2)),
                                 RNG.random(), RNG.random(3, dtype=np.float32), RNG.standard_normal(2),
                                 RNG.uniform(0, x), RNG.poisson(x), RNG.choice(x, 2), RNG.permutation(x),
                                 RNG.exponential(size=2), RNG.standard_exponential(2, method="inv")),
    "generator_shuffle": lambda x: RNG.shuffle(x),
    "randomstate_object": lambda x: (RNG.normal(size=2), RNG.randint(3, size=2), RNG.random_sample()),
    "scalar_draws_in_arithmetic": lambda x: (x * np.random.random(), np.random.normal() + 1.0 - 2.0 * np.random.random(),
                                                  x + RNG.integers(3), np.sqrt(np.random.random()) * x),
    "large": lambda x: (np.random.normal(x, 1.0), RNG.random(x.shape) * x, np.random.permutation(x)),
}


RNG = None


def _rng(name, seed=5):
    global RNG
    RNG = np.random.RandomState(seed) if "randomstate" in name else np.random.default_rng(seed)
    return RNG


def _state(gen):
    return gen.get_state(legacy=False) if isinstance(gen, np.random.RandomState) else gen.bit_generator.state


def _same(got, want):
    assert type(got) is type(want), (type(got), type(want))
    if isinstance(want, (tuple, list)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w)
    elif isinstance(want, (np.ndarray, np.generic)):
        assert got.dtype == want.dtype and np.shape(got) == np.shape(want)
        np.testing.assert_array_equal(got, want)
    else:
        assert got == want


def _same_state(a, b):
    assert repr(a) == repr(b)


def _run(fn, name, arg, compiled):
    np.random.seed(11)
    rng, x = _rng(name), np.copy(arg)
    result = (kiln.compile(fn) if compiled else fn)(x)
    return result, x, np.random.get_state(legacy=False), _state(rng)


@pytest.mark.parametrize("name", list(CASES))
def test_draws_are_numpys_in_one_graph(name):
    fn = CASES[name]
    arg = big if name == "large" else x4
    np.random.seed(11)
    _rng(name)
    out = kiln.explain(fn)(np.copy(arg))
    assert out.graph_break_count == 0, [str(b.reason) for b in out.break_reasons]
    assert out.graph_count == 1
    want, wx, wstate, wgen = _run(fn, name, arg, False)
    got, gx, gstate, ggen = _run(fn, name, arg, True)
    _same(got, want)
    np.testing.assert_array_equal(gx, wx)      # shuffle writes its argument
    _same_state(gstate, wstate)
    _same_state(ggen, wgen)


def test_a_python_float_draw_with_float32_stays_weak():
    # NEP 50: float32 * Python float is float32 (a float64 0-d array would promote)
    def f(x):
        return x * np.random.random()
    x = x4.astype(np.float32)
    np.random.seed(3)
    want = f(x)
    np.random.seed(3)
    got = kiln.compile(f)(x)
    assert got.dtype == want.dtype == np.float32
    np.testing.assert_array_equal(got, want)


def test_every_call_draws_anew():
    f = kiln.compile(lambda x: x + np.random.random(x.shape))
    np.random.seed(2)
    want = [x4 + np.random.random(4) for _ in range(3)]
    np.random.seed(2)
    for w in want:                 # the cached entry draws on every call, in order
        np.testing.assert_array_equal(f(x4), w)


def test_seed_argument_is_a_runtime_value():
    def f(s, x):
        np.random.seed(s)
        return np.random.normal(x)
    cf = kiln.compile(f)
    for s in (1, 2, 3):
        np.testing.assert_array_equal(cf(s, x4), f(s, x4))
    assert len(cf._entries) == 1


@pytest.mark.parametrize("fn", [lambda x: np.random.normal(0.0, -x),
                                lambda x: np.random.choice(x, 9, replace=False),
                                lambda x: np.random.normal(size=3) + x,
                                lambda x: np.random.permutation(x.sum())],
                         ids=["bad_scale", "choice_too_many", "shapes", "permutation_0d"])
def test_numpys_errors_and_state(fn):
    np.random.seed(0)
    with pytest.raises(Exception) as want:
        fn(x4)
    wstate = np.random.get_state(legacy=False)
    np.random.seed(0)
    with pytest.raises(type(want.value)) as got:
        kiln.compile(fn)(x4)
    assert str(got.value) == str(want.value)
    _same_state(np.random.get_state(legacy=False), wstate)


def _run_twice(f, args_list):
    """Each call's results and the final global state, plain and compiled."""
    outs = []
    for g in (f, kiln.compile(f)):
        np.random.seed(7)
        res = []
        for args in args_list:
            args = [np.copy(a) for a in args]
            try:
                res.append((g(*args), args))
            except Exception as e:
                res.append((type(e).__name__, args))
        outs.append((res, np.random.get_state(legacy=False)))
    return outs


def _assert_runs_equal(outs):
    (want, wstate), (got, gstate) = outs
    for (w, wa), (g, ga) in zip(want, got):
        _same(g, w)
        for a, b in zip(ga, wa):
            np.testing.assert_array_equal(a, b)
    _same_state(gstate, wstate)


def test_a_speculated_dtype_rerun_draws_once():
    # eigvals is speculated real on the first call; the rotation's eigenvalues are
    # complex, so that call reruns as Python: the draws before it must not repeat
    def f(a):
        noise = np.random.normal(size=2)
        return noise, np.linalg.eigvals(a) + noise[0]
    sym = np.array([[2.0, 1.0], [1.0, 3.0]])
    rot = np.array([[0.0, -1.0], [1.0, 0.0]])
    _assert_runs_equal(_run_twice(f, [(sym,), (rot,), (sym,)]))


def test_an_error_after_a_draw_replays_writes_without_drawing_again():
    # the compiled graph raises at inv; NumPy wrote x[0] before that: the op-by-op
    # replay writing it must see the numbers the failed run drew
    def f(x, m):
        x[0] = np.random.random()
        x[1:3] = np.random.normal(size=2)
        return np.linalg.inv(m) @ x[:2]
    good, bad = np.eye(2), np.zeros((2, 2))
    _assert_runs_equal(_run_twice(f, [(x4, good), (x4, bad), (x4, good)]))


class _Block:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_an_error_inside_a_with_block_after_a_draw():
    def f(x, m):
        with _Block():
            kiln.graph_break()
            y = np.random.normal(size=2)
            z = np.linalg.inv(m)
        return y @ z + x[:2]
    good, bad = np.eye(2), np.zeros((2, 2))
    _assert_runs_equal(_run_twice(f, [(x4, good), (x4, bad), (x4, good)]))


def test_draws_in_a_loop():
    def f(x):
        out = np.empty(5)
        for i in range(5):
            out[i] = np.random.normal() * x[i % 4]
        for i in range(3):
            x = x + np.random.random(4)
        return out, x
    _assert_runs_equal(_run_twice(f, [(x4,), (x4,)]))


def test_gradients_flow_around_draws_not_through_them():
    # reparameterization: d/dmu of sum(mu + sigma * eps) is 1, eps drawn in the graph
    def f(mu):
        return np.sum(mu + 0.5 * np.random.standard_normal(mu.shape))
    np.random.seed(1)
    np.testing.assert_array_equal(kiln.grad(kiln.compile(f))(x4), np.ones(4))

    def through(mu):
        return np.sum(np.random.normal(mu, 1.0))
    with pytest.raises(kiln.KilnError, match="became a plain NumPy array"):
        kiln.grad(through)(x4)    # eager: NumPy's own function converts the Tensor
    with pytest.raises(NoDerivative, match="random_normal"):
        kiln.grad(kiln.compile(through))(x4)


def _step(x, g, rng, p):
    """A generator passed in (often a new one per call): SGD with a dropout mask,
    Langevin noise, bootstrap indices and the other common draws, two identical draws
    and an unused one (each still advances the state)."""
    mask = rng.random(x.shape) < p
    x = x - 0.1 * g + np.sqrt(2 * 0.1) * rng.standard_normal(x.shape)
    idx = rng.integers(0, x.shape[0], size=x.shape[0])
    rng.standard_normal(2)
    a = rng.normal(1.0, 2.0, x.shape) + rng.uniform(size=x.shape) + rng.exponential(2.0, x.shape)
    same = rng.random(2) + rng.random(2)
    return (np.where(mask, x / p, 0.0)[idx] + a + rng.poisson(3.0, x.shape), same,
            rng.choice(x, 3), rng.permutation(x), rng.random())


def _draw_calls(fn, backend, makers, seeds, args=lambda r: (x4, x4[::-1], r, 0.5)):
    """``fn`` plain and compiled on a new generator per call (twice each, so the second
    call continues the stream): the same results and the same generator state."""
    f = kiln.compile(fn, backend=backend)
    for make in makers:
        for seed in seeds:
            want_rng, got_rng = make(seed), make(seed)
            for _ in range(2):
                _same(f(*args(got_rng)), fn(*args(want_rng)))
                _same_state(_state(got_rng), _state(want_rng))
    return f


def test_a_generator_passed_in_draws_in_one_graph_without_recompiling():
    out = kiln.explain(_step)(x4, x4[::-1], np.random.default_rng(0), 0.5)
    assert out.graph_break_count == 0 and out.graph_count == 1, out.break_reasons
    f = _draw_calls(_step, "eager", [np.random.default_rng], (0, 1, 2))
    assert len(f._entries) == 1   # guarded by type, not identity or state
    # another bit generator, and a RandomState: guarded types, each one more entry
    _draw_calls(_step, "eager", [lambda s: np.random.Generator(np.random.MT19937(s))], (3,))
    legacy = _draw_calls(lambda x, rs: (x + rs.normal(size=x.shape), rs.randint(0, 5, 3), rs.rand(2)),
                         "eager", [np.random.RandomState], (0, 1), lambda r: (x4, r))
    assert len(legacy._entries) == 1


def test_a_generator_passed_in_draws_numpys_stream_in_a_kernel():
    f = _draw_calls(_step, "cpp", [np.random.default_rng], (0, 1))
    assert [r.graph_break for r in f.records] == [None]


def test_a_generator_passed_in_keeps_numpys_errors_and_order_across_a_break():
    def bad(x, rng, scale):
        return x * 2 + rng.normal(0.0, scale, size=x.shape) + rng.integers(0, 5 - scale, 2)

    def outcome(f, *args):
        try:
            return f(*args)
        except Exception as e:
            return type(e), str(e)
    f = kiln.compile(bad, backend="eager")
    for scale in (1.0, -1.0, 5.0):   # NumPy's ValueErrors: scale < 0, low >= high
        want_rng, got_rng = np.random.default_rng(0), np.random.default_rng(0)
        _same(outcome(f, x4, got_rng, scale), outcome(bad, x4, want_rng, scale))
        _same_state(_state(got_rng), _state(want_rng))

    def branchy(x, rng):
        a = rng.standard_normal(x.shape)
        if a.sum() > 0:   # breaks the graph: the draws before and after keep their order
            a = a + rng.random(x.shape)
        return x + a * rng.random()
    _draw_calls(branchy, "eager", [np.random.default_rng], range(4), lambda r: (x4, r))


def test_what_is_not_captured_says_why():
    out = kiln.explain(lambda x: x + np.random.get_state()[1][:4])(x4)
    assert out.graph_break_count >= 1 and "get_state" in out.break_reasons[0].reason


def _made_inside(x, seed):
    rng = np.random.default_rng(seed)
    a = x + rng.standard_normal(x.shape)
    b = rng.integers(0, 10, size=3)
    return a * rng.random(), b, rng.random(), rng.permutation(x)


@pytest.mark.parametrize("cost_model", ["0", "1"])
def test_default_rng_made_inside_draws_numpys_stream_in_one_graph(cost_model, monkeypatch):
    monkeypatch.setenv("KILN_COST_MODEL", cost_model)
    out = kiln.explain(_made_inside)(x4, 3)
    assert out.graph_break_count == 0
    if cost_model == "0":
        assert out.graph_count == 1 and "random_fresh_generator" in out.ops_per_graph[0]
    f = kiln.compile(_made_inside)
    state = np.random.get_state()[1].copy()
    for seed in (3, 4, 3, 10**12):
        got, want = f(x4, seed), _made_inside(x4, seed)
        for g, w in zip(got, want):
            assert type(g) is type(w) and np.shape(g) == np.shape(w)
            np.testing.assert_array_equal(g, w)
    assert len(f._entries) == 1                                # the seed is a run-time value
    np.testing.assert_array_equal(np.random.get_state()[1], state)   # the global stream untouched


def _random_state_inside(x, seed):
    rs = np.random.RandomState(seed)
    return x * rs.rand(4), rs.randint(0, 5, size=2), rs.normal(), rs.permutation(6)


def test_a_random_state_made_inside_draws_numpys_stream(monkeypatch):
    monkeypatch.setenv("KILN_COST_MODEL", "0")
    assert kiln.explain(_random_state_inside)(x4, 1).graph_break_count == 0
    f = kiln.compile(_random_state_inside)
    for seed in (1, 2):
        for g, w in zip(f(x4, seed), _random_state_inside(x4, seed)):
            assert type(g) is type(w)
            np.testing.assert_array_equal(g, w)
    assert len(f._entries) == 1


def test_default_rng_without_a_seed_draws_new_numbers_each_call(monkeypatch):
    monkeypatch.setenv("KILN_COST_MODEL", "0")
    f = kiln.compile(lambda x: x + np.random.default_rng().random(4))
    assert not np.array_equal(f(x4), f(x4))


def test_default_rng_on_threads_draws_each_threads_own_stream(monkeypatch):
    import threading
    monkeypatch.setenv("KILN_COST_MODEL", "0")
    f = kiln.compile(lambda x, s: np.random.default_rng(s).random(big.shape) + x)
    f(big, 0)
    results = {}

    def run(seed):
        results[seed] = [f(big, seed) for _ in range(3)]
    threads = [threading.Thread(target=run, args=(s,)) for s in (1, 2, 3, 4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for seed, outs in results.items():
        for out in outs:
            np.testing.assert_array_equal(out, np.random.default_rng(seed).random(big.shape) + big)


def test_a_default_rng_leaving_the_graph_runs_as_python(monkeypatch):
    monkeypatch.setenv("KILN_COST_MODEL", "0")

    def returned(x):
        rng = np.random.default_rng(1)
        return rng, x + rng.random(4)

    def alive_at_a_break(x):
        rng = np.random.default_rng(1)
        y = x + rng.random(4)
        print("step")
        return y + rng.random(4)

    for fn in (returned, alive_at_a_break):
        got, want = kiln.compile(fn)(x4), fn(x4)
        np.testing.assert_array_equal(got[-1], want[-1])
    rng, _ = kiln.compile(returned)(x4)
    assert rng.random() == returned(x4)[0].random()   # the generator's state, as NumPy leaves it


def test_many_draws_feeding_one_kernel():
    # an unrolled loop: one fused kernel reads 70 draws (more arguments than the C
    # launcher takes: the kernel is called through cffi instead)
    def f(x, n):
        for i in range(n):
            x = x + np.random.random(4)
        return x
    _assert_runs_equal(_run_twice(f, [(x4, 70)]))


def test_a_float_draw_with_parameters_numpy_accepts_cannot_raise():
    # NumPy checks a distribution's parameters before drawing: numbers capture knows are
    # checked once; arrays (or a rejected number) keep the call raising.
    from kiln.ops.random import OPS
    assert not OPS["uniform"].raises((0.0, 1.0))
    assert not OPS["normal"].raises((0.0, 2.0))
    assert OPS["normal"].raises((0.0, -1.0))
    assert OPS["randint"].raises((0, 10))          # ints keep may_raise (dtype bounds)


class _Dropout:
    def __init__(self, p):
        self.p, self.mask = p, None

    def forward(self, x):
        self.mask = np.random.uniform(size=x.shape) > self.p
        return x * self.mask


def test_a_graph_that_cannot_raise_takes_no_generator_snapshot():
    # A snapshot of NumPy's global MT19937 costs ~230 us (MT19937.state copies 624 words
    # one by one): a dropout layer's step ran 3x slower than NumPy for it. A graph whose
    # ops cannot raise never reruns, so the entry and aot take none.
    def step(layer, x):
        return layer.forward(x)
    x = np.linspace(-1, 1, 64)
    for run in range(2):
        outs = []
        for g in (step, kiln.compile(step, backend="cpp")):
            np.random.seed(3)
            layer = _Dropout(0.3)
            outs.append([g(layer, x) for _ in range(3)] + [layer.mask, np.random.random()])
        for w, g in zip(*outs):
            np.testing.assert_array_equal(g, w)
    compiled = kiln.compile(step, backend="cpp")
    compiled(_Dropout(0.3), x)
    entry = compiled.cache_entries[0].check
    assert entry.__globals__["_kiln_graph"].generators == ()
    assert "_kiln_snapshot" not in entry.__code__.co_names


def test_a_draw_with_a_parameter_from_data_still_reruns_exactly():
    class _Noisy:
        def forward(self, x, s):
            self.last = np.random.normal(0.0, s, size=x.shape)
            return x + self.last

    def step(layer, x, s):
        return layer.forward(x, s)
    x = np.linspace(-1, 1, 8)
    outs = []
    for g in (step, kiln.compile(step, backend="cpp")):
        np.random.seed(5)
        res = []
        for s in (np.float64(1.0), np.float64(-1.0), np.float64(0.5)):
            try:
                res.append(g(_Noisy(), x, s))
            except ValueError as e:
                res.append(str(e))
        outs.append((res, np.random.random()))
    (want, wnext), (got, gnext) = outs
    assert wnext == gnext
    for w, g in zip(want, got):
        if isinstance(w, str):
            assert g == w
        else:
            np.testing.assert_array_equal(g, w)


def _walk_step(rng, barrier, n):
    pos = np.zeros(n, np.int64)
    hit = np.full(n, -1)
    pos += rng.choice(np.array([-1, 1]), size=n)
    new = (np.abs(pos) >= barrier) & (hit < 0)
    hit[new] = 7
    return hit, pos


def test_ops_that_cannot_raise_on_guarded_inputs_take_no_generator_snapshot():
    # random_walk_first_passage's graph after its break snapshot the generator on every
    # call (~1-2 us, 1.5x NumPy's time): a comparison of integers with a run-time Python
    # int (NumPy 2 compares any int exactly), a choice from a fixed population with
    # replacement and a put of an in-range int through a full-shape mask cannot raise.
    from kiln.ops.random import OPS
    compiled = kiln.compile(_walk_step, backend="cpp")
    for args in [(1, 6), (2, 6)]:
        want_rng, got_rng = np.random.default_rng(4), np.random.default_rng(4)
        want, got = _walk_step(want_rng, *args), compiled(got_rng, *args)
        for w, g in zip(want, got):
            np.testing.assert_array_equal(g, w)
        assert got_rng.bit_generator.state == want_rng.bit_generator.state
    entry = compiled.cache_entries[0].check
    assert entry.__globals__["_kiln_graph"].generators == ()
    params = {"size": (5,), "static": (), "generator": None}
    choice = OPS["choice"]
    assert not choice.raises((np.array([-1, 1]), None), params)
    assert choice.raises((np.array([-1, 1]), None))                       # params unknown
    assert choice.raises((np.array([-1, 1]), np.array([0.5, 0.5])), params)  # p may not sum to 1
    assert choice.raises((np.array([-1, 1]), None), {**params, "static": (("replace", False),)})
    assert choice.raises((np.zeros(0), None), params)


def test_a_comparison_that_may_raise_still_puts_the_generator_back():
    # A run-time int beyond float range meets a float array: NumPy's OverflowError after
    # the draw, and the generator advanced once, as NumPy leaves it.
    def f(rng, x, big):
        d = rng.random(3)
        return x < big, d
    compiled = kiln.compile(f, backend="cpp")
    x = np.linspace(0, 1, 4)
    want_rng, got_rng = np.random.default_rng(2), np.random.default_rng(2)
    for w, g in zip(f(want_rng, x, 5), compiled(got_rng, x, 5)):
        np.testing.assert_array_equal(g, w)
    with pytest.raises(OverflowError) as want:
        f(want_rng, x, 10 ** 400)
    with pytest.raises(OverflowError, match=str(want.value)):
        compiled(got_rng, x, 10 ** 400)
    assert got_rng.bit_generator.state == want_rng.bit_generator.state
