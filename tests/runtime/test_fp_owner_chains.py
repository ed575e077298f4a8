"""Random chains of the ops ops/fp_errors.py ``raises_where`` covers, fused into one
kernel, over edge values: the compiled call gives NumPy's exact list of floating-point
warnings (category, message, count, order), where several ops of the kernel may raise
one kind (the kernel computes which did) and where one may."""
from __future__ import annotations

import linecache
import warnings

import numpy as np
import pytest

import kiln

UNARY = ["log", "log2", "log10", "log1p", "sqrt", "exp", "exp2", "expm1", "sinh", "cosh",
         "arcsin", "arccos", "arccosh", "arctanh", "sin", "cos", "tan", "square", "reciprocal",
         "rad2deg"]
BINARY = ["add", "subtract", "multiply", "divide", "power", "fmod", "remainder", "hypot"]
# (a Python float beyond float32's range in a float32 chain warns "overflow encountered in
# cast" from NumPy's conversion: not this test's business)
CONSTANTS = {np.float64: ["0.0", "-1.0", "0.5", "2.0", "1e300", "y"],
             np.float32: ["0.0", "-1.0", "0.5", "2.0", "1e38", "y"]}
EDGES = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -3.0, 1e-3, 30.0, 100.0, 710.0, 1e20, -1e20,
         1e300, -1e300, np.inf, -np.inf, 1e-310, 0.999, -1.5]


def _chain(rng, length, dtype):
    lines, value = [], "x"
    for k in range(length):
        if rng.random() < 0.6:
            expr = f"np.{rng.choice(UNARY)}({value})"
        else:
            other = rng.choice(CONSTANTS[dtype])
            args = [value, other] if rng.random() < 0.7 else [other, value]
            expr = f"np.{rng.choice(BINARY)}({args[0]}, {args[1]})"
        lines.append(f"    t{k} = {expr}")
        value = f"t{k}"
    return "def chain(x, y):\n" + "\n".join(lines) + f"\n    return {value}\n"


def _compile(source, name):
    filename = f"<fp-chain {name}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    scope = {"np": np}
    exec(compile(source, filename, "exec"), scope)
    return scope["chain"]


def _warnings(fn, *args):
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        out = fn(*args)
    return out, [(w.category, str(w.message), w.lineno) for w in got]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("seed", range(12))
def test_random_chains_warn_as_numpy(seed, dtype):
    rng = np.random.default_rng([seed, np.dtype(dtype).itemsize])
    for case in range(4):
        source = _chain(rng, int(rng.integers(2, 7)), dtype)
        fn = _compile(source, f"{seed}-{case}-{np.dtype(dtype).name}")
        n = int(rng.choice([5, 19, 67]))   # (SIMD bodies and scalar tails)
        with np.errstate(all="ignore"):
            x = rng.choice(np.array(EDGES), n).astype(dtype)
            y = rng.choice(np.array(EDGES), n).astype(dtype)
        want_out, want = _warnings(fn, x, y)
        compiled = kiln.compile(fn, backend="cpp")
        for _ in range(2):
            out, got = _warnings(compiled, x.copy(), y.copy())
            assert got == want, source
            np.testing.assert_array_equal(np.isnan(out), np.isnan(want_out))


def _same_warnings(fn, make, calls=2):
    want_out, want = _warnings(fn, *make())
    compiled = kiln.compile(fn, backend="cpp")
    for _ in range(calls):
        args = make()
        out, got = _warnings(compiled, *args)
        assert got == want
        np.testing.assert_array_equal(np.isnan(out), np.isnan(want_out))
    return want


def log2_of_arcsin(y):
    return np.log2(np.arcsin(y))


def hypot_of_divided(x):
    return np.hypot(np.expm1(x) / 0.0, x)


def arccosh_plus(x):
    return np.arccosh(x) + 1.0


def half_cosh(x):
    return np.cosh(x) * 0.5


def entropy_terms_summed(p):
    return np.sum(p * np.log(p))


def log_times_sqrt_in_place(x):
    x *= 2.0
    return np.log(x) * np.sqrt(x - 3.0)


