"""Op-table rows: complex numbers, and the NumPy functions declared in kiln/ops/numeric.py,
fft.py and linalg.py beyond the core inventory."""

from __future__ import annotations

import numpy as np

from kiln.ops import F

from kiln.ops import REGISTRY
from kiln.ops.factorizations import _lstsq_impl
from kiln.ops.registry import Bound, call_spelling
from kiln.tensor import apply

from .gen import ALL, BOOL, COMPLEX, FLOATS, I64, NUMERIC, POS, REAL, Case, Ctx, index_arg
from .spec import A, Row, getattr_op, spelled, unary_case, via_spelling

U8 = np.dtype(np.uint8)


def angle_case(ctx: Ctx) -> Case:
    return Case([ctx.arg(ctx.shape())], {"deg": ctx.boolean("deg")})


def complex_rows() -> list[Row]:
    return [
        Row("conjugate", numpy=np.conjugate, via_op=getattr_op("conjugate"), case=unary_case(),
            dtypes=NUMERIC + COMPLEX, grad=True,
            alts=(np.conj, lambda x: x.conj(), lambda x: x.conjugate())),
        Row("real", numpy=np.real, via_op=getattr_op("real"), case=unary_case(),
            dtypes=FLOATS + COMPLEX, grad=True, alts=(lambda x: x.real,)),
        Row("imag", numpy=np.imag, via_op=getattr_op("imag"), case=unary_case(),
            dtypes=FLOATS + COMPLEX, grad=True, alts=(lambda x: x.imag,)),
        Row("angle", numpy=np.angle, via_op=getattr_op("angle"), case=angle_case,
            dtypes=FLOATS + COMPLEX, grad=True),
    ]


def numeric_rows() -> list[Row]:
    return complex_rows() + numeric_composite_rows() + numeric_op_rows()


# ==========================================================================================
# Composite spellings (kiln/ops/numeric.py, matrix.py, signal.py, sorting.py): each row is
# a NumPy function; `op` names one op it is made of.

def C(op: str, np_fn, case, dtypes=FLOATS, grad=True, via=None, **kw) -> Row:
    name = kw.pop("name", None) or getattr(np_fn, "__name__", op)
    return Row(op, numpy=np_fn, via_op=via or via_spelling(np_fn), case=case, dtypes=dtypes,
               grad=grad, composite=True, name=name, **kw)


def E(op: str, np_fn, case, dtypes=FLOATS, grad=False, via=None, **kw) -> Row:
    """An op of its own with one NumPy spelling (called through its normalizer)."""
    return Row(op, numpy=np_fn, via_op=via or via_spelling(np_fn), case=case, dtypes=dtypes,
               grad=grad, **kw)


def shaped(min_dims=1, max_dims=3, domain=REAL, **params):
    """One array; params: name -> callable(ctx, shape) or a constant."""
    def case(ctx: Ctx) -> Case:
        shape = ctx.shape(min_dims=min_dims, max_dims=max_dims)
        p = {k: (v(ctx, shape) if callable(v) else v) for k, v in params.items()}
        return Case([ctx.arg(shape, domain)], p)
    return case


def nonempty(min_dims=1, max_dims=3, domain=REAL, **params):
    def case(ctx: Ctx) -> Case:
        shape = ctx.shape(min_dims=min_dims, max_dims=max_dims, min_side=1)
        p = {k: (v(ctx, shape) if callable(v) else v) for k, v in params.items()}
        return Case([ctx.arg(shape, domain)], p)
    return case


def an_axis(ctx, shape):
    return ctx.choice(list(range(-len(shape), len(shape))), "axis")


def opt_axis(ctx, shape):
    return ctx.choice([None] + list(range(-len(shape), len(shape))), "axis")


def pair(same=True, min_dims=1, max_dims=2, min_side=1, **params):
    def case(ctx: Ctx) -> Case:
        shape = ctx.shape(min_dims=min_dims, max_dims=max_dims, min_side=min_side)
        other = shape if same else ctx.shape(min_dims=min_dims, max_dims=max_dims, min_side=min_side)
        p = {k: (v(ctx, shape) if callable(v) else v) for k, v in params.items()}
        return Case([ctx.arg(shape), ctx.arg(other)], p)
    return case


