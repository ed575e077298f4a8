"""Results keep NumPy's memory layout (order='K'): Fortran-ordered inputs give
Fortran-ordered results, transposed inputs transposed ones, for every op kind (pointwise,
reductions with keepdims, views of computed values, out=, in-place updates) and every
backend. Compared against NumPy on .strides and .flags (and the axis order, for results
that are views of a bigger array)."""
import re

import numpy as np
import pytest

import kiln
from kiln.lowering import layout as L
from test_programs import _strides_that_show


def many(x, y):
    t = x * 2.0
    return (
        x + 1.0,                                # one operand
        np.sin(x) * y - x,                      # a fused chain
        np.where(x > 3.0, x, 0.0),              # a select
        x.astype(np.float32),                   # a cast
        -x,
        np.maximum(x, y),
        x + y[:1],                              # broadcast against a row
        x.sum(axis=0, keepdims=True),           # reductions keeping dims
        (t * t).sum(axis=1, keepdims=True),
        x - x.mean(axis=0, keepdims=True),      # normalization
        np.exp(x).T,                            # a view of a computed value
        (x * y)[:, 1:],                         # a slice of one
        np.add(x, y, out=np.empty_like(x)),     # out= a fresh array
        np.copy(x) + 0.5,
        x.copy() * 3.0,                         # ndarray.copy() is C order
        np.flip(x * y, 0),                      # a reversed view: negative strides
    )


def _inplace(x, y):
    z = np.copy(x)
    z += y
    z *= 2.0
    return z


def _inputs():
    base = np.arange(24.0).reshape(4, 6) / 7.0
    F = np.asfortranarray(base)
    T = np.ascontiguousarray(base.T).T               # a transposed C array
    S = np.arange(96.0).reshape(8, 12)[::2, ::2] / 3  # a strided slice (C order)
    R = base[::-1]                                   # reversed rows
    return {"fortran": F, "transposed": T, "strided": S, "reversed": R, "c": base}


