"""Fresh arrays and the writes into them (kiln/lowering/fills.py): np.zeros/np.empty/
np.full followed by slice or element assignments compile into one kernel that writes the
final array once. Results are compared with NumPy; kernel and allocation counts pin the
fusion."""
import re

import numpy as np
import pytest

import kiln
from kiln.runtime import cpp_backend

from .helpers import assert_same


def _compiled(fn):
    seen = []

    def backend(graph, example_inputs):
        seen.append(cpp_backend(graph, example_inputs))
        return seen[-1]

    return kiln.compile(fn, backend=backend), seen


def grid(x):
    n = x.shape[0]
    z = np.zeros((n, n, 3))
    z[:, :, 0] = x.reshape(-1, 1)
    z[:, :, 1] = x
    return z.reshape(n * n, 3)


def rhs(t, x, y, z, sigma, rho, beta):
    yprime = np.empty(3)
    yprime[0] = sigma * (y - x)
    yprime[1] = x * (rho - z) - y
    yprime[2] = x * y - beta * z
    return yprime


def border(x):
    a = np.ones(x.shape)
    a[0, :] = 0.0
    a[-1] = 0.0
    a[:, 0] = 0.0
    a[1:3, -1] = 7
    return a * x


def full_scaled(x):
    a = np.full(x.shape, 2.5, dtype=np.float32)
    a *= 2
    b = np.zeros_like(x, dtype=np.int64)
    b[1] = 3
    return a, b


def partial_row(x):
    y = np.zeros((4, x.shape[0]))
    y[2] = x               # a whole row: the value spans a full dim
    y[1, 1:3] = -2.0       # a number into part of a row
    return y


def repeated(x):
    n = x.shape[0]
    y = np.empty(n * 4)
    y[:n] = x
    y[n:] = np.repeat(x, 3)   # read at (i - n) // 3: no repeated temporary
    return y


def repeated_axis(x):
    return np.repeat(x.reshape(2, -1) * 2, 2, axis=1) - 1


def array_of_scalars(t, s, sigma, rho, beta):
    x, y, z = s
    return np.array([sigma * (y - x), x * (rho - z) - y, x * y - beta * z])


def joined(a, b):
    c = np.concatenate([a * 2, b.astype(np.float32), a[:, :1] - 1], axis=1)
    return np.stack([c, np.abs(c - 3)], axis=-1)


CASES = [
    (repeated, (np.arange(-3.0, 3.0),)),
    (repeated_axis, (np.arange(-3.0, 3.0),)),
    (array_of_scalars, (0.0, np.array([1.0, -2.0, 0.5]), 10.0, 28.0, 8.0 / 3.0)),
    (joined, (np.arange(6.0).reshape(2, 3), np.arange(4, dtype=np.int16).reshape(2, 2))),
    (grid, (np.linspace(0.0, 1.0, 7),)),
    (rhs, (0.0, 1.0, 2.0, 3.0, 10.0, 28.0, 8.0 / 3.0)),
    (border, (np.arange(30.0).reshape(5, 6),)),
    (full_scaled, (np.ones((3, 4)),)),
    (partial_row, (np.arange(5.0),)),
]