def vectors(ctx: Ctx) -> Case:
    n, m = ctx.integer(1, 5, "n"), ctx.integer(1, 4, "m")
    return Case([ctx.arg((n,)), ctx.arg((m,))], {"mode": ctx.choice(["full", "same", "valid"], "mode")})


def square_stack(ctx: Ctx) -> Case:
    n = ctx.integer(1, 3, "n")
    batch = ctx.shape(max_dims=1, min_side=1)
    a = ctx.arg(batch + (n, n), layout="C", writable=True)
    a.base[...] += 3.0 * np.eye(n, dtype=a.base.dtype)   # well conditioned
    return Case([a])


def matrix(ctx: Ctx) -> Case:
    return Case([ctx.arg((ctx.integer(1, 4, "n"), ctx.integer(1, 4, "m")))])


def finite_matrix(ctx: Ctx) -> Case:
    """A matrix of moderate finite values: NumPy 2.4's own svd (OpenBLAS dgesdd, what
    Python 3.11 installs here) spun forever on a drawn matrix with non-finite or extreme
    values (the plain NumPy reference run hung, before kiln ran)."""
    a = ctx.arg((ctx.integer(1, 4, "n"), ctx.integer(1, 4, "m")), layout="C", writable=True)
    a.base[...] = np.clip(np.nan_to_num(a.base), -1e3, 1e3)
    return Case([a])


def separated_matrix(ctx: Ctx) -> Case:
    """finite_matrix; for gradients, with a diagonal ramp added, so that its singular values
    are apart and nonzero (the factorizations' derivatives exist and finite differences
    stay on one branch)."""
    case = finite_matrix(ctx)
    if ctx.grad:
        a = case.args[0].base
        k = min(a.shape)
        a[np.arange(k), np.arange(k)] += 4.0 * np.arange(1, k + 1)
    return case


def lstsq_case(ctx: Ctx) -> Case:
    """A finite system a x = b: b a vector or k columns (rank-deficient draws included,
    except for gradients: full rank)."""
    a = separated_matrix(ctx).args[0]
    m = a.base.shape[0]
    shape = (m,) if ctx.boolean("vector") else (m, ctx.integer(1, 3, "k"))
    b = ctx.arg(shape, layout="C", writable=True)
    b.base[...] = np.clip(np.nan_to_num(b.base), -1e3, 1e3)
    return Case([a, b])


def bin_index_case(ctx: Ctx) -> Case:
    bins = ctx.integer(1, 6, "bins")
    index = ctx.arg((ctx.integer(0, 9, "n"),), layout="C", writable=True)
    index.base[...] = np.abs(np.nan_to_num(index.base)) % (bins + 1)
    return Case([index], {"bins": bins})


def sorted_and_values(ctx: Ctx) -> Case:
    a = ctx.arg((ctx.integer(1, 5, "n"),), layout="C", writable=True)
    a.base[...] = np.sort(np.nan_to_num(a.base))
    return Case([a, ctx.arg(ctx.shape())], {"side": ctx.choice(["left", "right"], "side")})


def sorter_case(ctx: Ctx) -> Case:
    """Unsorted ``a`` searched through ``sorter=argsort(a)`` (a reversed view at times)."""
    a = ctx.arg((ctx.integer(1, 5, "n"),), layout="C", writable=True)
    a.base[...] = np.nan_to_num(a.base)
    order = np.argsort(a.base, kind="stable").astype(ctx.choice([np.intp, np.int32], "sorter dtype"))
    return Case([a, ctx.arg(ctx.shape()), index_arg(order, ctx.choice(["C", "rev"], "layout"))],
                {"side": ctx.choice(["left", "right"], "side")})


def bits_case(ctx: Ctx) -> Case:
    shape = ctx.shape(max_dims=3)
    return Case([ctx.arg(shape)], {"axis": opt_axis(ctx, shape),
                                   "bitorder": ctx.choice(["big", "little"], "bitorder")})


