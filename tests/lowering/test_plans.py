"""Kernel plans and the memory plan (kiln/lowering/plan.py, memory.py): decided once, as
data, before any text; renderers print each kernel once."""
import numpy as np
import pytest

from kiln.ir import trace
from kiln.lowering import cpp_stages
from kiln.lowering.cpp import CppEmitter, CppRenderer
from kiln.lowering.triton import TritonRenderer
from kiln.ops import F, TensorMeta
from kiln.runtime.backend import generate

from .helpers import assert_same, run_both


def _gen(fn, inputs, renderer=None):
    g = trace(fn, [TensorMeta(a.shape, a.dtype) for a in inputs], [f"a{i}" for i in range(len(inputs))])
    return g, generate(g, inputs, renderer)


def _softmax(x):
    m = F.max(x, axis=1, keepdims=True)
    e = F.exp(F.subtract(x, m))
    return (F.true_divide(e, F.sum(e, axis=1, keepdims=True)),)


X = np.random.default_rng(3).standard_normal((16, 40)).astype(np.float32)


def test_cpp_plans_say_loops_blocking_row_arrays_and_accumulators():
    _, gen = _gen(_softmax, [X])
    (plan,) = gen.plans.values()
    assert plan.outer_loops == [("x0", "16")] and plan.inner_loops == [("r1", "40")]
    assert plan.blocked is None and not plan.split_inner
    assert [dt for dt, _ in plan.row_arrays.values()] == [np.float32]   # exp, kept per row
    assert [span for _, span in plan.row_arrays.values()] == [40]
    assert sorted(str(d) for d in plan.accumulators.values()) == ["float32", "float64"]  # max, sum
    # A column sum runs blocked and accumulates in the output dtype, as NumPy does.
    _, gen = _gen(lambda x: (F.sum(x, axis=0),), [X])
    (plan,) = gen.plans.values()
    assert plan.blocked == "x1" and list(plan.accumulators.values()) == [np.float32]
    # A sum over everything has no outer loop: its inner loop may split across threads.
    _, gen = _gen(lambda x: (F.sum(x),), [X])
    (plan,) = gen.plans.values()
    assert plan.split_inner and plan.inner_loops == [("r0", "640")]   # collapsed
    assert plan.cost > 1


def test_a_column_reduction_reads_whole_rows_in_one_block_up_to_a_limit():
    """A column reduction's block is all its kept points up to WHOLE_ROW_POINTS, so each
    row is read from start to end as NumPy reads it (blocks of 256 points read 2000x5000
    float64 in 2 KB pieces, a new prefetch stream each: 0.67x NumPy, now ~1.1x); past
    it, and on dynamic sizes, BLOCK points."""
    from kiln.lowering.cpp_stages import BLOCK, WHOLE_ROW_POINTS

    def blocks(shape):
        _, gen = _gen(lambda x: (F.sum(x, axis=0),), [np.zeros(shape, np.float32)])
        (plan,) = gen.plans.values()
        (text,) = [k for k in gen.cpp.split("extern \"C\"") if "x1_b +=" in k][:1] or [gen.cpp]
        return plan.blocked, plan.block, text

    assert blocks((3, 5000))[:2] == ("x1", 5000) and "x1_b += 5000" in blocks((3, 5000))[2]
    assert blocks((3, WHOLE_ROW_POINTS + 1))[:2] == ("x1", BLOCK)
    assert blocks((3, 40))[:2] == ("x1", BLOCK)   # (fewer points than a block: as before)


def test_each_kernel_body_is_printed_once(monkeypatch):
    """Planning reads kernels through a recording handler: the C++ emitter builds each
    body once (it used to render every kernel twice, once to find its accesses)."""
    built = []
    init = CppEmitter.__init__

    def counting(self, *a, **k):
        built.append(1)
        init(self, *a, **k)

    spoiled = []
    terms = cpp_stages._term_accumulators

    def noting(*a, **k):
        got = terms(*a, **k)
        spoiled.extend([1] if got else [])
        return got

    monkeypatch.setattr(CppEmitter, "__init__", counting)
    monkeypatch.setattr(cpp_stages, "_term_accumulators", noting)
    _, gen = _gen(_softmax, [X])
    (plan,) = gen.plans.values()
    (kernel,) = gen.kernels
    # one emitter per stage, one pass; a kernel whose ops' predicates tell apart the kinds
    # several may raise (the exp's and the subtract's overflow) prints its second body too,
    # where a float sum's own predicate (its terms' accumulators) takes a small emitter of
    # its own for the result's check, not another rendering of the body
    bodies = 2 if kernel.told_source else 1
    assert len(built) == bodies * len(plan.kernel.stages) + len(spoiled)