@pytest.mark.parametrize("fn, make, numpy_says", [
    # arcsin(2) and log2(arcsin(-0.3)) are both invalid: one kernel, two warnings
    (log2_of_arcsin, lambda: (np.array([0.5, 2.0, -0.3] * 30),),
     ["invalid value encountered in arcsin", "invalid value encountered in log2"]),
    (log2_of_arcsin, lambda: (np.array([0.5, np.nan, -0.3] * 30),),
     ["invalid value encountered in log2"]),
    # glibc's vector hypot of an infinity raised "invalid": it was taken for the divide's
    (hypot_of_divided, lambda: (np.linspace(0.1, 1.0, 1000),), ["divide by zero encountered in divide"]),
    (hypot_of_divided, lambda: (np.linspace(-1.0, 1.0, 1001),),
     ["divide by zero encountered in divide", "invalid value encountered in divide"]),
    # glibc's vector acosh(1.0) raises "invalid", its cosh(710.0) (finite) "overflow"
    (arccosh_plus, lambda: (np.ones(64),), []),
    (arccosh_plus, lambda: (np.array([0.5] + [1.0] * 63),), ["invalid value encountered in arccosh"]),
    (half_cosh, lambda: (np.full(64, 710.0),), []),
    (half_cosh, lambda: (np.full(64, 711.0),), ["overflow encountered in cosh"]),
    # a kernel writing its input computes its predicates on every launch (no second run)
    (log_times_sqrt_in_place, lambda: (np.array([0.0, 1.0, -1.0, 4.0] * 20),),
     ["divide by zero encountered in log", "invalid value encountered in log",
      "invalid value encountered in sqrt"]),
    (log_times_sqrt_in_place, lambda: (np.array([0.0, 1.0, 4.0] * 20),),
     ["divide by zero encountered in log", "invalid value encountered in sqrt"]),
    # a sum has no predicate for its inf - inf: it stays silent, the multiply's 0 * -inf
    # still warns (the kind was dropped for every op of the kernel)
    (entropy_terms_summed, lambda: (np.array([0.0, 0.25, 0.75]),),
     ["divide by zero encountered in log", "invalid value encountered in multiply"]),
    (entropy_terms_summed, lambda: (np.array([0.5, 0.25, 0.25] * 7),), []),
], ids=lambda v: getattr(v, "__name__", None) or "")
def test_kernels_name_the_ops_that_raised_each_kind(fn, make, numpy_says):
    want = _same_warnings(fn, make)
    assert [w[1] for w in want] == numpy_says


def test_a_threaded_kernel_tells_its_ops_apart():
    from kiln.config import config
    old = config.num_threads
    config.num_threads = 2
    try:
        x = np.linspace(0.1, 0.9, 2_000_000)
        x[-5] = 3.0      # arcsin(3): the last chunk, another thread's
        x[7] = -0.25     # log2(arcsin(-0.25))
        want = _same_warnings(log2_of_arcsin, lambda: (x,))
        assert [w[1] for w in want] == ["invalid value encountered in arcsin",
                                        "invalid value encountered in log2"]
    finally:
        config.num_threads = old


def test_the_second_body_runs_only_when_numpys_error_mode_warns():
    """A kernel that writes none of its inputs runs its predicates in a second body, which
    runtime/fpwarn.py launches only when a told kind was raised and NumPy's error mode
    warns of it: under np.errstate(...='ignore') (entropy-like code, log of zeros every
    call) no second run (it made such a call 2.5x slower, slower than NumPy)."""
    import warnings as _w

    import kiln
    from kiln.runtime import fpwarn

    def f(x, y):
        return np.log(x) - np.log(y) * 2.0

    x, y = np.array([0.0, 1.0, 2.0, 0.5]), np.array([1.0, 0.0, 3.0, -1.0])
    compiled = kiln.compile(f, backend="cpp")
    with np.errstate(all="ignore"):
        compiled(x, y)   # (compiles)
        before = fpwarn.stats["reruns"]
        np.testing.assert_allclose(compiled(x, y), f(x, y), rtol=1e-15)   # (log: 1 ulp)
        assert fpwarn.stats["reruns"] == before
    with _w.catch_warnings(record=True) as got:
        _w.simplefilter("always")
        compiled(x, y)
    with _w.catch_warnings(record=True) as want:
        _w.simplefilter("always")
        f(x, y)
    assert fpwarn.stats["reruns"] == before + 1
    assert [(str(w.message), w.lineno) for w in got] == [(str(w.message), w.lineno) for w in want]


def two_logs_of_zeros(x, y):
    return np.log(x) - np.log(y) * 2.0