def unpack_case(ctx: Ctx) -> Case:
    case = bits_case(ctx)
    x = case.args[0].value
    n = x.size if case.params["axis"] is None or x.ndim == 0 else x.shape[case.params["axis"]]
    case.params["count"] = ctx.choice([None, 0, 3, 8 * n + 5, -(8 * n), -3 if n else 0], "count")
    return case


def _with_sorter(a, v, sorter, side="left"):
    return np.searchsorted(a, v, side=side, sorter=sorter)


def digitize_case(ctx: Ctx) -> Case:
    bins = ctx.arg((ctx.integer(1, 5, "n"),), layout="C", writable=True)
    bins.base[...] = np.sort(np.nan_to_num(bins.base))
    return Case([ctx.arg(ctx.shape()), bins], {"right": ctx.boolean("right")})


def isin_case(ctx: Ctx) -> Case:
    element = ctx.arg(ctx.shape(), layout="C", writable=True)
    tests = ctx.arg((ctx.integer(0, 6, "m"),), layout="C", writable=True)
    element.base[...] = np.round(element.base)   # (NaN stays: it is in nothing)
    tests.base[...] = np.round(tests.base)
    return Case([element, tests], {"invert": ctx.boolean("invert")})


def hist_case(ctx: Ctx) -> Case:
    x = ctx.arg(ctx.shape(min_dims=1, max_dims=2, min_side=1), layout="C", writable=True)
    x.base[...] = np.nan_to_num(x.base, posinf=2.0, neginf=-2.0)
    params = {"bins": ctx.choice([1, 4, [-2.0, -0.5, 0.0, 1.0, 3.0]], "bins"),
              "range": ctx.choice([None, (-1.0, 2.0)], "range"),
              "density": ctx.choice([None, True], "density")}
    if isinstance(params["bins"], list):
        params["range"] = None
    return Case([x], params)


def hist_data_case(ctx: Ctx) -> Case:
    """Edges from the data (no range): counts and edges come from one call."""
    case = hist_case(ctx)
    case.params.update(bins=ctx.choice([1, 4], "bins"), range=None)
    return case


def hist2d_case(ctx: Ctx) -> Case:
    n = ctx.integer(1, 6, "n")
    x, y = ctx.arg((n,), layout="C", writable=True), ctx.arg((n,), layout="C", writable=True)
    for a in (x, y):
        a.base[...] = np.nan_to_num(a.base, posinf=2.0, neginf=-2.0)
    return Case([x, y], {"bins": ctx.choice([2, 3], "bins")})


def interp_case(ctx: Ctx) -> Case:
    xp = ctx.arg((ctx.integer(1, 5, "n"),), layout="C", writable=True)
    xp.base[...] = np.sort(np.nan_to_num(xp.base)) + np.arange(xp.base.size)
    fp = ctx.arg(xp.base.shape)
    return Case([ctx.arg(ctx.shape()), xp, fp])


def quantile_case(ctx: Ctx) -> Case:
    shape = ctx.shape(min_dims=1, min_side=1)
    # (gradients: a scalar q only; an array of quantiles has no derivative rule)
    qs = [0.0, 0.3, 0.5, 1.0] if ctx.grad else [0.0, 0.3, 1.0, [0.25, 0.75]]
    return Case([ctx.arg(shape), ctx.choice(qs, "q")],
                {"axis": opt_axis(ctx, shape), "keepdims": ctx.boolean("keepdims")})


def fft_case(kind: str):
    def case(ctx: Ctx) -> Case:
        shape = ctx.shape(min_dims=1 if kind == "1" else 2, min_side=1)
        params = {"norm": ctx.choice([None, "ortho", "forward"], "norm")}
        if kind == "1":
            params["axis"] = an_axis(ctx, shape)
            params["n"] = ctx.choice([None, 3], "n")
        return Case([ctx.arg(shape)], params)
    return case


def split_sections(ctx, shape):
    return ctx.choice([1, [1], [0, 2]], "sections")


def pad_case(ctx: Ctx) -> Case:
    shape = ctx.shape(min_dims=1, max_dims=2, min_side=2)
    mode = ctx.choice(["constant", "edge", "wrap", "reflect", "symmetric"], "mode")
    width = ctx.choice([1, (1, 0), ((0, 1),) * len(shape)], "width")
    return Case([ctx.arg(shape), width], {"mode": mode})