def test_memory_plan_reuses_in_place_and_pools():
    a = np.random.default_rng(1).standard_normal((128, 128)) * 0.05
    # exp of a transposed matmul result cannot be written over it (it reads other
    # elements), and sin's dead buffer is C-ordered while NumPy lays the transposed
    # result out in the other order (lowering/layout.py): no reuse across layouts (the
    # kernel would write F-ordered data into a C-ordered array).
    g, gen = _gen(lambda x: (F.exp(F.transpose(F.exp(F.matmul(F.sin(x), x)))),), [a])
    plan = gen.memory
    hows = [(al.name, al.how) for allocs in plan.allocations.values() for al in allocs]
    assert hows == [("buf0", "pool"), ("buf2", "pool")]
    expected, got, _ = run_both(g, [a])
    assert_same("out", expected[0], got[0], rtol=1e-12, atol=1e-9)
    # exp(matmul) is written over the matmul's result, which dies with the kernel
    _, gen2 = _gen(lambda x: (F.exp(F.matmul(F.sin(x), x)),), [a])
    hows = [(al.name, al.how, al.source) for allocs in gen2.memory.allocations.values() for al in allocs]
    assert hows[-1] == ("buf2", "inplace", "buf1") and gen2.memory.deaths[2] == ["buf1"]
    expected, got, _ = run_both(g, [a])
    assert_same("out", expected[0], got[0], rtol=1e-12, atol=1e-9)
    # dynamic sizes: no pools (they are per shape)
    g = trace(lambda x: (F.sin(x),), [TensorMeta(a.shape, a.dtype)], ["x"])
    assert [al.how for al in generate(g, [a]).memory.allocations[0]] == ["pool"]
    g.placeholders[0].meta["dynamic_dims"] = {0, 1}
    gen = generate(g, [a], dynamic=True)
    assert gen.low.sizes and not gen.memory.pools
    assert [al.how for al in gen.memory.allocations[0]] == ["new"]


def test_triton_plan_is_data_before_text():
    r = TritonRenderer()
    _, gen = _gen(_softmax, [X], r)
    (plan,) = gen.plans.values()
    assert (plan.xnumel, plan.rnumel, plan.reduction, plan.persistent, plan.int64) == \
        (16, 40, True, True, False)
    assert "xnumel = 16" in r.rendered[plan.kernel.name].source
    big = np.zeros(1, np.float32)
    big = np.lib.stride_tricks.as_strided(big, (2 ** 16, 2 ** 16), (0, 0))
    _, gen = _gen(lambda x: (F.sin(x),), [big], TritonRenderer())
    (plan,) = gen.plans.values()
    assert plan.int64   # 2**32 elements: offsets pass 2**31


def test_dead_buffers_and_views_are_freed_where_they_die():
    # A Stockham FFT's steps each make arrays of a new shape: a dead kernel buffer that no
    # later kernel can take, and a view made for one call (a reshape of a matmul result
    # fed to the next matmul), were held to the end of the call, so every call grew the
    # heap by all of them and faulted in fresh pages (npbench stockham_fft 0.48x NumPy).
    rng = np.random.default_rng(5)
    x, w, m = rng.standard_normal((4, 64)), rng.standard_normal((64, 6)), rng.standard_normal((3, 8))

    def program(x, w, m):
        y = F.sin(x)                                    # dies at the matmul: no later (4, 64)
        z = F.matmul(m, F.reshape(F.matmul(y, w), shape=(8, 3)))   # a view of the first product
        return (F.exp(z),)
    g, gen = _gen(program, [x, w, m])
    plan = gen.memory
    assert plan.at_exit == [], plan.at_exit
    assert "buf0" in [name for names in plan.deaths.values() for name in names]
    lines = [line.strip() for line in gen.wrapper.splitlines()]
    made = [line.split(" = ")[0] for line in lines if line.startswith("view") and " = " in line]
    assert made and all(f"del {v}" in lines for v in made), gen.wrapper
    expected, got, _ = run_both(g, [x, w, m])
    assert_same("out", expected[0], got[0], rtol=1e-12, atol=1e-12)


def test_bool_extrema_accumulate_in_bytes():
    """max/min/any/all of bools accumulate in uint8_t, as wide as the bool lanes (in an int
    GCC widened every byte: a.max(axis=1) of 200x500 bools ran at 0.69x NumPy, now ~1.5x);
    an argmin keeps an int beside its int64 position (bytes there were 4x slower)."""
    import re

    b = np.zeros((4, 40), bool)
    for fn, want in ((lambda x: (F.max(x, axis=1),), "uint8_t"), (lambda x: (F.any(x, axis=0),), "uint8_t"),
                     (lambda x: (F.all(x),), "uint8_t"), (lambda x: (F.argmin(x, axis=0),), "int")):
        _, gen = _gen(fn, [b])
        assert set(re.findall(r"\b(\w+) acc\d+(?:\[\d+\])?(?: = |;)", gen.cpp)) == {want}, gen.cpp