def test_a_warning_shown_at_its_line_already_asks_for_no_second_run():
    """The default filter shows a warning once per line (the module's
    ``__warningregistry__``): the kernel raising the same told kind on every call (a log of
    zeros in each) reruns its second body once, not on every call, as long as the filters
    do not change (then the registry is stale and the warning shows again, as NumPy's);
    ops/value_warnings.py ``shown_at``."""
    from kiln.runtime import fpwarn

    compiled = kiln.compile(two_logs_of_zeros, backend="cpp")
    x, y = np.array([0.0, 1.0, 2.0, 0.5]), np.array([1.0, 0.0, 3.0, 4.0])
    with np.errstate(all="ignore"):
        want = two_logs_of_zeros(x, y)
        compiled(x, y)   # (compiles)
    for fn in (two_logs_of_zeros, compiled):
        with warnings.catch_warnings(record=True) as seen:
            warnings.resetwarnings()
            warnings.filterwarnings("ignore", category=ImportWarning)   # (Python's default)
            before = fpwarn.stats["reruns"]
            for _ in range(3):
                np.testing.assert_allclose(fn(x, y), want, rtol=1e-15)   # (log: 1 ulp)
            reruns = fpwarn.stats["reruns"] - before
            with warnings.catch_warnings():   # (the filters change: shown again)
                warnings.simplefilter("default")
                fn(x, y)
            reruns_after = fpwarn.stats["reruns"] - before
        if fn is two_logs_of_zeros:
            expected = [(str(w.message), w.lineno) for w in seen]
            assert len(expected) == 2
        else:
            assert [(str(w.message), w.lineno) for w in seen] == expected
            assert (reruns, reruns_after) == (1, 2)


def test_a_kernel_reading_back_what_it_stored_keeps_its_predicates_in_a_second_body():
    """``p = np.exp(x); p /= p.sum(); np.log(p).sum()`` is one kernel that stores p and
    reads it back in a later stage: a second run computes p again, so its predicates stay
    in the second body. They ran on every launch, in the pairwise sum's term, where the
    own-word updates kept log scalar (0.33x NumPy's time on 1e5 float64, now ~2.5x)."""
    from kiln.runtime import fpwarn

    def exp_normalize_log(x):
        p = np.exp(x)
        p /= p.sum()
        return np.log(p).sum()

    compiled = kiln.compile(exp_normalize_log, backend="cpp")
    x = np.linspace(-3.0, 3.0, 100_000)   # (p stored: on fewer, each stage recomputes it)
    compiled(x)
    before = fpwarn.stats["reruns"]
    np.testing.assert_allclose(compiled(x), exp_normalize_log(x), rtol=1e-13)
    assert fpwarn.stats["reruns"] == before   # (nothing raised: no second run)
    x[5] = -np.inf   # exp(-inf) = 0: log(0) divides by zero; the second body tells it
    got, want = _warnings(compiled, x), _warnings(exp_normalize_log, x)
    assert got[0] == want[0] and got[1] == want[1] and want[1]
    assert fpwarn.stats["reruns"] == before + 1


def test_the_second_body_is_built_only_when_first_wanted():
    """The second body is a library of its own (runtime/fpwarn.py SecondBody): the
    kernel's build leaves it out (a -O1 copy of the body, ~20% of the g++ time of every
    module with a kernel whose ops may raise one kind), and the first launch that wants it builds it,
    once; later ones reuse it."""
    import kiln
    from kiln.runtime import build, fpwarn

    def f(x, y):
        return np.log(x) - np.log(y) * 3.0

    x, y = np.array([0.5, 1.0, 2.0, 0.25]), np.array([1.0, 2.0, 3.0, 4.0])
    compiled = kiln.compile(f, backend="cpp")
    compiled(x, y)
    builds = build.stats["builds"]
    reruns = fpwarn.stats["reruns"]
    x2 = x.copy()
    x2[0] = 0.0
    for _ in range(3):
        (_, got), (_, want) = _warnings(compiled, x2, y), _warnings(f, x2, y)
        assert got == want and want
    assert fpwarn.stats["reruns"] == reruns + 3
    assert build.stats["builds"] == builds + 1   # (the second body, once)