def select_case(ctx: Ctx) -> Case:
    shape = ctx.shape()
    x = ctx.arg(shape)
    cond = [index_arg(ctx.rng.random(shape) < 0.3), index_arg(ctx.rng.random(shape) < 0.5)]
    return Case([cond[0], cond[1], x, ctx.arg(shape)], {})


def _select(c0, c1, a, b):
    return np.select([c0, c1], [a, b], -1.0)


def average_case(ctx: Ctx) -> Case:
    shape = ctx.shape(min_dims=1, max_dims=2, min_side=1)
    return Case([ctx.arg(shape), ctx.arg(shape, POS)], {"axis": ctx.choice([None, 0], "axis")})


def numeric_composite_rows() -> list[Row]:
    return [
        C("stack", np.asarray, shaped(0), tensor=spelled(np.asarray)),
        C("copy", np.array, shaped(0), tensor=spelled(np.array)),
        C("stack", lambda a, b: np.array([a, b]), pair(), name="array_of_arrays",
          tensor=lambda a, b: spelled(np.array)([a, b]),
          via=lambda a, b: call_spelling(np.array, [a, b])),
        C("subtract", np.diff, nonempty(n=lambda c, s: c.integer(0, 2, "n"), axis=an_axis)),
        C("concatenate", np.roll, shaped(0, shift=lambda c, s: c.integer(-3, 3, "shift"),
                                         axis=lambda c, s: c.choice([None] + list(range(len(s))), "axis"))),
        C("flip", np.rot90, shaped(2, k=lambda c, s: c.integer(-1, 3, "k"))),
        C("rint", np.round, shaped(0, decimals=lambda c, s: c.integer(-1, 2, "decimals")),
          dtypes=FLOATS, grad=False, alts=(np.around,)),
        C("where", np.nan_to_num, shaped(0), dtypes=FLOATS + COMPLEX),
        C("less_equal", np.isclose, pair(max_dims=2), grad=False),
        C("where", np.nansum, shaped(0, axis=opt_axis)),
        C("where", np.nanprod, shaped(0, axis=opt_axis)),
        C("where", np.nanmean, nonempty(0, axis=opt_axis)),
        C("where", np.nanvar, nonempty(1, axis=opt_axis, ddof=lambda c, s: c.integer(0, 1, "ddof"))),
        C("where", np.nanstd, lambda ctx: Case([ctx.arg(ctx.shape(min_dims=1, min_side=2))],
                                               {"axis": None})),
        C("where", np.nanmax, nonempty(0, axis=opt_axis)),
        C("where", np.nanmin, nonempty(0, axis=opt_axis)),
        C("where", np.nancumsum, shaped(0, axis=opt_axis)),
        C("mean", lambda a, w, axis=None: np.average(a, axis=axis, weights=w), average_case,
          name="average", via=lambda a, w, axis=None: call_spelling(np.average, a, axis=axis, weights=w)),
        C("matmul", np.cov, nonempty(1, 2, bias=lambda c, s: c.boolean("bias"))),
        C("clip", np.corrcoef, nonempty(2, 2), grad=False),
        C("multiply", np.polyval, pair(same=False, max_dims=1)),
        C("concatenate", np.append, pair(same=False, max_dims=1)),
        C("getitem", np.array_split, nonempty(1, 2, indices_or_sections=split_sections),
          via=lambda *a, **k: tuple(call_spelling(np.array_split, *a, **k))),  # a list: the graph's outputs
        C("broadcast_to", np.meshgrid, pair(same=False, max_dims=1)),
        C("where", _select, select_case, name="select",
          via=lambda c0, c1, a, b: call_spelling(np.select, [c0, c1], [a, b], -1.0)),
        C("sum", np.trace, nonempty(2, 3)),
        C("einsum", np.diag, nonempty(1, 2)),
        C("multiply", np.kron, pair(same=False, max_dims=2)),
        C("subtract", np.cross, lambda ctx: Case([ctx.arg((2, 3)), ctx.arg((3,))])),
        C("dot", np.vdot, pair()),
        C("matmul", np.linalg.matrix_power, lambda ctx: Case(
            square_stack(ctx).args + [ctx.choice([-2, -1, 1, 2, 3, 5] + ([] if ctx.grad else [0]), "n")])),
        C("flip", np.correlate, vectors),
        C("concatenate", np.pad, pad_case),
        C("getitem", np.fft.fftshift, shaped(1), dtypes=FLOATS + COMPLEX),
    ]


