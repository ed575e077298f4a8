"""Programs drawn from NumPy's own test suite, run through kiln (docs/numpy_tests.md: the
harness that runs numpy/lib/tests, numpy/_core/tests ... with NumPy's functions compiled).
Each is a case where kiln differed from NumPy; checked like tests/test_programs.py
(values, dtypes, shapes, exceptions, argument states, aliasing) on cpp and eager.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import kiln
from tests.test_programs import program_registry, program_test

PROGRAMS, program = program_registry()   # name -> (fn, the calls it is checked on)


# numpy/lib/tests/test_function_base.py TestSinc.test_float16_underflow: NumPy >= 2.2 puts the
# dtype's eps at the zeros; kiln's 1e-20 underflowed in float16 and gave nan at 0.
@program((np.float16(0),), (np.array([0.0, 0.5, -2.0], dtype=np.float16),),
         (np.arange(-2, 3),), (np.array([0.0, 0.25], dtype=np.float32),))
def sinc_at_zero(x):
    return np.sinc(x)


# TestCheckFinite.test_simple: a list argument reached the finiteness check unconverted
# (AttributeError: 'list' object has no attribute 'dtype').
@program(([1, 2, 3],), ([1.0, np.inf],), ([[1.0, 2.0]],), (3.5,))
def asarray_chkfinite_of_a_list(a):
    return np.asarray_chkfinite(a) * 2


# TestCov.test_gh_27658: rowvar=False transposes a (1, n) array too (NumPy >= 2.2); kiln
# kept it as one variable and returned a 0-d covariance.
@program((np.ones((1, 3)),), (np.arange(6.0).reshape(2, 3),), (np.array([[1.0, 2.0, 4.0]]),))
def cov_rowvar_false_single_row(x):
    return np.cov(x, ddof=0, rowvar=False), np.corrcoef(x + np.arange(x.shape[1]), rowvar=False)


# TestPercentile.test_nan_q: a NaN percentile passed the range check (NaN compares False)
# and NumPy's quantile then raised with quantile's words, not percentile's.
@program(([1, 2, 3, 4.0], [np.nan]), ([1, 2, 3, 4.0], [50.0, 150.0]),
         ([1, 2, 3, 4.0], np.array([10.0, np.nan])), (np.arange(5.0), np.array([10.0, 50.0])),
         (np.arange(5.0), np.array([-1.0])))
def percentile_out_of_range(a, q):
    return np.percentile(a, q)


@program(([1, 2, 3, 4.0], [np.nan]), (np.arange(5.0), np.array([0.5, np.nan])))
def quantile_nan(a, q):
    return np.quantile(a, q)


# test_arraysetops.py TestSetOps.test_ediff1d_forbidden_type_casts: NumPy refuses to_begin /
# to_end that do not cast same_kind to ary's dtype (TypeError); kiln cast them silently.
@program((np.array([1, 2, 3]), np.nan), (np.array([1, 3, 9], dtype=np.int8), 2.5),
         (np.array([1.0, 2.0, 4.0]), 7), (np.array([1, 2, 3]), 7))
def ediff1d_forbidden_casts(a, end):
    return np.ediff1d(a, to_end=end), np.ediff1d(a, to_begin=[end, end])


# TestUnique.test_unique_array_api_functions: np.unique_values keeps every NaN (equal_nan=False)
# and, since NumPy 2.3, hands back its hash table's order; kiln gave np.unique's answer.
@program((np.array([5.0, np.nan, 1.0, np.nan, 5.0]),), (np.array([5, 3, 1, 3, 9, -2]),))
def unique_values_nans_and_order(x):
    return np.unique_values(x) * 2


# TestUnique.test_unique_1d builds np.array(list(zip(a, a)), [('', 'i'), ('', 'i')]): the dtype
# came out as a plain 'V8' (fields lost, one more dimension). Structured, void and sub-array
# dtypes now run as NumPy.
@program(([5, 7, 1, 2, 1],), ([0, 3],))
def structured_and_subarray_dtypes(a):
    rec = np.array(list(zip(a, a)), [("", "i"), ("", "i")])
    return rec["f1"] * 2, np.zeros(len(a), dtype="(2,)f8") + 1, np.array(a, dtype=[("x", "f8")])["x"]


_NDAT = np.array([[0.6244, np.nan, 0.2692, 0.0116, np.nan, 0.1170],
                  [0.5351, -0.9403, np.nan, 0.2100, 0.4759, 0.2833],
                  [np.nan, np.nan, np.nan, 0.1042, np.nan, -0.5954],
                  [0.1610, np.nan, np.nan, 0.1859, 0.3146, np.nan]])


# test_nanfunctions.py TestNanFunctions_MeanVarStd.test_ddof: a run-time ddof=0 is CPython's
# shared 0, the object of every literal 0 inside np.nanvar's composite (the NaN fill): the
# second call, ddof=1, filled NaNs with 1. test_ddof_too_big: NaN where ddof >= count (was inf).
@program((_NDAT, 0), (_NDAT, 1), (_NDAT, 2), (_NDAT.astype(np.float32), 3))
def nanvar_runtime_ddof(a, ddof):
    return np.nanvar(a, axis=1, ddof=ddof), np.nanstd(a, axis=1, ddof=ddof)


# TestNanFunctions_MeanVarStd.test_dtype_error: an integer dtype for a float array is NumPy's
# TypeError; kiln summed into ints.
@program((_NDAT, np.int_), (_NDAT, np.bool_), (_NDAT, np.float32))
def nanmean_integer_dtype(a, dt):
    return np.nanmean(a, axis=1, dtype=dt)


# TestNanFunctions_ArgminArgmax.test_out[D]: complex NaNs were not skipped (index 0 came back),
# nor by nanmin/nanmax.
_C = np.arange(9).astype(complex)
_C[:5] = np.nan
_C[6] = complex(3, np.nan)


@program((_C,), (_C.astype(np.complex64).reshape(3, 3),))
def nan_extremes_of_complex(c):
    return np.nanargmin(c), np.nanargmax(c), np.nanmin(c), np.nanmax(c)


# test_type_check.py TestNanToNum.test_integer/test_float: NumPy returns x[()] for a 0-d x,
# a NumPy scalar; kiln returned a 0-d array.
@program((1,), (1.0,), (np.float32(np.nan),), (np.array(np.inf),), (np.array(1 + 1j * np.nan),),
         (np.array([1.0, np.nan, -np.inf]),))
def nan_to_num_of_a_scalar(x):
    return np.nan_to_num(x), np.nan_to_num(x, nan=10, posinf=20)


# Found after the ddof fix by passing run-time small ints to composites: capture finds
# run-time numbers by identity and CPython shares small ints, so a run-time k of 0 took
# the place of the composite's own 0s (np.nan_to_num's greater(x, 0), np.cov's and
# np.gradient's literals) and the next call's k changed them: wrong values, no error.
_M = np.arange(12.0).reshape(3, 4) ** 1.5


_K = ((0,), (1,), (3,), (0,), (2,), (-1,))


@program(*[(np.where(_M > 5, _M, np.nan),) + k for k in _K])
def nan_to_num_runtime_fill(x, k):
    return np.nan_to_num(x, nan=k)


@program(*[(_M,) + k for k in _K[:-1]])
def cov_runtime_ddof(m, k):
    return np.cov(m, ddof=k)


@program(*[(_M,) + k for k in _K[:-1]])
def gradient_runtime_spacing(m, k):
    return np.gradient(m, k + 1, axis=1)


@program(*[(_M,) + k for k in _K])
def roll_and_round_runtime(m, k):
    return np.roll(m, k, axis=1), np.round(m, k)


# Third run. test_ufunclike.py TestUfunclike.test_isposinf/test_isneginf: NumPy's signbit has
# no complex loop, so a complex x is a TypeError; kiln compared with 0 and answered.
@program((np.array([np.inf, -np.inf, np.nan, 0.0, -3.0]),), (np.array([np.inf, 1j]),),
         (np.complex64(1),), (np.arange(3),), (np.float32(-np.inf),), ([1.0, -np.inf],))
def isposinf_isneginf_of_complex(x):
    return np.isposinf(x), np.isneginf(x)


@program((np.array([np.inf, -np.inf, 2.0]), np.zeros(3, bool)), (np.array([np.inf, 1j]), np.ones(2, bool)))
def isposinf_into_out(x, out):
    r = np.isposinf(x, out)
    return r, out.sum()


# test_arraypad.py test_memory_layout_persistence: NumPy allocates the padded result
# np.empty(shape, order='F' if array.flags.fnc else 'C'); kiln's joins laid an F-ordered
# array's result out in C order (and a non-contiguous one in its own axis order).
_PF = np.asfortranarray(np.arange(50.0).reshape(5, 10))


@program(*[(_PF, m) for m in ("constant", "edge", "wrap", "reflect", "symmetric")],
         (np.ascontiguousarray(_PF), "edge"), (_PF[:, ::2], "constant"),
         (np.arange(24.0).reshape(2, 3, 4).T, "reflect"), (np.arange(24.0).reshape(2, 3, 4).T[1:], "edge"))
def pad_keeps_fortran_order(x, mode):
    return np.pad(x, 2, mode), np.pad(x, ((1, 0),) * x.ndim, mode), np.pad(x, 0, mode)


# test_stride_tricks.py test_writeable / test_writeable_memoryview: np.broadcast_arrays hands
# back an argument that already has the broadcast shape itself, and the others writeable
# (with NumPy's warnings); kiln gave read-only broadcast_to views of every argument.
# (Sizes that become dynamic, then ones that do not broadcast: NumPy's ValueError, not the
# arguments given back.)
@program((np.arange(3.0), np.zeros((2, 1))), (np.arange(3.0), np.ones(3)), (np.arange(6).reshape(2, 3), 2.5),
         *[(np.arange(n + 0.0), np.ones(m)) for n, m in ((5, 5), (7, 7), (9, 9), (3, 4), (1, 6), (6, 1))])
def broadcast_arrays_gives_back_its_arguments(x, y):
    a, b = np.broadcast_arrays(x, y)
    return a, b, (a * 2 + b).sum(), np.broadcast_arrays(x)


@program(*[(np.zeros(n), np.zeros(m)) for n, m in ((3, 3), (5, 5), (7, 7), (3, 4), (6, 1), (2, 2))])
def broadcast_arrays_after_sizes_went_dynamic(x, y):
    return np.broadcast_arrays(x, y)


@program((np.arange(3.0), np.zeros(3)), (np.arange(4.0), np.ones(4)))
def broadcast_arrays_result_written(x, y):
    a, b = np.broadcast_arrays(x, y)
    a[0] = 7.0          # a is x: NumPy writes into the caller's array
    b += 1.0
    return a.sum() + b.sum()


# _core/tests/test_einsum.py TestEinsumPath.test_path_type_input_invalid: an explicit
# contraction path that leaves operands uncontracted is NumPy's RuntimeError; kiln read
# optimize= as a bool and contracted in an order of its own.
_E = [np.random.default_rng(41).random(s) for s in ((2, 3), (3, 4), (4, 5), (5, 2))]


@program(*[tuple(_E) + (p,) for p in (["einsum_path", (2, 3), (0, 1)], ["einsum_path", (0, 1), (0, 1), (0, 1)],
                                      ["einsum_path", (1, 2), (0, 2), (0, 1)], "optimal", "greedy", True,
                                      False, "fastest", ["einsum_path", (0, 1)])])
def einsum_explicit_path(a, b, c, d, path):
    return np.einsum("ab,bc,cd,de->ae", a, b, c, d, optimize=path)


# _core/tests/test_multiarray.py TestMethods.test_sort / test_partition: kind= and stable=
# together are NumPy's ValueError, a kind that is not a str its TypeError (np.partition
# too, kind=None included); kiln ignored them, and refused NumPy's short 'quick'/'Q'.
_S = np.array([3.0, 1.0, 2.0, 1.0, 0.5])


@program(*[(_S, kw) for kw in ({"kind": "stable", "stable": True}, {"kind": "heapsort", "stable": False},
                               {"kind": "quick"}, {"kind": "Q"}, {"kind": 1}, {"kind": "x"}, {"stable": True},
                               {"stable": False}, {})])
def sort_kind_and_stable(a, kw):
    return np.sort(a, **kw), np.argsort(a, **kw), np.sort(a[::-1].reshape(1, 5), axis=1, **kw)


@program(*[(_S, kw) for kw in ({"kind": 1}, {"kind": "x"}, {"kind": None}, {"kind": "introselect"}, {})])
def partition_kind(a, kw):
    return np.partition(a, 2, **kw), np.argpartition(a, 2, **kw)


# Fourth run. _core/tests/test_shape_base.py TestConcatenate.test_out_and_dtype: out= takes
# each array under casting= (casting='no' into a complex64 or float32 out is NumPy's
# TypeError), and out= with dtype= is refused; kiln wrote into out (same_kind) and answered.
_J = (np.array([1.1, 2.2]), np.array([3.3, 4.4]))


@program(*[(_J, dt, c) for dt in ("c8", "f4", "f8", "i8") for c in ("no", "safe", "same_kind", "unsafe")])
def concatenate_and_stack_out_casting(arrays, dt, casting):
    out, out2 = np.zeros(4, dt), np.zeros((2, 2), dt)
    r = np.concatenate(arrays, out=out, casting=casting)
    return r, np.stack(arrays, out=out2, casting=casting), out.sum(), out2.sum()


# test_concatenate_same_value (cpp only: the eager interpreter called NumPy, which checks):
# an unknown casting= is NumPy's ValueError, a non-str its TypeError.
@program(*[(_J, c) for c in ("same_value", "bogus", 3, "unsafe")])
def concatenate_and_stack_bad_casting(arrays, casting):
    return np.concatenate(arrays, casting=casting), np.stack(arrays, casting=casting)


@program(*[(_J, dt) for dt in ("f8", "f4")])
def concatenate_out_and_dtype(arrays, dt):
    out = np.zeros(4, dt)
    return np.concatenate(arrays, out=out, dtype=dt), out


# _core/tests/test_numeric.py TestCreationFuncs.test_zeros/ones/empty/full: a DType class
# (np.dtypes.Float64DType) as dtype= is its default instance for np.zeros, but object for
# np.arange or np.cumsum; kiln read it as np.dtype(cls), object, everywhere. Such calls
# now run as NumPy.
_DTC = (np.dtypes.Float64DType, np.dtypes.Int8DType, np.dtypes.Complex64DType, np.dtypes.BoolDType,
        np.dtypes.StrDType, np.dtypes.BytesDType, np.float32)


@program(*[((2, 3), dt) for dt in _DTC])
def creation_with_a_dtype_class(shape, dt):
    return (np.zeros(shape, dtype=dt, order="F"), np.ones(shape, dtype=dt), np.empty(shape, dt).shape,
            np.full(shape, 1, dtype=dt))


@program(*[(np.arange(6.0).reshape(2, 3), dt) for dt in _DTC[:4]])
def astype_and_sum_with_a_dtype_class(x, dt):
    return (x.astype(dt), np.asarray(x, dtype=dt), np.arange(4, dtype=dt), x.sum(axis=0, dtype=dt),
            np.cumsum(x, dtype=dt), np.concatenate([x, x], dtype=dt), x * 2)


# TestClip.test_clip_min_max_args: np.clip(a, 2) and np.clip(a, a_max=2) are NumPy's
# TypeErrors (a missing bound), a_min/a_max with min=/max= its ValueError; kiln clipped on
# one side. ndarray.clip has no a_min (NumPy's ufunc error, here by running as NumPy).
@program(*[(np.arange(5.0), a, k) for a, k in (((2,), {}), ((), {"a_max": 2}), ((), {"a_min": 1}),
                                               ((2, 3), {"max": 3}), ((None, 3), {"min": 1}),
                                               ((), {"min": 2, "max": 3}), ((), {"max": 2}), ((), {}),
                                               ((1, 3), {}))])
def clip_argument_forms(x, a, k):
    return np.clip(x, *a, **k)


@program(*[(np.arange(5.0), k) for k in ({"min": 1}, {"a_min": 1}, {"max": 3}, {})])
def clip_method_argument_forms(x, k):
    return x.clip(**k)


# TestIsclose.test_nep50_isclose: NumPy makes only b inexact and leaves a and Python-number
# tolerances weak, so a float32 a near a Python float is compared in float32; kiln cast a to
# float64 and said False. test_tol_warnings: a non-finite atol/rtol is NumPy's warning.
_B1 = float(1.0 - np.finfo("f8").eps)
_F32 = np.array(_B1, "f4")


@program(*[(_F32, b, k) for b, k in ((_B1, {"atol": 0, "rtol": 0}), (np.float32(0), {"atol": _B1}),
                                     (2, {"atol": 0, "rtol": _B1 / 2}), (np.float64(_B1), {"atol": 0, "rtol": 0}),
                                     (np.float32(0), {"atol": np.float64(_B1)}),
                                     (2, {"atol": 0, "rtol": np.float64(_B1 / 2)}))],
         (np.array([1.0, 2.0], np.float32), np.array([1.0 + 1e-7, 2.1]), {}),
         (np.arange(3, dtype=np.int8), 1, {}), (np.array([1 + 1j], np.complex64), 1.0000001, {}))
def isclose_nep50(a, b, k):
    return np.isclose(a, b, **k), np.isclose(b, a, **k)


# _core/tests/test_indexing.py TestIndexing.test_character_assignment: np.zeros(s, dtype='c')
# is a one-character-per-element array ('c' equals 'S1', but a str assigned into it is split);
# kiln's copy of the dtype became a plain 'S1' and the assignment put 'a' everywhere.
@program(((1, 5), "asdfg"), ((3,), "xyz"))
def char_dtype_assignment(shape, text):
    arr = np.zeros(shape, dtype="c")
    arr[..., :] = np.str_(text)
    return arr, np.array([b"q"], dtype="c"), np.ones(2, "c"), np.empty_like(arr, dtype="c").dtype.char


# TestBooleanIndexing.test_bool_as_int_argument_errors: NumPy's C functions refuse a bool where
# a size or an axis goes (np.reshape(a, (True, -1)), np.take(a, [0], False), np.zeros((True, 2)),
# np.sum(a, axis=True)); kiln took True as 1. Functions written in Python take it (np.tile).
_A3 = np.arange(6).reshape(1, 2, 3)


_BOOL_CALLS = (lambda a, v: np.reshape(a, (v, -1)), lambda a, v: np.take(a, [0], v),
               lambda a, v: np.zeros((v, 2)), lambda a, v: np.sum(a, axis=v), lambda a, v: np.eye(2, v),
               lambda a, v: a.reshape(v, -1), lambda a, v: np.squeeze(a, axis=v), lambda a, v: np.tile(a, v),
               lambda a, v: np.ones(v), lambda a, v: np.full((2, v), 1.5), lambda a, v: a.max(axis=(v,)))


@program(*[(_A3, v, k) for k in range(len(_BOOL_CALLS)) for v in (True, np.True_, 1, False, 0)])
def bool_as_size_or_axis(a, v, k):
    return _BOOL_CALLS[k](a, v)


# linalg/tests/test_linalg.py test_pinv_rtol_arg: rcond= with rtol= is NumPy's ValueError, and
# rtol=None is max(M, N) * eps (kiln used rcond's default, 1e-15, and took both).
_PA = np.array([[1.0, 2.0, 3.0], [4.0, 1.0, 1.0], [2.0, 3.0, 1.0]])
_PS = np.array([[1.0, 0.0], [0.0, 8e-16], [0.0, 0.0]])   # kept by 3 * eps, cut by 1e-15


@program(*[(m, k) for m in (_PA, _PS, _PS.astype(np.float32))
           for k in ({"rcond": 0.5}, {"rtol": 0.5}, {"rcond": 0.5, "rtol": 0.5}, {"rtol": None}, {})],
         (np.arange(4).reshape(2, 2), {"rtol": None}))
def pinv_rtol_and_rcond(a, k):
    return np.linalg.pinv(a, **k)


# _core/tests/test_scalarmath.py TestConversion.test_iinfo_long_values: NumPy converts Python
# numbers given a dtype one by one, range-checked (np.array(128, dtype=np.int8): OverflowError;
# a float as int() does it); kiln made the int64 array and cast it, which wrapped to -128.
# A NumPy scalar in a list goes the same way to a signed integer type (uint8 wraps).
_FROM_NUMBERS = (lambda x, dt: np.array(x, dtype=dt), lambda x, dt: np.array([1, x], dtype=dt),
                 lambda x, dt: np.asarray([[1], [x]], dtype=dt),
                 lambda x, dt: np.ascontiguousarray([x, 2], dtype=dt),
                 lambda x, dt: np.asfortranarray([[x, 2], [3, 4]], dtype=dt),
                 lambda x, dt: np.array([np.int64(x), 2], dtype=dt),
                 lambda x, dt: np.array([x, 1.5], dtype=dt))


@program(*[(x, dt, k) for k in range(len(_FROM_NUMBERS))
           for x, dt in ((128, np.int8), (-1, np.uint8), (300.5, np.int8), (100, np.int8),
                         (2.5, np.uint16), (-1, np.int16), (70000, np.float16), (300, np.uint8))])
def numbers_out_of_the_dtypes_range(x, dt, k):
    return _FROM_NUMBERS[k](x, dt)


# _core/tests/test_multiarray.py TestMethods.test_dot_out_mem_overlap: np.dot's out= must be
# C-contiguous, of the result's exact dtype and shape (NumPy's ValueError "output array is
# not acceptable"); kiln wrote the product into a transposed, strided or float32 out.
_DA = np.arange(9.0).reshape(3, 3)


@program(*[(_DA, k, o) for k in range(3) for o in (
    np.zeros((3, 3)), np.zeros((3, 3)).T, np.zeros((3, 6))[:, ::2], np.zeros((3, 3), np.float32),
    np.zeros((4, 3))[:3], np.zeros((3, 3), dtype=int))])
def dot_out_must_be_c_contiguous(a, k, out):
    if k == 0:
        return np.dot(a, a, out=out) + 1
    if k == 1:
        return a.dot(a[:, 0], out=out[:, 0])   # a column: strided
    return np.dot(a, np.asfortranarray(a), out=out.T)


# _core/tests/test_multiarray.py TestDevice.test_device: np.asarray/np.asanyarray(x,
# device="nonsense") is NumPy's ValueError; kiln ignored device=.
@program(*[(x, d) for x in ([1.0, 2.0], np.arange(3.0)) for d in (None, "cpu", "nonsense")])
def asarray_device(x, d):
    return np.asarray(x, device=d) + np.asanyarray(x, device=d)


# _core/tests/test_multiarray.py TestArrayConstruction.test_array_copy_str: np.array/np.asarray
# read copy= as NumPy does: a string is NumPy's ValueError, copy=0 / np.False_ mean never a
# copy (kiln copied for them, and for a string).
@program(*[(x, c, k) for x in ([1.0, 2.0], np.arange(3.0)) for c in ("always", 0, 1, np.False_, None)
           for k in range(2)])
def copy_keyword_forms(x, c, k):
    r = np.array(x, copy=c) if k == 0 else np.asarray(x, copy=c)
    r[0] = -1.0
    return r, x


# TestArrayCreationCopyArgument.test_compatible_cast: a dtype equal to x's under another name
# (np.longlong for int64) needs no copy: NumPy's result is a view of x, and writes reach x.
@program(*[(np.arange(4), c, k) for c in (None, False) for k in range(2)])
def array_of_an_equal_dtype_is_a_view(x, c, k):
    r = np.array(x, dtype=np.longlong, copy=c) if k == 0 else np.asarray(x, dtype=np.longlong)
    r[0] = 7
    return r, x


# TestWhere.test_kwargs: np.where(c, x=a, y=b) is NumPy's TypeError (positional-only
# parameters, as np.concatenate's arrays and np.matrix_transpose's x; np.reshape's newshape=
# is gone in NumPy 2.4); kiln accepted the keywords.
_KEYWORD_CALLS = (lambda a: np.where(a > 1, x=a, y=-a), lambda a: np.where(a > 1, a, y=-a),
                  lambda a: np.concatenate(arrays=[a, a]), lambda a: np.matrix_transpose(x=a[None]),
                  lambda a: np.reshape(a, newshape=(-1, 1)), lambda a: np.where(a > 1, a, -a))


@program(*[(np.arange(4.0), k) for k in range(len(_KEYWORD_CALLS))])
def positional_only_parameters_as_keywords(a, k):
    return _KEYWORD_CALLS[k](a)


# _core/tests/test_ufunc.py test_addition_reduce_negative_zero: NumPy adds a sum's terms to
# initial=, so a sum of -0.0s (or of nothing) with initial=-0.0 is -0.0; kiln added initial to
# a sum that starts at +0.0 and gave +0.0. (Complex parts are returned apart: the programs'
# check compares the signs of real zeros.)
@program((np.full(3, -0.0),), (np.zeros(0),), (np.array([-0.0, 0.0, -0.0]),),
         (np.array([-0.0, 1e-300, -1e-300]),), (np.array([[-0.0, 1.0], [-0.0, -0.0]]),))
def sum_of_negative_zeros_from_initial(x):
    z = np.sum(x * (1 - 1j), axis=-1, initial=complex(-0.0, -0.0))
    return (np.sum(x, initial=-0.0), np.sum(x, axis=-1, keepdims=True, initial=-0.0),
            x.sum(axis=0, dtype=np.float32, initial=-0.0), np.real(z), np.imag(z))


# _core/tests/test_nep50_promotions.py test_nep50_in_concat_and_choose: np.concatenate's
# Python numbers are weak (NEP 50): np.concatenate([np.float32(1), 1.0], axis=None) is float32
# (kiln: float64). A number goes into the join's dtype as NumPy's cast puts it (300 wraps in
# int8, 1e300 overflows float32 with a warning), and casting= sees the weak value.
@program((np.ones(2, np.float32), 1.0), (np.arange(3, dtype=np.int8), 300),
         (np.arange(3, dtype=np.uint8), -3), (np.arange(2, dtype=np.int8), 1.5),
         (np.ones(2, np.float32), 1e300), (np.ones(1, np.float16), 2j))
def concatenate_weak_python_numbers(x, v):
    return np.concatenate([x, v], axis=None) * 2, np.concatenate([np.float32(2), v, x], axis=None)


@program((np.arange(3, dtype=np.int8), 300), (np.arange(2, dtype=np.int8), 1.5),
         (np.arange(2, dtype=np.float16), 1.5))
def concatenate_weak_python_numbers_casting(x, v):
    return np.concatenate([x, v], axis=None, dtype=x.dtype, casting="safe") + 1


# _core/tests/test_multiarray.py TestCreation.test_object_initialized_to_None: NumPy fills a
# new object array of np.empty / np.empty_like / np.ndarray with None; kiln's eager kernel
# (which the cpp backend runs for object dtypes) filled zeros, so they held int 0.
@program((3, object), (2, "O"), (0, object))
def empty_object_arrays_hold_none(n, dt):
    a = np.empty((n, 2), dtype=dt)
    a[:, 0] = 1.5
    return a, np.empty_like(np.arange(n), dtype=dt), np.ndarray((n,), dtype=dt), np.zeros(n, dtype=dt)


# _core/tests/test_ufunc.py TestUfunc.test_cast_safety_scalar: ufunc.resolve_dtypes, which
# capture asks for the loop, crashes NumPy 2.4 (a segfault) on Python numbers alone under
# casting='equiv' when the loop does not fit; the call is NumPy's TypeError (or 7).
@program((3.0, 4.0, "float32"), (3, 4, "int8"), (3, 4, object), (3.0, 4, None))
def ufunc_equiv_casting_of_python_numbers(a, b, dt):
    return np.add(a, b, dtype=dt, casting="equiv")


# test_ufunc.py test_ufunc_types[vecdot] (--ufuncs): np.vecdot's loop keeps its type (int8
# adds and wraps in int8); kiln summed the products as np.sum does, into int64.
_VD = np.arange(12).reshape(3, 4) * 37


@program((_VD.astype(np.int8),), (_VD.astype(bool),))
def vecdot_keeps_its_loop_type(x):
    return np.vecdot(x, x[::-1]), np.linalg.vecdot(x, x, axis=0)


test_program = program_test(PROGRAMS, ["cpp", "eager"])


@pytest.mark.parametrize("backend", ["cpp", "eager"])
def test_broadcast_arrays_flags(backend):
    """Writeability, NumPy's warnings and memoryviews of np.broadcast_arrays's results
    (check_program compares values, strides and identity, not flags)."""
    def f(x, y):
        return np.broadcast_arrays(x, y)

    compiled = kiln.compile(f, backend=backend)

    def state(fn, x, y):
        with warnings.catch_warnings(record=True) as caught:   # (none: kiln read the flag once)
            warnings.simplefilter("always")
            results = fn(x, y)
        out = [[c.category for c in caught]]
        for r in results:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                w = r.flags.writeable
            out.append((w, [c.category for c in caught], memoryview(r).readonly, r is x or r is y))
        return out
    x, y = np.arange(3.0), np.zeros((2, 1))
    ro = np.arange(3.0)
    ro.flags.writeable = False
    for args in ((x, y), (x, x + 1), (ro, y), (0.5, x)):
        for _ in range(2):
            assert state(compiled, *args) == state(f, *args)


@pytest.mark.parametrize("backend", ["cpp", "eager"])
def test_isclose_tolerance_warnings(backend):
    """A non-finite atol or rtol is NumPy's RuntimeWarning "One of rtol or atol is not
    valid" (test_numeric.py TestIsclose.test_tol_warnings); check_program ignores warnings."""
    def f(a, b, atol, rtol):
        return np.isclose(a, b, atol=atol, rtol=rtol)

    compiled = kiln.compile(f, backend=backend)

    def run(fn, *args):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            r = fn(*args)
        return np.asarray(r).tolist(), [(c.category, str(c.message)) for c in caught if "kiln" not in str(c.message)]
    a, b = np.array([1, 2, 3]), np.array([1.0, np.nan, 3.0])
    for atol, rtol in ((1e-8, 1e-5), (np.inf, 1e-5), (1e-8, np.nan), (np.float64(1e-8), 0.0), (0.5, 0.0),
                       (1, 0)):
        assert run(compiled, a, b, atol, rtol) == run(f, a, b, atol, rtol)
    # equal infinities (TestIsclose.test_ip_isclose): NumPy computes the tolerance test under
    # np.errstate(invalid="ignore"); kiln's inf - inf and 0 * inf warned "invalid value
    # encountered in subtract" / "... in multiply" (eager and cpp)
    inf = np.array([np.inf, -np.inf, 1.0, np.inf])
    for atol, rtol in ((1e-8, 1e-5), (1e-8, 0.0)):
        assert run(compiled, inf, inf[::-1].copy(), atol, rtol) == run(f, inf, inf[::-1].copy(), atol, rtol)
        assert run(compiled, inf, np.inf, atol, rtol) == run(f, inf, np.inf, atol, rtol)

    def g(a, b):
        return np.isclose(a, b, atol=np.float64(np.inf)), np.isclose(a, b, rtol=np.float32(1e-3))
    compiled = kiln.compile(g, backend=backend)
    assert run(compiled, a, b) == run(g, a, b)