@pytest.mark.parametrize("fn,args", CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_writes_into_fresh_arrays_are_one_kernel(fn, args):
    compiled, seen = _compiled(fn)
    want = fn(*args)
    got = compiled(*args)
    for i, (g, w) in enumerate(zip(got if isinstance(got, tuple) else (got,),
                                   want if isinstance(want, tuple) else (want,))):
        assert_same(f"out{i}", w, g, rtol=0, atol=0)
    [art] = [c.kiln_artifact for c in seen]
    assert len(art.kernel_names) == 1, art.kernel_names
    assert "_ext_" not in art.wrapper.split("def call")[1]     # no extern copy or fill
    outs = len(want) if isinstance(want, tuple) else 1
    assert art.wrapper.count("_empty(") == outs                # each output allocated once


def test_a_returned_fresh_array_stays_numpys_call():
    compiled, seen = _compiled(lambda n: np.zeros((n, 3)) + 0 * n)
    assert_same("zeros", np.zeros((4, 3)), compiled(4), rtol=0, atol=0)
    compiled, seen = _compiled(lambda x: (np.zeros(x.shape), x + 1))
    got = compiled(np.ones(5))
    assert "_ext_zeros" in seen[0].kiln_artifact.wrapper     # calloc'd pages, never touched
    assert_same("zeros", np.zeros(5), got[0], rtol=0, atol=0)


def test_several_returned_fresh_arrays_each_get_their_own_call():
    # Regression: realized fills were remembered by id() of a closure nothing kept alive,
    # so a later fill could reuse the id and be handed an earlier one's buffer
    # (zeros_like(c) came back with a's shape; on 3.13, an AOT backward's zero gradient).
    def fresh(a, b, c, d):
        return (np.zeros_like(a), np.ones_like(b), np.zeros_like(c), np.full_like(d, 2.0),
                np.zeros(3), np.empty_like(b))

    compiled, seen = _compiled(fresh)
    args = (np.ones((3, 4)), np.ones(4), np.ones((2, 2, 2)), np.ones(5))
    got = compiled(*args)
    want = fresh(*args)
    for i, (g, w) in enumerate(zip(got[:-1], want)):   # (empty_like's values are garbage)
        assert_same(f"out{i}", w, g, rtol=0, atol=0)
    assert (got[-1].shape, got[-1].dtype) == (want[-1].shape, want[-1].dtype)
    assert not any(np.shares_memory(g, h) for i, g in enumerate(got) for h in got[i + 1:])


def test_values_read_only_inside_their_region_are_read_at_clamped_indices():
    def concat_repeat(x):
        n = x.shape[0]
        y = np.empty(3 * n)
        y[:n] = x                   # x is read at i for i < n only
        y[n:] = np.repeat(x, 2)
        return y

    def jacobi(u):
        v = u.copy()
        v[1:-1, 1:-1] = 0.25 * (u[1:-1, 2:] + u[1:-1, :-2] + u[2:, 1:-1] + u[:-2, 1:-1])
        return v

    for fn, x in [(concat_repeat, np.arange(5.0)), (jacobi, np.arange(42.0).reshape(6, 7) ** 1.5)]:
        compiled, seen = _compiled(fn)
        assert_same(fn.__name__, fn(x), compiled(x), rtol=0, atol=0)
        art = seen[0].kiln_artifact
        assert len(art.kernel_names) == 1, art.kernel_names
        assert "_ext_index_put" not in art.wrapper and " ? " in art.cpp


def test_loops_split_where_a_select_changes_arms():
    # each segment between the region's bounds is a loop of its own: the compiler folds
    # the select there (no clamped gather of the other arm per element)
    from kiln.runtime.backend import generate

    def concat_repeat(x):
        n = x.shape[0]
        y = np.empty(4 * n)
        y[:n] = x
        y[n:] = np.repeat(x, 3)
        return y

    def border(x):
        a = np.ones(x.shape)
        a[0, :] = 0.0
        a[:, -1] = 0.0
        return a * x

    # 1.2M elements: two threads, each chunk clamped to the segments
    cases = [(concat_repeat, np.arange(300_000.0), {"x0": [300_000]}),
             (border, np.arange(600.0).reshape(20, 30), {"x0": [1], "x1": [29]})]
    for fn, x, cuts in cases:
        compiled, seen = _compiled(fn)
        assert_same(fn.__name__, fn(x), compiled(x), rtol=0, atol=0)
        art = seen[0].kiln_artifact
        plain = art.cpp.split("_told(")[0]   # (the body; not its copy that tells which op raised a flag)
        assert plain.count("x0 in [") == len(cuts["x0"]) + 1, art.cpp
        graphs = []
        kiln.compile(fn, backend=lambda g, ex: graphs.append((g, ex)) or g)(x)
        (plan,) = generate(*graphs[0]).plans.values()
        assert plan.cuts == cuts


def test_casts_and_out_of_range_values_follow_numpy():
    def f(x):
        a = np.zeros(3, dtype=np.int8)
        a[0] = 100
        a[1:] = x                   # int64 into int8: 'same_kind', C wraps as NumPy does
        return a

    compiled, _ = _compiled(f)
    x = np.array([300, -5])
    assert_same("a", f(x), compiled(x), rtol=0, atol=0)

    def g():
        a = np.zeros(2, dtype=np.uint8)
        a[0] = 300                  # NumPy raises OverflowError
        return a

    with pytest.raises(OverflowError):
        g()
    with pytest.raises(OverflowError):
        kiln.compile(g)()


def test_float64_exp_log_chain_calls_vector_math():
    # exp, an in-place divide by the sum, log, sum: every loop must run exp/log as SIMD code
    # (GCC 12 dropped libmvec's vector calls once it specialized the kernel body for its
    # range). With FMA exp is kiln's own, inline (cpp_prelude.h 'exp'): nothing named exp
    # is imported and the loops use vector FMAs (512-bit with AVX-512); log (glibc's scalar one
    # where NumPy's is: svml.py numpy_scalar_libm), and exp without FMA, are libmvec's vector variants.
    import shutil
    import subprocess

    cpu = open("/proc/cpuinfo").read()
    if shutil.which("nm") is None or "avx2" not in cpu:
        pytest.skip("needs nm and an AVX2 CPU (libmvec's vector variants)")

    def chain(x):
        p = np.exp(x)
        p /= p.sum()
        return np.log(p).sum()

    compiled, seen = _compiled(chain)
    x = np.random.default_rng(0).standard_normal(1000)
    np.testing.assert_allclose(compiled(x), chain(x), rtol=1e-12)
    so = seen[0].kiln_artifact.so
    symbols = subprocess.run(["nm", "-D", "--undefined-only", so], capture_output=True,
                             text=True, check=True).stdout
    from kiln.lowering.cpp_ops import svml_ufunc
    if svml_ufunc("exp", kiln.config.cxx_flags) and svml_ufunc("log", kiln.config.cxx_flags):
        # NumPy's SVML exp and log (svml.py): the support object, linked into the module,
        # defines their vector variants; the loops call them
        if shutil.which("objdump") is None:
            pytest.skip("needs objdump")
        code = subprocess.run(["objdump", "-d", so], capture_output=True, text=True, check=True).stdout
        for name in ("exp", "log"):
            assert re.search(rf"call\s+\w+\s+<_ZGV\w+_kiln_np_{name}>", code), name
        return
    flags = cpu.replace("\n", " ")
    own = " fma " in flags and "-march=native" in kiln.config.cxx_flags
    # (without AVX512_SKX NumPy's float64 log is glibc's scalar log, and so is the kernel's)
    from kiln.lowering.cpp_ops import libm_scalar_ufunc
    if libm_scalar_ufunc("log"):
        assert "v_log" not in symbols and re.search(r"\blog\b", symbols), symbols
    else:
        assert "_ZGV" in symbols and "v_log" in symbols, symbols
    if not own:
        assert "_ZGV" in symbols and "v_exp" in symbols, symbols
        return
    assert not re.search(r"\b(_ZGV\w+_)?exp\b", symbols), symbols
    if shutil.which("objdump") is not None:
        code = subprocess.run(["objdump", "-d", so], capture_output=True, text=True,
                              check=True).stdout
        # (GCC prefers 256-bit vectors on some AVX-512 processors: Ice Lake's -march=native)
        assert re.search(r"vfmadd\w+\s.*[yz]mm", code), "the exp loop did not vectorize"


def _select(m, a):
    return np.where(m, a, -a)


def _life_rule(alive, counts):
    return np.logical_or(np.logical_and(alive, (counts == 2) | (counts == 3)),
                         np.logical_and(~alive, counts == 3))


def _nanmax(x):
    return np.nanmax(x)


def _fraction_positive(x):
    return (x > 0).mean()


def _clip_by_min_max(x):
    return np.minimum(np.maximum(x, -0.5), 0.5) * 2


def _two_relaxations(d):
    return np.minimum(d, np.minimum(d[:, 0, None] + d[None, 0, :], d[:, 1, None] + d[None, 1, :]))


_NAN_GRID = np.where(np.arange(1024).reshape(32, 32) % 11 == 0, np.nan,
                     np.cos(np.arange(1024.0)).reshape(32, 32))


@pytest.mark.parametrize("fn, args", [
    (_clip_by_min_max, (np.where(np.arange(1000) % 7 == 0, np.nan, np.sin(np.arange(1000.0))),)),
    (_two_relaxations, (_NAN_GRID,)),
    (_two_relaxations, (np.abs(_NAN_GRID.T),))])
def test_nested_nan_propagating_minimum_and_maximum_are_unordered_tests(fn, args):
    """GCC 12 left nested ``(x < y || x != x) ? x : y`` selects scalar: a clip spelled
    np.minimum(np.maximum(x, lo), hi) ran at 0.7x NumPy, a Floyd-Warshall step at 0.6x
    (9x and 2.4x now). The kernels test ``__builtin_isunordered`` and give x + y, the NaN
    NumPy gives, bit for bit."""
    compiled, seen = _compiled(fn)
    got, want = compiled(*args), fn(*args)
    np.testing.assert_array_equal(got, want)
    assert np.array_equal(np.signbit(got), np.signbit(want))
    assert seen[0].kiln_artifact.cpp.count("__builtin_isunordered") >= 2


@pytest.mark.parametrize("fn, args", [
    (_select, (np.arange(1000) % 3 == 0, np.arange(1000.0))),
    (_life_rule, (np.arange(1000) % 3 == 0, (np.arange(1000) % 9).astype(np.int8))),
    (_nanmax, (np.where(np.arange(1000) % 7 == 0, np.nan, np.arange(1000.0)),)),
    (_fraction_positive, (np.arange(1000.0) - 300,))])
def test_loops_on_bool_arrays_vectorize(fn, args):
    # GCC 12 vectorizes no loop that loads a C++ bool beside wider types, nor one whose
    # bools come from && and || mixed with other widths: np.where(mask, a, b) on float64
    # ran at 0.4-0.8x NumPy, a game of life rule on int8 counts at 0.3x. Bool elements are
    # read as bytes and combined with & and |. np.nanmax (max of where(isnan(x), -inf, x)
    # beside all(isnan(x))) stayed scalar while max's NaN flag was acc != acc: 4-9x NumPy;
    # so did a bool converted to float by a C cast ((x > 0).mean() at 1.5x NumPy).
    import shutil
    import subprocess

    if shutil.which("objdump") is None or "avx2" not in open("/proc/cpuinfo").read() \
            or "-march=native" not in kiln.config.cxx_flags:
        pytest.skip("needs objdump and an AVX2 CPU")
    compiled, seen = _compiled(fn)
    np.testing.assert_array_equal(compiled(*args), fn(*args))
    code = subprocess.run(["objdump", "-d", "--no-show-raw-insn", seen[0].kiln_artifact.so],
                          capture_output=True, text=True, check=True).stdout
    body = next(f for f in code.split("\n\n") if "_body" in f.split("\n")[0])
    assert re.search(r"[yz]mm", body), f"the {fn.__name__} loop did not vectorize"


def test_numpy_scalars_written_into_int_arrays_are_range_checked():
    def f(s):
        x = np.zeros(3, dtype=np.int8)
        x[0] = s
        return x

    for s in (np.uint8(255), np.int64(300), np.int8(3)):
        try:
            want = ("ok", f(s))
        except OverflowError as e:
            want = ("raise", type(e))
        try:
            got = ("ok", kiln.compile(f)(s))
        except OverflowError as e:
            got = ("raise", type(e))
        assert got[0] == want[0], (s, got, want)
        if want[0] == "ok":
            assert_same("x", want[1], got[1], rtol=0, atol=0)


def test_a_region_write_is_handler_calls_on_loop_indices():
    # y = zeros(6); y[1:4] = x: conditions on the loop index, a clamped load, one select;
    # the same closure feeds any handler (no C text in lowering).
    from kiln.ir import trace
    from kiln.lowering.handler import RecordingHandler
    from kiln.lowering.loop_ir import Affine
    from kiln.lowering.lower import GraphLowering
    from kiln.ops import F, TensorMeta

    def f(x):
        return F.index_put(F.zeros(shape=(6,), dtype=np.dtype(np.float64)), (slice(1, 4),), x)

    x = np.arange(3.0)
    low = GraphLowering(trace(f, [TensorMeta((3,), np.dtype(np.float64))], ["x"]), [x])
    low.run()
    (node,) = low.nodes
    rec = RecordingHandler()
    node.value.load(rec, [Affine.var("i")])
    assert [fn for fn, _ in rec.calls] == ["greater_equal", "less", "logical_and", "clip", "where"]
    assert rec.indices == [Affine.var("i")] * 2 and rec.bound == ["_bound0"]
    assert ("x", Affine(-1, {"_bound0": 1})) in [(b.name, ix) for b, ix in rec.loads]


def test_dynamic_sizes_keep_numpys_own_fills_and_writes():
    from kiln.ir import trace
    from kiln.ops import F, TensorMeta

    def f(x):
        y = F.index_put(F.zeros(shape=(2, 5), dtype=np.dtype(np.float64)), (0, slice(1, 3)), 7.0)
        return F.add(y, F.sum(x))

    x = np.arange(4.0)
    g = trace(f, [TensorMeta(x.shape, x.dtype)], ["x"])
    g.placeholders[0].meta["dynamic_dims"] = (0,)
    fn = cpp_backend(g, [x])
    for n in (3, 9):
        xn = np.arange(float(n))
        assert_same("y", g(xn), fn(xn), rtol=0, atol=0)


def _clamp(x):
    y = x.copy()
    y[y < 0] = 0.0
    return y


def _mask_rows(x, m):
    y = x * 2
    y[m] = np.arange(x.shape[1])    # one value per column, broadcast over selected rows
    return y


def _mask_into_argument(x):
    x[x > 1] = -1.0
    return x * 2


def _mask_int_cast(a):
    b = a + 1
    b[b % 3 == 0] = 7
    c = a * 2
    c[c > 4] = 2.7      # a float into an int array: NumPy's casting (its own write)
    return b, c


def _mask_chain(x):
    y = x * 1.5
    y[y > 2] = 2
    y[y < 0.5] = np.float32(0.5)
    return y, y > 1


def _mask_per_point(x):
    y = x.copy()
    m = y > 0
    y[m] = x[m] * 3     # one value per selected point: NumPy's write
    return y


MASK_CASES = [
    (_clamp, (np.linspace(-2.0, 2.0, 11),)),
    (_mask_rows, (np.arange(12.0).reshape(4, 3), np.array([True, False, True, True]))),
    (_mask_into_argument, (np.linspace(-3.0, 3.0, 9),)),
    (_mask_int_cast, (np.arange(12).reshape(3, 4),)),
    (_mask_chain, (np.linspace(-2.0, 2.0, 25).reshape(5, 5).astype(np.float32),)),
    (_mask_per_point, (np.linspace(-1.0, 1.0, 8),)),
]


@pytest.mark.parametrize("fn,args", MASK_CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_mask_writes_match_numpy(fn, args):
    compiled, seen = _compiled(fn)
    mine = [a.copy() for a in args]
    want = fn(*[a.copy() for a in args])
    got = compiled(*mine)
    for i, (g, w) in enumerate(zip(got if isinstance(got, tuple) else (got,),
                                   want if isinstance(want, tuple) else (want,))):
        assert_same(f"out{i}", w, g, rtol=0, atol=0)
    expect_args = [a.copy() for a in args]
    fn(*expect_args)
    for a, b in zip(mine, expect_args):
        assert_same("argument", b, a, rtol=0, atol=0)


def test_a_mask_write_with_one_value_is_a_select_in_the_kernel():
    compiled, seen = _compiled(_clamp)
    compiled(np.linspace(-1.0, 1.0, 50))
    [art] = [c.kiln_artifact for c in seen]
    assert len(art.kernel_names) == 1, art.kernel_names
    assert "_ext_" not in art.wrapper.split("def call")[1]


def test_many_element_writes_into_one_fresh_array_stay_within_the_lowering():
    # An unrolled loop of element writes into one np.zeros (npbench's azimint_naive): each
    # write wrapped the selects of the ones before, and past ~100 the lowering passed
    # Python's recursion limit. Past MAX_REGION_WRITES the writes so far become a buffer.
    import warnings

    def binned_means(x, n):
        res = np.zeros(n)
        for i in range(n):
            res[i] = x[i::n].mean()
        return res

    x = np.linspace(0.0, 1.0, 3000) ** 2
    with warnings.catch_warnings(record=True) as caught:   # no "internal error" fallback
        warnings.simplefilter("always")   # (an "error" filter would run NumPy's program)
        for n in (10, 150):
            np.testing.assert_allclose(kiln.compile(binned_means)(x, n), binned_means(x, n), rtol=1e-12)
    assert not caught, [str(w.message) for w in caught]


def test_rows_written_into_a_large_fresh_matrix_match_numpy():
    # (values only: which writes become selects is not asserted here)
    def rows(v):
        out = np.zeros((300, 300))
        for i in range(8):
            out[i, i:] = v[i:] * i
        return out

    v = np.linspace(0.0, 1.0, 300)
    np.testing.assert_array_equal(kiln.compile(rows)(v), rows(v))


def test_a_repeat_of_an_expensive_value_computes_it_once():
    # np.repeat read inside the consumer recomputed its input per repeated element: the
    # twiddle factors of a Stockham FFT (a complex exp repeated 16,384 times) ran 10x
    # slower than NumPy. Now the value is a buffer of its own size.
    def twiddle(k, x):
        tmp = np.exp(-2.0j * np.pi * k / 8.0)
        return np.repeat(tmp, 1000) * x

    k = np.arange(8.0)
    x = np.linspace(0.0, 1.0, 8000) + 0.5j
    compiled, seen = _compiled(twiddle)
    np.testing.assert_allclose(compiled(k, x), twiddle(k, x), rtol=1e-13)
    cpp = seen[0].kiln_artifact.cpp
    exps = [block for block in cpp.split("// kiln_fused_")[1:] if "kiln_cexp(" in block]
    assert exps and all("iterates 8 " in block for block in exps), cpp


JOINS = [   # (function, what, is its loop cut at the pieces' bounds)
    (lambda a, b: np.concatenate([a, b]) * 2, "rows", True),
    (lambda a, b: np.concatenate([a, b[:, :200][::-1], a], axis=1) - 1, "columns, a reversed piece", True),
    (lambda a, b: np.vstack([a, b, a, b]) * 3, "four pieces", True),
    (lambda a, b: np.stack([a, a * 2, a + 1]).mean(axis=0), "a stack reduced", False),
    (lambda a, b: np.concatenate([a, b]).sum(axis=0), "a column sum over the join", False),
    (lambda a, b: np.concatenate([a.T, b.T]) + 1, "transposed pieces", False),
    (lambda a, b: np.concatenate([a, b.astype(np.int32)]) / 3, "a cast piece", True),
]


@pytest.mark.parametrize("fn, what, cut", JOINS, ids=[w for _, w, _ in JOINS])
def test_a_join_of_few_large_pieces_is_a_select_in_its_consumer(fn, what, cut):
    # np.concatenate([A, B]) * 2 at 1000 x 1000 ran at 0.6-0.7x NumPy as NumPy's copy then
    # a kernel; as a select among the pieces, cut at their bounds, it is one pass
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((300, 200)), rng.standard_normal((300, 200)) * 7
    compiled, seen = _compiled(fn)
    for _ in range(2):   # (reductions: NumPy's order or another, within its slack)
        assert_same(what, fn(a, b), compiled(a, b), rtol=1e-13, atol=0 if cut else 1e-11)
    art = seen[0].kiln_artifact
    assert "_ext_concatenate" not in art.wrapper and "_ext_stack" not in art.wrapper
    if cut:
        assert " in [" in art.cpp    # segments that each read one piece: no select per element


def test_a_join_of_many_large_pieces_stays_numpys_call():
    pieces = [np.full((100, 50), float(i)) for i in range(6)]
    compiled, seen = _compiled(lambda *p: np.concatenate(p) * 2)
    assert_same("six pieces", np.concatenate(pieces) * 2, compiled(*pieces), rtol=0)
    assert "_ext_concatenate" in seen[0].kiln_artifact.wrapper


TRIANGLES = [   # (function, input shape, dtype, rtol)
    (lambda a: np.tril(a) * a, (200, 300), np.float64, 0),
    (lambda a: np.triu(a, 2) - 1, (4, 50, 60), np.float32, 0),
    (lambda a: np.tril(a, -3) * 2, (70,), np.float64, 0),            # a 1-d row, broadcast
    (lambda a: np.triu(a.T, -1) + 1, (40, 30), np.float64, 0),        # a transposed input
    (lambda a: np.tril(np.exp(a), 5), (30, 30), np.float64, 1e-15),   # computed (libm's ulp)
    (lambda a: np.tril(a) | np.triu(a), (30, 40), np.bool_, 0),
    (lambda a: np.triu(a, 1) * 3, (30, 40), np.int8, 0),
    (lambda a: np.tril(a) * a, (20, 20), np.complex128, 0),
]


@pytest.mark.parametrize("fn, shape, dtype, rtol", TRIANGLES)
def test_tril_and_triu_are_selects_in_their_consumer(fn, shape, dtype, rtol):
    # np.tril(A) * A was NumPy's tril then a kernel (0.78-0.84x NumPy at 1000 x 1000);
    # as a select on the position it is one pass (2.2x)
    rng = np.random.default_rng(5)
    a = rng.standard_normal(shape) * 4
    a = (a > 0) if dtype == np.bool_ else (a + 1j * a[..., ::-1] if dtype == np.complex128 else a).astype(dtype)
    if dtype == np.float64 and a.ndim == 2:
        a[0, -1], a[-1, 0] = np.nan, -0.0   # NaN in the zeroed triangle, a signed zero kept
    compiled, seen = _compiled(fn)
    assert_same("triangle", fn(a), compiled(a), rtol=rtol)
    assert "_ext_tri" not in seen[0].kiln_artifact.wrapper