def _nonzero_or_raise_ref(x):
    if np.any(x == 0):
        raise ZeroDivisionError("zero")
    return np.array(x, copy=True)


def numeric_op_rows() -> list[Row]:
    rows = [
        Row("nonzero_or_raise", numpy=_nonzero_or_raise_ref,
            via_op=lambda x: F.nonzero_or_raise(x, message="zero", error="ZeroDivisionError"),
            tensor=lambda x: apply(Bound(REGISTRY["nonzero_or_raise"], (x,),
                                         {"message": "zero", "error": "ZeroDivisionError"})),
            case=shaped(0), grad=True),
        E("diagonal", np.diagonal, nonempty(2, 3, offset=lambda c, s: c.integer(-1, 1, "offset")),
          grad=True, alts=(lambda a, offset=0: a.diagonal(offset),)),
        E("sort", np.sort, shaped(0, axis=opt_axis), dtypes=NUMERIC, grad=True),
        E("argsort", np.argsort, shaped(1, axis=an_axis), dtypes=NUMERIC,
          alts=(lambda a, axis=-1: a.argsort(axis=axis),)),
        E("partition", np.partition, nonempty(1, kth=0, axis=an_axis), dtypes=NUMERIC, grad=True),
        E("argpartition", np.argpartition, nonempty(1, kth=0, axis=an_axis), dtypes=NUMERIC),
        E("searchsorted", np.searchsorted, sorted_and_values, dtypes=FLOATS),
        E("digitize", np.digitize, digitize_case),
        E("searchsorted_sorter", _with_sorter, sorter_case, dtypes=FLOATS,
          via=lambda a, v, sorter, side="left": call_spelling(np.searchsorted, a, v, side, sorter),
          alts=(lambda a, v, sorter, side="left": a.searchsorted(v, side, sorter),),
          bad=(Case([A(3), A(2), index_arg(np.array([0, -1, 2]))]),           # visited: raises
               Case([A(3), A(2), index_arg(np.array([0, 3, 2]))]),
               Case([A(3), A(2), np.array([0.0, 1.0, 2.0])]),               # TypeError
               Case([A(3), A(2), index_arg(np.array([0, 1]))]))),           # size differs
        E("packbits", np.packbits, bits_case, dtypes=(I64, BOOL, U8),
          bad=(Case([A(3)]), Case([A(2, 3, dtype=I64)], {"axis": 2}, traced=False),
               Case([A(3, dtype=I64)], {"bitorder": "middle"}, traced=False))),
        E("unpackbits", np.unpackbits, unpack_case, dtypes=(U8,),
          bad=(Case([A(3, dtype=I64)]), Case([A(2, dtype=U8)], {"count": -17}))),

        E("isin", np.isin, isin_case, dtypes=NUMERIC, via=lambda e, t, **p: F.isin(e, t, **p)),
        E("quantile", np.quantile, quantile_case, grad=True, alts=(lambda a, q, **p: np.percentile(a, np.multiply(q, 100), **p),)),
        E("histogram_counts", lambda a, **p: np.histogram(a, **p)[0], hist_case,
          via=lambda a, **p: call_spelling(np.histogram, a, **p)[0]),
        E("histogram_bin_edges", np.histogram_bin_edges,
          lambda ctx: Case(hist_case(ctx).args, {"bins": 3})),
        E("histogram2d_both", lambda x, y, **p: np.histogram2d(x, y, **p)[0], hist2d_case,
          via=lambda x, y, **p: call_spelling(np.histogram2d, x, y, **p)[0]),
        E("histogram_both", lambda a, **p: np.histogram(a, **p)[1], hist_data_case,
          via=lambda a, **p: call_spelling(np.histogram, a, **p)[1]),
        E("interp", np.interp, interp_case, grad=True),
        E("det", np.linalg.det, square_stack, grad=True),
        E("pinv", np.linalg.pinv, matrix, grad=True),
        E("svdvals", np.linalg.svdvals, matrix, grad=True),
        E("eigvalsh", np.linalg.eigvalsh, square_stack, grad=True),
        E("matrix_rank", np.linalg.matrix_rank, matrix),
        # several results, one packed op each (kiln/ops/factorizations.py)
        E("slogdet_packed", lambda a: np.stack(np.linalg.slogdet(a), -1), square_stack,
          grad=True, via=lambda a: F.slogdet_packed(a)),
        C("slogdet_packed", np.linalg.slogdet, square_stack, grad=False, name="slogdet"),
        E("eigh_packed", lambda a: np.concatenate([np.linalg.eigh(a)[0][..., None, :],
                                                   np.linalg.eigh(a)[1]], -2),
          square_stack, grad=True, via=lambda a: F.eigh_packed(a)),
        C("eigh_packed", np.linalg.eigh, square_stack, grad=False, name="eigh"),
        C("eigh_packed", lambda a: np.linalg.eigh(a, "U"), square_stack, grad=False,
          name="eigh_upper", via=lambda a: call_spelling(np.linalg.eigh, a, "U")),
        E("svd_packed", lambda a: np.concatenate([v.reshape(v.shape[:-2] + (-1,)) if v.ndim > 1
                                                  else v for v in np.linalg.svd(a, full_matrices=False)], -1),
          separated_matrix, via=lambda a: F.svd_packed(a, full_matrices=False), grad=True),
        C("svd_packed", np.linalg.svd, finite_matrix, grad=False, name="svd"),
        E("qr_raw_packed", lambda a: np.concatenate([np.swapaxes(np.linalg.qr(a, "raw")[0], -1, -2).ravel(),
                                                     np.linalg.qr(a, "raw")[1]]),
          finite_matrix, via=lambda a: F.qr_raw_packed(a)),
        E("lstsq_packed", lambda a, b: _lstsq_impl(a, b), lstsq_case,
          via=lambda a, b: F.lstsq_packed(a, b), tensor=lambda a, b: F.lstsq_packed(a, b),
          grad=True),
        E("histogram_bin_counts", lambda i, bins: np.bincount(i, minlength=bins + 1)[:bins],
          bin_index_case, dtypes=(np.dtype(np.int64),), via=lambda i, bins: F.histogram_bin_counts(i, bins=bins)),
        C("svd_packed", lambda a: np.linalg.svd(a, full_matrices=False), finite_matrix, grad=False,
          name="svd_reduced", via=lambda a: call_spelling(np.linalg.svd, a, full_matrices=False)),
        E("qr_packed", lambda a: np.concatenate([v.ravel() for v in np.linalg.qr(a)]), separated_matrix,
          via=lambda a: F.qr_packed(a), grad=True),
        C("qr_packed", np.linalg.qr, finite_matrix, grad=False, name="qr"),
        C("qr_packed", lambda a: np.linalg.qr(a, mode="complete"), finite_matrix, grad=False,
          name="qr_complete", via=lambda a: call_spelling(np.linalg.qr, a, mode="complete")),
        C("qr_packed", lambda a: np.linalg.qr(a, mode="r"), finite_matrix, grad=False,
          name="qr_r", via=lambda a: call_spelling(np.linalg.qr, a, mode="r")),
        E("convolve", np.convolve, vectors, grad=True),
    ]
    # (complex results: the op table's real cotangents do not fit them, so their gradients
    # are checked in tests/ops/test_complex_grads.py; test_op_table.py leaves them out)
    for name in ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft"):
        rows.append(E(name, getattr(np.fft, name), fft_case("1"), grad=REGISTRY[name].vjp is not None,
                      dtypes=FLOATS if name in ("rfft", "ihfft") else FLOATS + COMPLEX))
    for name in ("fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn", "rfftn", "irfftn"):
        rows.append(E(name, getattr(np.fft, name), fft_case("n"), grad=REGISTRY[name].vjp is not None,
                      dtypes=FLOATS if name.startswith("rfft") else FLOATS + COMPLEX))
    return rows