class _MyFloat(np.float64):
    pass


@pytest.mark.parametrize("backend", ["cpp", "eager"])
def test_object_array_keeps_its_objects(backend):
    """_core/tests/test_ufunc.py TestUfuncGenericLoops.test_unary_PyUFunc_O_O_method_full:
    np.array(x, dtype='O') of a float64 subclass holds that object (its ufunc loop calls the
    object's methods); kiln's copy held a plain float (check_program compares values)."""
    def f(x, dt):
        return np.array(x, dtype=dt), np.asarray([x, 1.5], dtype=dt)

    compiled = kiln.compile(f, backend=backend)
    for x, dt in ((_MyFloat(0.5), "O"), (np.float64(2.0), object), (_MyFloat(0.5), "f8")):
        got, exp = compiled(x, dt), f(x, dt)
        assert [[type(v) for v in np.ravel(r)] for r in got] == [[type(v) for v in np.ravel(r)] for r in exp]
        assert [r.dtype for r in got] == [r.dtype for r in exp]


@pytest.mark.parametrize("backend", ["cpp", "eager"])
def test_array_of_numbers_warns_for_its_cast_at_every_call(backend, monkeypatch):
    """np.array([70000, 1], dtype=np.float16) warns "overflow encountered in cast" at every
    call (the numbers that NumPy converts in range at capture must not swallow that)."""
    monkeypatch.setenv("KILN_COST_MODEL", "0")

    def f(x):
        return np.array([70000, 1], dtype=np.float16) + x

    compiled = kiln.compile(f, backend=backend)
    for _ in range(2):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = compiled(np.float16(1))
        assert [str(w.message) for w in caught] == ["overflow encountered in cast"]
        np.testing.assert_array_equal(got, f(np.float16(1)))