def test_owned_words_are_as_wide_as_the_lanes_they_collect(capsys):
    """``y += 2.0 * x`` writes its input, so its kernel computes which op overflowed
    itself (for each block whose plain run raised it): float32 lanes OR into 32-bit words (in 64-bit ones GCC widened every
    mask: 0.6x NumPy's time on 1e5 float32), float64 lanes into 64-bit ones. The
    warnings stay NumPy's."""
    import re

    import kiln

    def axpy(y, x, z, w):
        y += 2.0 * x
        z += 2.0 * w
        return y, z

    n = 64
    args = [np.ones(n, np.float32), np.ones(n, np.float32), np.ones(n), np.ones(n)]
    args[1][3], args[0][9], args[1][9] = 3e38, 3e38, 1e38   # float32 multiply, add overflow
    args[3][5], args[2][7], args[3][7] = 1e308, 1e308, 5e307  # float64 multiply, add
    kiln.set_logs(output_code=True)
    try:
        got, got_warned = _warnings(kiln.compile(axpy), *[a.copy() for a in args])
    finally:
        kiln.set_logs()
    want, want_warned = _warnings(axpy, *[a.copy() for a in args])
    assert all(g.tobytes() == w.tobytes() for g, w in zip(got, want))
    assert got_warned == want_warned and len(want_warned) == 4
    words = re.findall(r"(uint\d+_t) own\d+ = 0", capsys.readouterr().err)
    assert sorted(set(words)) == ["uint32_t", "uint64_t"]


def test_a_kernel_writing_its_input_tells_which_op_raised_only_where_one_did(capsys):
    """``y += a * x`` overwrites y, so no second run can tell which op raised a kind. The
    kernel runs its plain body block by block keeping the old elements of y each block
    spans, and puts back and reruns with the predicates only a block that raised one
    (computing them on every launch made 1e5 float32 0.6x NumPy's time): a flat loop, and
    rows of y read beside a transposed x (two loops). Overflows and invalids in later
    blocks, in either op, warn as NumPy's; values bit-exact."""
    import kiln

    def axpy(y, a, x):
        y += a * x
        return y

    compiled = kiln.compile(axpy)
    cases = {"multiply": {1100: (1.0, 3e38)}, "add": {2500: (3e38, 1e38)},
             "both": {1100: (1.0, 3e38), 2999: (3e38, 1e38)}, "invalid": {2048: (np.inf, -np.inf)},
             "none": {}}
    for shape in ((3000,), (60, 50)):   # (several blocks; the second: x transposed)
        y = np.linspace(-1.0, 1.0, 3000, dtype=np.float32).reshape(shape)
        x = np.linspace(2.0, 3.0, 3000, dtype=np.float32).reshape(shape[::-1]).T
        kiln.set_logs(output_code=True)
        try:
            compiled(y.copy(), 2.0, x)
        finally:
            kiln.set_logs()
        code = capsys.readouterr().err
        plain = code[code.index("_body("):code.index("_told(")]
        assert "_blocks(" in code and "own0" not in plain
        for name, values in cases.items():
            y2, x2 = y.copy(), x.copy(order="K")   # (x keeps its layout)
            for i, (yi, xi) in values.items():
                y2.flat[i], x2.flat[i] = yi, xi
            (got, got_warned), (want, want_warned) = (_warnings(f, y2.copy(), 2.0, x2) for f in (compiled, axpy))
            assert got.tobytes() == want.tobytes(), name
            assert got_warned == want_warned, name
            assert len(want_warned) == {"both": 2, "none": 0}.get(name, 1), name


def test_a_kernel_does_not_write_over_a_draw_it_reduces_beside(capsys):
    """A dropout step's one kernel (the mean of the masked error, and the gradient) may
    raise a kind in several ops, so it tells which did: in a second body, run only after
    a launch raised it, while it overwrites nothing it reads. Written over the draws'
    buffer (in-place reuse, lowering/inplace.py) it computed the predicates on every
    launch, in the pairwise sum's term: 128 us for 64x64 where NumPy takes 34 (now 15).
    The gradient gets a buffer of its own; values, warnings and the generator's state
    stay NumPy's (keep = 0: 0 / 0 in the mask's divide, said once)."""
    from kiln.runtime import fpwarn

    def step(h, Y, rng, p_drop):
        keep = 1.0 - p_drop
        mask = (rng.random(h.shape) < keep) / keep
        err = np.maximum(h, 0) * mask - Y
        return 0.5 * np.mean(err ** 2), err * mask * (h > 0) / len(h)

    h, Y = np.linspace(-1.0, 1.0, 48).reshape(6, 8), np.linspace(0.5, -0.5, 48).reshape(6, 8)
    compiled = kiln.compile(step)
    kiln.set_logs(output_code=True)
    try:
        compiled(h, Y, np.random.default_rng(0), 0.1)
    finally:
        kiln.set_logs()
    code = capsys.readouterr().err
    assert "# in place" not in code and "_told_run" in code, code[:3000]
    for p_drop in (0.1, 0.5, 1.0):
        before = fpwarn.stats["reruns"]
        want_rng, got_rng = np.random.default_rng(1), np.random.default_rng(1)
        (got, got_warned), (want, want_warned) = \
            _warnings(compiled, h, Y, got_rng, p_drop), _warnings(step, h, Y, want_rng, p_drop)
        assert got_warned == want_warned and bool(want_warned) == (p_drop == 1.0)
        assert all(np.asarray(g).tobytes() == np.asarray(w).tobytes() for g, w in zip(got, want))
        assert got_rng.bit_generator.state == want_rng.bit_generator.state
        assert fpwarn.stats["reruns"] == before + (p_drop == 1.0)