def _same_layout(got, want, what):
    assert got.shape == want.shape and got.dtype == want.dtype, what
    np.testing.assert_allclose(got, want, rtol=1e-12, err_msg=what)
    if want.flags.c_contiguous or want.flags.f_contiguous:
        assert got.strides == want.strides, f"{what}: strides {got.strides} != NumPy's {want.strides}"
        assert got.flags.c_contiguous == want.flags.c_contiguous, what
        assert got.flags.f_contiguous == want.flags.f_contiguous, what
    else:   # NumPy returns a view of a bigger array: the axis order must agree
        item = want.itemsize
        assert L.axis_order(got.shape, [s // item for s in got.strides]) == \
            L.axis_order(want.shape, [s // item for s in want.strides]), what
        assert [s < 0 for s in got.strides] == [s < 0 for s in want.strides], \
            f"{what}: strides {got.strides}, NumPy's {want.strides}"
    np.testing.assert_allclose(got.ravel(order="K"), want.ravel(order="K"), rtol=1e-12, err_msg=what)


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "cpp"])
@pytest.mark.parametrize("name", ["fortran", "transposed", "strided", "reversed", "c"])
def test_results_follow_numpy_layouts(backend, name):
    x = _inputs()[name]
    y = np.empty_like(x)          # y in x's layout (mixed layouts: see below)
    y[...] = np.linspace(0.5, 2.0, x.size).reshape(x.shape)
    want = many(x, y)
    got = kiln.compile(many, backend=backend)(x, y)
    for i, (g, w) in enumerate(zip(got, want)):
        _same_layout(g, w, f"{backend}/{name}: output {i}")
    _same_layout(kiln.compile(_inplace, backend=backend)(x, y), _inplace(x, y), "in place")


@pytest.mark.parametrize("backend", ["eager", "cpp"])
def test_broadcast_and_three_d_inputs(backend):
    b = np.broadcast_to(np.arange(5.0), (3, 5))          # a zero-stride operand
    f3 = np.asfortranarray(np.arange(60.0).reshape(3, 4, 5))

    def g(b, f3):
        return b * 2.0, f3 + 1.0, f3.sum(axis=1), f3.max(axis=2, keepdims=True), f3 * b[:, None, :]

    for i, (got, want) in enumerate(zip(kiln.compile(g, backend=backend)(b, f3), g(b, f3))):
        _same_layout(got, want, f"output {i}")


def test_mixed_layouts_take_numpys_choice():
    # A Fortran and a C operand: NumPy's iterator picks one order; kiln asks it the same.
    f = np.asfortranarray(np.arange(12.0).reshape(3, 4))
    c = np.arange(12.0).reshape(3, 4)

    def g(f, c):
        return f + c, c * f, (f + c).sum(axis=0, keepdims=True)

    for got, want in zip(kiln.compile(g)(f, c), g(f, c)):
        _same_layout(got, want, "mixed")


def test_stand_in_rule_matches_numpy_on_its_own():
    # layout_of asks NumPy on stand-ins; check it against NumPy on the real arrays.
    f3 = np.asfortranarray(np.ones((3, 4, 5)))
    mixed = np.ones((4, 5, 3)).transpose(2, 0, 1)
    def strided(a):
        return L.Strided(a.shape, tuple(s // a.itemsize for s in a.strides), a.dtype)
    fb = np.asfortranarray(np.ones((3, 4), bool))
    for op, args, params in [(np.add, (f3, mixed), {}), (np.sum, (mixed,), {"axis": 1}),
                             (np.negative, (mixed,), {}), (np.sum, (f3,), {"axis": 0, "keepdims": True}),
                             (np.invert, (fb,), {}), (np.cumsum, (mixed,), {"axis": 2}),
                             (np.sort, (f3,), {"axis": 1})]:
        want = op(*args, **params)
        strides = L.layout_of(op, [strided(a) for a in args], params, want.shape)
        got = tuple(s // want.itemsize for s in want.strides)
        assert (strides or L.strides_in_order(want.shape, range(want.ndim))) == got, (op, params)
    for arrays, axis in [((f3, f3), 0), ((f3, mixed), 2), ((mixed, mixed), 1)]:   # joins: a sequence
        want = np.concatenate(arrays, axis=axis)
        strides = L.layout_of(np.concatenate, [tuple(strided(a) for a in arrays)], {"axis": axis}, want.shape)
        got = tuple(s // 8 for s in want.strides)
        assert (strides or L.strides_in_order(want.shape, range(want.ndim))) == got, axis


def joined_and_scanned(x, y):
    b = x > 0.5
    return (
        np.concatenate([x, y]),                 # joins: NumPy's iterator order over all arrays
        np.concatenate([x, y * 2.0], axis=1),
        np.stack([x, y]),
        np.vstack([x, y]).T,                    # a view of a join
        np.hstack([x, x + 1.0]),
        np.cumsum(x, axis=0),                   # scans
        np.cumprod(y, axis=1).T,
        np.roll(x, 1, axis=0),
        np.pad(x, 1),
        np.tile(x, (2, 1)),
        np.sort(x, axis=0),
        ~b,                                     # bool and integer kernels
        (x * 4).astype(np.int64) & 3,
    )


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "cpp"])
@pytest.mark.parametrize("name", ["fortran", "transposed", "strided", "reversed", "c"])
def test_joins_scans_and_their_views_follow_numpy_layouts(backend, name):
    x = _inputs()[name]
    y = np.empty_like(x)
    y[...] = np.linspace(0.5, 2.0, x.size).reshape(x.shape)
    want = joined_and_scanned(x, y)
    got = kiln.compile(joined_and_scanned, backend=backend)(x, y)
    for i, (g, w) in enumerate(zip(got, want)):
        _same_layout(g, w, f"{backend}/{name}: output {i}")


def _views_of_computed(x):
    t = x * 2.0
    return t[:, 1:-1], t[::2], t[:, 0], t[1:-1], np.sin(x)[::-1, ::3]


@pytest.mark.parametrize("backend", ["aot_eager", "cpp"])
def test_a_view_of_a_computed_value_has_numpys_strides(backend):
    # NumPy returns these as views of the computed array: a compact copy had other
    # .strides and .flags (a column slice came out C-contiguous). Alternating C and
    # Fortran inputs: the input layout keys the compiled variant.
    compiled = kiln.compile(_views_of_computed, backend=backend)
    c = np.arange(48.0).reshape(6, 8) / 5
    for x in (c, np.asfortranarray(c), c):
        for i, (got, want) in enumerate(zip(compiled(x), _views_of_computed(x))):
            np.testing.assert_allclose(got, want, rtol=1e-14)
            assert got.strides == want.strides, f"output {i}: {got.strides} != NumPy's {want.strides}"
            assert got.flags.c_contiguous == want.flags.c_contiguous, f"output {i}"
            assert got.flags.writeable


# -- kernels walk memory in order, as NumPy's iterator does -----------------------------

def _kernel_bodies(fn, *inputs):
    """The C++ kernel bodies the cpp backend makes of ``fn`` (kiln.ops.F code) for these
    inputs (their layouts included), after checking values and strides against NumPy."""
    from kiln.ir import trace
    from kiln.ops import TensorMeta
    from kiln.runtime import cpp_backend
    g = trace(fn, [TensorMeta(a.shape, a.dtype) for a in inputs], [f"a{i}" for i in range(len(inputs))])
    compiled = cpp_backend(g, list(inputs))
    [want], [got] = g(*inputs), compiled(*inputs)
    np.testing.assert_allclose(got, want, rtol=1e-13)
    assert got.strides == want.strides
    cpp = compiled.kiln_artifact.cpp
    return re.findall(r"static void \w+_body\(.*?^}", cpp, re.S | re.M)


@pytest.mark.parametrize("make", [lambda a: a.T, np.asfortranarray], ids=["transposed", "fortran"])
def test_elementwise_kernels_iterate_in_memory_order(make):
    # np.exp(a.T) nested in the frame's C order read and wrote with a row's stride (4x
    # NumPy's time at 1000 x 1000); in memory order it is one contiguous loop.
    from kiln.ops import F
    a = make(np.random.default_rng(3).standard_normal((40, 30)))
    # (glibc's scalar sin and NumPy's SVML exp run in kernels of their own where kernels
    # call SVML: lowering/pointwise.py splits_widths; each walks memory in order)
    bodies = _kernel_bodies(lambda x: F.exp(F.sin(x)), a)
    assert 1 <= len(bodies) <= 2, bodies
    for body in bodies:
        assert body.count("for (") == 1, body
        assert "[x0]" in body or "[x1]" in body, body


def test_c_ordered_and_mixed_kernels_keep_c_order():
    from kiln.ops import F
    a = np.random.default_rng(4).standard_normal((40, 30))
    [body] = _kernel_bodies(lambda x: F.exp(x), a)
    assert body.count("for (") == 1 and "[x0]" in body
    b = np.random.default_rng(5).standard_normal((30, 40))
    [body] = _kernel_bodies(lambda x, y: F.add(x, y), a, b.T)   # one of each: C order
    loops = [line.strip() for line in body.splitlines() if line.strip().startswith("for (")]
    assert [loop.split()[2] for loop in loops] == ["x0", "x1"], loops


# -- results NumPy allocates itself (np.insert, np.delete, np.roll, *_like, out=, linalg) --

def _exactly_numpys(got, want, what):
    got, want = (got, want) if isinstance(want, tuple) else ((got,), (want,))
    for i, (g, w) in enumerate(zip(got, want)):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape and g.dtype == w.dtype, f"{what}[{i}]"
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12, err_msg=f"{what}[{i}]")
        assert _strides_that_show(g) == _strides_that_show(w), \
            f"{what}[{i}]: strides {g.strides}, NumPy gives {w.strides}"


SPLICES = {
    # np.insert allocates empty(shape, order='F' if arr.flags.fnc else 'C') along an axis
    "insert_one": lambda a: np.insert(a, 1, 7.0, axis=1),
    "insert_many": lambda a: np.insert(a, [0, 2, 2], 7.0, axis=0),
    "insert_block": lambda a: np.insert(a, 1, np.arange(a.shape[0] * 2.0).reshape(2, -1), axis=1),
    "insert_flat": lambda a: np.insert(a, [1, 3], [7.0, 8.0]),
    # np.delete: so does one position or a slice; several positions are arr[..., keep]
    "delete_one": lambda a: np.delete(a, -1, axis=1),
    "delete_slice": lambda a: np.delete(a, slice(1, None, 2), axis=0),
    "delete_many": lambda a: np.delete(a, [0, 2], axis=-1),
    "delete_mask": lambda a: np.delete(a, np.arange(a.shape[0]) == 1, axis=0),
    "delete_flat": lambda a: np.delete(a, [0, 5]),
    # np.roll and np.unwrap fill an empty_like(a) / np.array(a) copy
    "roll_axis": lambda a: np.roll(a, 1, axis=0),
    "roll_two_rows": lambda a: np.roll(a[:2], 1, axis=0),      # pieces of one row each
    "unwrap": lambda a: np.unwrap(a * 3.0, axis=0),
    "unwrap_two_rows": lambda a: np.unwrap(a[:2] * 3.0, axis=0),
    "gradient_three_rows": lambda a: np.gradient(a[:3], axis=0),       # three one-row pieces
    "gradient_int": lambda a: np.gradient(a.astype(np.int32) if a.flags.c_contiguous else a),
    # *_like with order=, and a fresh array written or computed on
    "zeros_like_plus": lambda a: np.zeros_like(a) + a,
    "zeros_like_written": lambda a: (lambda z: (z.__setitem__((0, 0), 1.0), z)[1])(np.zeros_like(a)),
    "empty_like_c": lambda a: np.ones_like(a, order="C") * a,
    "full_like_a": lambda a: np.full_like(a, 2.0, order="A") - a,
    "where_out": lambda a: np.log(a + 1.0, out=np.zeros_like(a), where=a > 3.0),
}


def _splice_inputs():
    base = np.arange(1.0, 61.0).reshape(4, 15)[:, :6]          # a strided C slice
    f = np.asfortranarray(np.arange(1.0, 25.0).reshape(4, 6))
    return {"c": np.ascontiguousarray(base), "fortran": f, "transposed": f.T.copy().T,
            "fortran_strided": np.asfortranarray(np.arange(1.0, 49.0).reshape(4, 12))[:, ::2],
            "strided": base}


@pytest.mark.parametrize("backend", ["eager", "cpp"])
@pytest.mark.parametrize("name", sorted(SPLICES))
def test_results_numpy_allocates_follow_its_layout(backend, name):
    fn = SPLICES[name]
    compiled = kiln.compile(fn, backend=backend)
    for layout, a in _splice_inputs().items():   # one compiled function, every layout
        _exactly_numpys(compiled(a), fn(a), f"{backend}/{name}/{layout}")


def three_d_splices(a):
    # (every result a different shape: nine kernels, none fused with another)
    return (np.insert(a, [1, 1], 0.5, axis=0), np.delete(a, 0, axis=0), np.delete(a, [0, -1], axis=0),
            np.insert(a, [1, 1], 0.5, axis=1), np.delete(a, 0, axis=1), np.delete(a, [0, -1], axis=1),
            np.insert(a, [1, 1], 0.5, axis=2), np.delete(a, 0, axis=2), np.delete(a, [0, -1], axis=2))


def test_three_d_splices_of_every_axis_order():
    base = np.arange(1.0, 61.0).reshape(3, 4, 5)
    for perm in [(0, 1, 2), (2, 1, 0), (1, 0, 2), (2, 0, 1)]:
        a = np.ascontiguousarray(base.transpose(perm)).transpose(np.argsort(perm))
        got, want = kiln.compile(three_d_splices)(a), three_d_splices(a)
        assert len(got) == len(want) == 9
        for i in range(9):   # (insert, delete one, delete two) along axis i // 3
            _exactly_numpys(got[i], want[i], f"perm {perm} axis {i // 3} splice {i % 3}")


@pytest.mark.parametrize("backend", ["eager", "cpp"])
def test_multi_result_linalg_and_index_results_are_numpys_arrays(backend):
    # factorizations packed in one array come back contiguous, as NumPy's own (batched
    # too); eig's real results are real parts of complex arrays, unravel_index's and
    # correlate's as NumPy lays them out
    rng = np.random.default_rng(3)
    stack = rng.standard_normal((3, 4, 4))
    sym = stack + stack.transpose(0, 2, 1)
    fns = {
        "slogdet": lambda a: tuple(np.linalg.slogdet(a)),
        "eigh": lambda a: tuple(np.linalg.eigh(a + np.swapaxes(a, -1, -2))),
        "svd": lambda a: tuple(np.linalg.svd(a)),
        "qr": lambda a: tuple(np.linalg.qr(a)),
        "eig_real": lambda a: tuple(np.linalg.eig(a + np.swapaxes(a, -1, -2))),
        "matrix_power_0": lambda a: np.linalg.matrix_power(a, 0),
    }
    for name, fn in fns.items():
        for a in (stack, stack[0], np.asfortranarray(stack[0]), sym):
            _exactly_numpys(kiln.compile(fn, backend=backend)(a), fn(a), f"{backend}/{name}{a.shape}")
    unravel = lambda i: np.unravel_index(i, (3, 4))                      # noqa: E731
    for i in (np.array([1, 5, 7]), np.array([[1, 5], [7, 2]])):
        _exactly_numpys(kiln.compile(unravel, backend=backend)(i), unravel(i), "unravel_index")
    nonzero = lambda x: np.nonzero(x > 0.5)   # columns of one (n, ndim) array      # noqa: E731
    for x in (stack, stack[0], stack[0, 0]):
        _exactly_numpys(kiln.compile(nonzero, backend=backend)(x), nonzero(x), f"nonzero{x.shape}")
    corr = lambda a, v: np.correlate(a, v, "full")                        # noqa: E731
    _exactly_numpys(kiln.compile(corr, backend=backend)(np.arange(3.0), np.arange(5.0)),
                    corr(np.arange(3.0), np.arange(5.0)), "correlate (longer second)")


def test_dynamic_sizes_keep_numpys_layout():
    # A slice bound that varies makes sizes symbols; a Fortran-ordered input then gets
    # its own build, so its result is still Fortran-ordered as NumPy's.
    c = np.arange(20.0).reshape(4, 5)
    f = np.asfortranarray(c)
    fn = kiln.compile(lambda a, k: np.sin(a[:, k:]))
    for a, k in [(c, 1), (c, 2), (f, 1), (f, 2), (f, 3), (c, 3)]:
        _exactly_numpys(fn(a, k), np.sin(a[:, k:]), f"k={k}")


def _positions_computed_on(x):
    at = np.argwhere(x > 0)
    return at + 1, np.sin(at).sum(axis=0), np.transpose(np.nonzero(x > 0)) * 2, \
        np.argwhere(x.ravel() > 0) - 1


@pytest.mark.parametrize("backend", ["aot_eager", "cpp"])
def test_work_on_data_dependent_positions_keeps_numpys_layout(backend):
    # np.argwhere is Fortran-ordered, so what is computed from it is too (order='K'); its
    # row count is known only once it ran, and 0 or 1 rows lay out as NumPy's do
    rng = np.random.default_rng(4)
    fn = kiln.compile(_positions_computed_on, backend=backend)
    for x in (rng.standard_normal((5, 6)), rng.standard_normal((5, 6)).T,
              np.array([[1.0, -1, -1], [-1, -1, -1]]), -np.ones((2, 3)), np.ones((2, 2, 3))):
        _exactly_numpys(fn(x), _positions_computed_on(x), f"{backend}{x.shape}")


# -- an in-place update keeps its target's layout --------------------------------------------
# `y += c` and `np.add(a, b, out=y)` write into y's memory, so y keeps its layout whatever
# the layout `a + b` would get alone; kiln rewrites such a write on a fresh y into a new
# value (kiln/capture/opcall.py `_write_out`), laid out as y (relayout, free when compiled).

def _out_into_empty_like(f, c):
    e = np.empty_like(f)                 # Fortran-ordered, as f
    np.add(f, c, out=e)                  # f + c alone: C order (mixed layouts)
    return e


def _iadd_into_zeros_like(f, c):
    e = np.zeros_like(f)
    e += c
    return e, e.ravel()                  # a copy of a Fortran-ordered e


def _out_into_c_empty(f, c):
    e = np.empty(f.shape)                # C order; f + f alone is Fortran-ordered
    np.add(f, f, out=e)
    return e


def _iadd_keeps_a_transposed_layout(f, c):
    y = c.T.T * 2                        # C order
    y += f                               # f Fortran-ordered: y + f alone would be C anyway
    z = f * 2                            # Fortran-ordered
    z += c                               # stays Fortran-ordered
    z *= 3
    return y, z, z.T.ravel()             # z.T is C-contiguous: its ravel is a view


@pytest.mark.parametrize("backend", ["cpp", "cpp-dynamic", "eager", "aot_eager"])
@pytest.mark.parametrize("fn", [_out_into_empty_like, _iadd_into_zeros_like, _out_into_c_empty,
                                _iadd_keeps_a_transposed_layout])
def test_an_in_place_update_keeps_its_targets_layout(fn, backend):
    from test_programs import check_program
    f = np.asfortranarray(np.arange(12.0).reshape(4, 3))
    c = np.arange(12.0).reshape(4, 3) + 0.5
    g = np.asfortranarray(np.arange(24.0).reshape(2, 3, 4))
    check_program(fn, [(f, c), (f + 1, c * 2), (g, np.ones((2, 3, 4)))], backend)


def _slice_assigned_into_zeros_like(f):
    g = np.zeros_like(f)                 # Fortran-ordered, as f
    g[:, 1:-1] = f[:, 2:] - f[:, :-2]    # an index_put whose value fills only a window
    return g, g.ravel()


@pytest.mark.parametrize("backend", ["cpp", "cpp-dynamic"])
def test_a_window_assigned_into_a_fortran_array_keeps_its_layout(backend):
    # the scatter's layout came from its kernel run on stand-ins (each dim shrunk to 2):
    # g[:, 1:-1] of a 2-wide stand-in has no room for the 2-wide value, so the rule gave
    # up (C order); the op's own rule (Op.result_order: laid out as g) decides it now
    from test_programs import check_program
    f = np.asfortranarray(np.arange(48.0).reshape(6, 8))
    check_program(_slice_assigned_into_zeros_like, [(f,), (f[:, ::-1] * 2,)], backend)


def _escape_steps(n):
    def escape(c):
        z = np.zeros_like(c)
        alive = np.ones(c.shape, dtype=bool)
        for _ in range(n):
            z[alive] = z[alive] ** 2 + c[alive]
            alive &= np.abs(z) <= 2          # an in-place update of a fresh 2-d array: relayout
        return z, alive
    return escape


def test_a_relayout_keeps_the_cost_of_what_it_lays_out(monkeypatch):
    # relayout's value (an identity closure) had cost 0, so `alive`, read by every later
    # step, was never realized and each step recomputed all the steps before it: lowering
    # work grew quadratically in the steps (exponentially for a complex z: 20 escape-time
    # steps of a complex64 Mandelbrot never finished compiling)
    from kiln.lowering import loop_ir
    monkeypatch.setattr(kiln.config, "graph_loops", False)   # each step unrolled
    loads = [0]
    load = loop_ir.Pointwise.load

    def counted(self, ops, index):
        loads[0] += 1
        return load(self, ops, index)
    monkeypatch.setattr(loop_ir.Pointwise, "load", counted)
    c = np.random.default_rng(0).random((4, 5)) * 2 - 1
    work = []
    for n in (4, 8):
        loads[0] = 0
        fn = _escape_steps(n)
        got, want = kiln.compile(fn, backend="cpp")(c), fn(c)
        assert all(np.array_equal(g, w) for g, w in zip(got, want))
        work.append(loads[0])
    assert work[1] < 2.5 * work[0], f"closure loads for 4 and 8 steps: {work}"