@pytest.mark.parametrize("backend", ["cpp", "eager"])
def test_fortran_ordered_copies_own_their_memory(backend, monkeypatch):
    """TestArrayCreationCopyArgument.test_order_mismatch: np.array(x, order='F'),
    x.copy(order='F') and np.copy(x, order='F') own their memory in NumPy (``.base`` None);
    kiln returned a transposed view of a C-ordered copy of x.T."""
    monkeypatch.setenv("KILN_COST_MODEL", "0")

    def f(x):
        return np.array(x, order="F"), x.copy(order="F"), np.copy(x, order="F"), np.array(x, order="F") * 2

    def alone(x):   # (a graph of the copy alone: a Fortran-ordered copy of a C-ordered input)
        return (np.copy(x, order="F"),)

    for fn in (f, alone):
        compiled = kiln.compile(fn, backend=backend)
        for x in (np.ones(()), np.arange(6.0).reshape(2, 3), np.arange(6.0).reshape(3, 2).T):
            for want, got in zip(fn(x), compiled(x)):
                assert (got.base is None, got.strides) == (want.base is None, want.strides)
                np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("backend", ["cpp", "eager"])
def test_copyto_warns_for_its_cast(backend, monkeypatch):
    """test_casting_floatingpoint_errors.py: np.copyto's cast of a NaN or inf into an int
    array warns "invalid value encountered in cast", of 1e300 into float32 "overflow
    encountered in cast"; a masked-off element is not cast. Compiled (cpp), the copy's
    kernel cast silently: copies are silent in kiln's table of warnings."""
    monkeypatch.setenv("KILN_COST_MODEL", "0")

    def f(dst, src, mask):
        out = np.empty_like(dst)
        np.copyto(out, src, casting="unsafe")
        np.copyto(dst, src * 2, casting="unsafe", where=mask)
        return out, dst

    def run(fn, dst, src, mask):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with np.errstate(invalid="warn", over="warn"):
                out, dst = fn(dst.copy(), src, mask)
        return (np.where(np.isfinite(src), out, 0).tolist(), np.where(mask & np.isfinite(src), dst, 0).tolist(),
                [str(c.message) for c in caught if "kiln" not in str(c.message)])

    compiled = kiln.compile(f, backend=backend)
    m = np.array([True, False, True])
    for dst, src, mask in ((np.zeros(3, np.int16), np.array([1.0, np.nan, 2.0]), m),
                           (np.zeros(3, np.int16), np.array([1.0, 3.0, 2.0]), m),
                           (np.zeros(3, np.int16), np.array([np.inf, 3.0, 2.0]), ~m),
                           (np.zeros(3, np.float32), np.array([1.0, 1e300, 2.0]), m),
                           (np.zeros(3, np.float32), np.array([1e300, 1.0, 2.0]), m)):
        assert run(compiled, dst, src, mask) == run(f, dst, src, mask)

    def lone(dst, src, mask):
        # a complex cast narrows its parts: float64 into complex64 overflows as into float32
        # (said where the cast is the one op of its kernel that may overflow)
        np.copyto(dst, src, casting="unsafe")
        return dst, dst
    compiled = kiln.compile(lone, backend=backend)
    for src in (np.array([1.0, 1e300, 2.0]), np.array([1.0, 3.0, np.inf])):
        dst = np.zeros(3, np.complex64)
        assert run(compiled, dst, src, np.ones(3, bool)) == run(lone, dst, src, np.ones(3, bool))