class _CountedPattern:
    """A warnings filter's message pattern that matches nothing and counts the times the
    filters were matched against a warning (by Python's warn_explicit or by kiln)."""

    def __init__(self) -> None:
        self.calls = 0

    def match(self, text: str) -> None:
        self.calls += 1


def wrapped_negations(a):
    c = np.uint32(0)
    for k in range(a.shape[0]):
        c = c ^ (np.uint32(0) - np.uint32(a[k]))   # overflow in scalar subtract, every call
    return c


def test_a_flag_raised_on_every_call_matches_the_filters_once():
    """A loop whose native run raises a flag NumPy warns for on every call (crc32's
    ``0 - x`` on uint32), the warning shown at its line already: each call asked whether
    the filters ignore it, and read their version by a probe warning, matching every
    filter in Python and in warn_explicit (3.7 of crc32's 5.9 us a call on one byte); the
    answers are kept while the filters stay the same (value_warnings ``_action_at``,
    ``_filters_version``)."""
    compiled = kiln.compile(wrapped_negations, backend="cpp")
    a = np.arange(1, 6, dtype=np.uint8)
    with warnings.catch_warnings(record=True) as seen:
        warnings.resetwarnings()
        warnings.filterwarnings("ignore", category=ImportWarning)   # (Python's default)
        pattern = _CountedPattern()
        warnings.filters.insert(0, ("ignore", pattern, UserWarning, None, 0))
        warnings._filters_mutated()
        for _ in range(2):                 # (the warning shown; the probe's mark set)
            assert compiled(a) == wrapped_negations(a)
        first = pattern.calls
        for _ in range(4):
            assert compiled(a) == wrapped_negations(a)
    assert [str(w.message) for w in seen] == ["overflow encountered in scalar subtract"]
    assert pattern.calls == first          # (3 matches a call before, none from NumPy's)


def _warned_calls(fn, a, monkeypatch) -> tuple[list, int]:
    """Messages ``fn(a)`` shows over a run of calls between which the filters' version
    moves (a filter added; a catch_warnings entered and left, which changes no filter but
    the version), and how often kiln asked ``shown_at`` on the calls after the first two."""
    from kiln.runtime import fpwarn
    asked = [0]
    real = fpwarn.shown_at

    def counted(*at):
        asked[0] += 1
        return real(*at)
    with warnings.catch_warnings(record=True) as seen:
        warnings.resetwarnings()
        warnings.filterwarnings("ignore", category=ImportWarning)   # (Python's default)
        for _ in range(2):
            fn(a)
        monkeypatch.setattr(fpwarn, "shown_at", counted)
        for _ in range(3):
            fn(a)
        warnings.filterwarnings("ignore", category=DeprecationWarning)
        fn(a)
        fn(a)
        with warnings.catch_warnings():
            pass
        fn(a)
        monkeypatch.setattr(fpwarn, "shown_at", real)
    return [str(w.message) for w in seen], asked[0]


def test_a_flag_raised_on_every_call_asks_once_per_filters_version(monkeypatch):
    """crc32 of one byte warns on every native run (``0 - x`` on uint32): after its
    warning was shown, each call asked ignored_at and shown_at for every site (~2-3 us of a
    call's ~5, loaded); the answer "nothing to show" is kept for the flags and the filters'
    token (value_warnings ``filters_token``: their epoch and CPython's version), so a new
    version (a filter added, a catch_warnings left) shows the warning again, as NumPy."""
    a = np.arange(1, 6, dtype=np.uint8)
    want, _ = _warned_calls(wrapped_negations, a, monkeypatch)
    got, asked = _warned_calls(kiln.compile(wrapped_negations, backend="cpp"), a, monkeypatch)
    assert got == want == ["overflow encountered in scalar subtract"] * 3
    assert asked == 3        # (twice after the new filter, once after catch_warnings: it was 6)