@pytest.mark.parametrize("backend", ["cpp", "eager"])
def test_array_coercion_edges(backend, monkeypatch):
    """_core/tests/test_array_coercion.py: np.array([x], dtype="S") of a float argument
    writes str(x) (S3 for 1.2; kiln cast the float64 array: S32); a list nested past 64
    dimensions is NumPy's ValueError (kiln's stack raised IndexError); np.asarray(x,
    dtype=d) for a d with metadata is a new view carrying it (kiln returned x: the dtypes
    are equal)."""
    monkeypatch.setenv("KILN_COST_MODEL", "0")

    def strings(x, y):
        return np.array([x, y], dtype="S"), np.array([[x], [y]], dtype="U")

    compiled = kiln.compile(strings, backend=backend)
    for x, y in ((1.2, 2.5), (10.0 ** 20, -0.125)):
        for got, want in zip(compiled(x, y), strings(x, y)):
            assert got.dtype == want.dtype and got.tolist() == want.tolist()

    def array(a):
        return np.array(a, dtype=np.float64)

    nested = [1.5]
    for _ in range(63):
        nested = [nested]
    compiled = kiln.compile(array, backend=backend)
    assert compiled(nested).shape == (1,) * 64
    for too_deep in ([nested], [[nested]]):
        with pytest.raises(ValueError) as want:
            array(too_deep)
        with pytest.raises(ValueError) as got:
            compiled(too_deep)
        assert str(got.value) == str(want.value)

    def asarray(a, dtype):
        return np.asarray(a, dtype=dtype)

    compiled = kiln.compile(asarray, backend=backend)
    x = np.array([1, 2, 3], dtype="i")
    marked = np.dtype("i", metadata={"spam": True})
    assert compiled(x, np.dtype("i")) is x
    got = compiled(x, marked)
    assert got is not x and got.base is x and got.dtype is marked
    # equal under another name: np.longlong's view has its char, 'q' where int64's is 'l'
    # (each its own entry; the eager backend's printed graph said np.int64 for both)
    y = np.arange(3, dtype=np.int64)
    for dt in (np.dtype(np.int64), np.dtype(np.longlong)):
        assert compiled(y, dt).dtype is asarray(y, dt).dtype


@pytest.mark.parametrize("backend", ["cpp", "eager"])
def test_pad_constant_value_cast_warns(backend):
    # (the program above checks values and errors, not warnings) a write that warns in
    # NumPy (once a side) runs as NumPy, every call; cpp's kernel warned at the first call only
    def pad(x, v):
        return np.pad(x, 1, constant_values=v)

    f = kiln.compile(pad, backend=backend)
    for x, v in [(np.zeros(2, np.float32), 1e300), (np.zeros(2, np.uint8), np.nan)] * 2:
        seen = []
        for fn in (pad, f):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                fn(x, v)
            seen.append([str(w.message) for w in caught])
        assert seen[1] == seen[0]


def _outcome(fn, *args, **kwargs):
    try:
        r = fn(*args, **kwargs)
    except Exception as e:   # noqa: BLE001 - NumPy's exception is the expected outcome
        return type(e), str(e)
    return r.dtype, r.shape, r.tolist()


def test_pad_keywords_and_constant_values():
    # (capture's normalization: the eager backend shows it without a kernel build)
    # lib/tests/test_arraypad.py test_kwargs: a keyword of another mode is NumPy's ValueError
    # ("unsupported keyword arguments for mode 'edge': {'constant_values'}"); kiln read
    # constant_values (and reflect_type='even') whatever the mode. constant_values are
    # written as NumPy's _as_pairs gives them: one value or a pair as NumPy scalars
    # (np.int64(-1) into uint8 wraps to 255), more as Python numbers (300 into uint8
    # raises), NaN into an integer array raises; kiln filled with np.full_like (-1 raised,
    # NaN gave INT64_MIN).
    def pad(x, mode, kwargs):
        return np.pad(x, 1, mode, **kwargs)

    f = kiln.compile(pad, backend="eager")
    u8 = np.arange(4, dtype=np.uint8).reshape(2, 2)
    calls = [(np.arange(3.0), m, {k: v}) for m, k, v in (
        ("constant", "constant_values", 2), ("edge", "constant_values", 2), ("wrap", "reflect_type", "even"),
        ("constant", "reflect_type", "even"))]
    calls += [(x, "constant", {"constant_values": v}) for x, v in (
        (u8, -1), (u8[0], [1, 300]), (u8, [[0, 1], [2, 300]]), (np.arange(3), np.nan))]
    for x, mode, kwargs in calls:
        assert _outcome(f, x, mode, kwargs) == _outcome(pad, x, mode, kwargs), (mode, kwargs)



def test_power_of_a_scalar_exponent_takes_numpys_fast_paths(monkeypatch):
    # _core/tests/test_umath.py TestPower.test_power_fast_paths: NumPy's float power loop
    # computes a zero-stride exponent of -1, 0, 0.5, 1 or 2 as 1 / x, 1, sqrt, x, x * x
    # (NumPy >= 2.1). A run-time exponent's kernel took pow for all but 0.5 (other bits:
    # ~3% of float64 x ** 2.0, ~7% of float32) and computed sqrt(x) beside it, so
    # np.power([-10.0, ...], 2.0) warned "invalid value encountered in power"; a constant
    # -1.0 took pow too.
    monkeypatch.setattr(kiln.config, "cost_model", False)

    def power(a, e):
        return np.power(a, e), np.power(a, -1.0)

    f = kiln.compile(power, backend="cpp")
    # (no NaN: beside one, a kernel's "invalid" of power is not told: docs/lowering.md)
    edges = [np.inf, -np.inf, 0.0, -0.0, -10.0, 1e-310, 3e200, -3e200]
    for dt in (np.float64, np.float32):
        with np.errstate(all="ignore"):
            a = np.concatenate([np.array(edges, dt),
                                np.random.default_rng(5).standard_normal(56).astype(dt) * 1e3])
        for e in (2.0, -1.0, 0.5, 1.0, 0.0, 2.5):
            seen = []
            for fn in (power, f):
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    r = fn(a, e)
                seen.append((r, sorted(str(w.message) for w in caught)))
            (want, want_warned), (got, got_warned) = seen
            assert got_warned == want_warned, (dt, e)
            for w, g in zip(want, got):
                assert g.dtype == w.dtype
                if e == 2.5:   # pow's bits are the math library's (NumPy's SVML where kernels call it)
                    np.testing.assert_allclose(g, w, rtol=4e-7, equal_nan=True)
                else:
                    np.testing.assert_array_equal(g.view(np.uint64 if dt is np.float64 else np.uint32),
                                                  w.view(np.uint64 if dt is np.float64 else np.uint32))


def test_float_power_and_float32_logaddexp_call_libms_functions(monkeypatch):
    # found beside the fast paths above: np.float_power's loop calls libm's pow an element
    # at a time, float32 np.logaddexp's libm's expf and log1pf (in float); kernels called
    # power's function (NumPy's SVML pow with AVX-512, else glibc's vector pow) and, for
    # logaddexp, double exp and log1p: 1 ulp off in ~5% and ~4% of elements
    monkeypatch.setattr(kiln.config, "cost_model", False)

    def libm(a, b):
        return np.float_power(a, b), np.float_power(a, 2.5), \
            np.logaddexp(a.astype(np.float32), b.astype(np.float32))

    f = kiln.compile(libm, backend="cpp")
    rng = np.random.default_rng(1)
    a, b = np.abs(rng.standard_normal(512)) * 10, rng.standard_normal(512) * 3
    for got, want in zip(f(a, b), libm(a, b)):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))
