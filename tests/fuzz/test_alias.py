"""The focused generator (alias.py: aliasing, layouts, dtype keywords, calls that change
layout) on a fixed seed set, and the programs it found, each checked against NumPy."""
from __future__ import annotations

import os
import warnings

import numpy as np
import pytest

from .alias import check_seed

# (a long run: python -m tests.fuzz.alias, docs/fuzzing.md)
SEEDS = [int(s) for s in (os.environ.get("KILN_FUZZ_ALIAS_SUITE") or "6,18,39,51").split(",")]

# (NumPy 2.5 deprecates np.fix and setting .shape; both sides warn alike)
pytestmark = [pytest.mark.filterwarnings("ignore::RuntimeWarning"),
              pytest.mark.filterwarnings("ignore::DeprecationWarning")]


@pytest.mark.parametrize("seed", SEEDS)
def test_alias_programs_match_numpy(seed):
    check_seed(seed)


def _check(fn, calls, backends=("eager", "aot_eager")):
    # (each bug below was in capture or in an op's rule, before any kernel: the backends
    # that build none show it, and the suite's time goes to g++ elsewhere)
    import sys
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from test_programs import check_program
    for backend in backends:
        check_program(fn, calls, backend)


def _store_python_complex(x, s):
    v = x.T
    x.real[...] = s
    x[0] = s
    return v


def _fill_python_complex(x, s):
    x.fill(s)
    return x


@pytest.mark.parametrize("fn", [_store_python_complex, _fill_python_complex])
def test_a_python_complex_stored_into_a_real_array_raises(fn):
    """Seeds 185, 238: NumPy converts a Python complex with float() or int() (TypeError);
    kiln made it a 0-d complex array, which casts with a ComplexWarning. A NumPy complex
    scalar still casts."""
    _check(fn, [(np.array([[-2], [2]], np.int16), 1j), (np.ones((2, 2), np.float32), complex(0.5, 0.0)),
                (np.ones((2, 2), np.float32), np.complex64(1j)), (np.ones((1, 2), np.complex64), 2j)])


def _reductions_into_a_larger_out(x, o):
    np.sum(x, axis=0, out=o, where=x > 1)


def _nan_reductions_into_a_larger_out(x, o):
    np.nanmax(x, axis=0, out=o)


def _round_into_a_larger_out(x, o):
    np.round(x[0], 1, out=o)


def _masked_ufunc_into_a_larger_out(x, o):
    np.add(x[0], 1, out=o, where=x[0] > 1)      # a ufunc's out= broadcasts, as in NumPy
    np.fix(x[1], out=o)
    np.multiply.outer(x[0, :1], x[1], out=o)


@pytest.mark.parametrize("fn", [_reductions_into_a_larger_out, _nan_reductions_into_a_larger_out,
                                _round_into_a_larger_out, _masked_ufunc_into_a_larger_out])
def test_out_of_more_axes_than_the_result(fn):
    """Seeds 97, 5253: ``np.sum(x, axis=0, out=x, where=x > 0)`` of a 1-d x (NumPy: "output
    parameter for reduction operation add has the wrong number of dimensions") broadcast the
    sum into x; so did every composite spelling with out= (np.nanmax, np.median, np.round:
    "invalid output shape"), where only a ufunc's out= broadcasts."""
    x = np.array([[0.5, 2.0, np.nan], [3.0, -1.5, 4.0]])
    _check(fn, [(x, np.zeros((2, 3))), (x, np.zeros((1, 3))), (x, np.zeros(3))])


def _masked_reductions(x, w):
    # (a float sum of a mask is NumPy's own call: it raised already)
    return np.max(x, where=w, initial=0.0, axis=-1), np.any(x, where=w), np.sum(x > 1, where=w, axis=0)


def test_a_where_mask_that_does_not_broadcast_to_the_input_raises():
    """Seed 5397: ``np.sum(x, where=[True])`` of a 0-d x (NumPy: "input operand has more
    dimensions than allowed by the axis remapping") broadcast x to the mask's shape; a mask
    longer than the input along an axis of length 1 summed the input repeated."""
    x = np.arange(6.0).reshape(2, 1, 3)
    _check(_masked_reductions, [(x, np.ones((2, 1, 3), bool)), (x, np.array([[True], [False], [True], [True]])),
                                (x, np.ones((1, 2, 1, 3), bool)), (x[0, 0], np.array([True, False, True])),
                                (x[0, 0, 0], np.array([True]))])


def _copyto_a_python_bool(x, s):
    np.copyto(x, s, casting="unsafe")
    return x


def test_a_run_time_true_is_not_taken_for_a_default_true():
    """Seed 1268: ``np.copyto(x, s)`` with ``s`` True on the first call and False on the
    second left x as it was: np.copyto's default ``where=True`` is the very object of the
    run-time True (CPython shares it), so capture took the mask for ``s``."""
    _check(_copyto_a_python_bool, [(np.ones(3), True), (np.ones(3), False), (np.ones(3, np.complex64), 0),
                                   (np.ones(3), 1), (np.ones(3), True)])


def _unused_comparison_with_a_huge_int(x):
    v = (x > 0) < 2 ** 63
    return x


def test_an_unused_comparison_of_bools_with_a_huge_int_raises():
    """Seed 1267: ``(x > 0) < 2 ** 63``, unused: NumPy raises OverflowError converting
    2 ** 63 for a bool operand; the check ran it on the loop's int64 (NumPy's special case
    for comparisons with Python ints lets that pass), so dead-code elimination dropped it."""
    _check(_unused_comparison_with_a_huge_int, [(np.array([1.5, -2.0]),), (np.array(0.5),)])


def _write_into_a_numpy_scalar(x, s):
    v = np.min(x, initial=100)
    v.fill(s)                  # NumPy: a no-op on a NumPy scalar
    w = x.sum()
    np.put(w, 0, s)            # a no-op too
    return v, w, x


def _copyto_a_numpy_scalar(x, s):
    np.copyto(np.sum(x, initial=0.5), x[::-1])


@pytest.mark.parametrize("fn", [_write_into_a_numpy_scalar, _copyto_a_numpy_scalar])
def test_a_mutation_of_a_numpy_scalar_is_numpys(fn):
    """Seeds 6617, 6702: a reduction's result is a NumPy scalar, which ``fill`` and
    ``np.put`` leave as it is and ``np.copyto`` rejects (TypeError); kiln wrote into it as
    into a 0-d array (and returned the 0-d array)."""
    _check(fn, [(np.array([3], np.uint8), 0), (np.array([[1.5, 2.5]]), 7)])


def _copies_of_a_numpy_scalar(x):
    s = x.sum()
    return s.copy(), s.copy(order="A"), np.copy(s), x[0].copy()


def test_the_copy_method_of_a_numpy_scalar_is_a_numpy_scalar():
    """Seed 7031: ``s.copy()`` of a reduction's NumPy scalar is a NumPy scalar (its
    methods give a 0-d result back as one); kiln gave a 0-d array, as np.copy(s) is."""
    _check(_copies_of_a_numpy_scalar, [(np.array([1.5, 2.0], np.float32),), (np.array([[1, 2]], np.uint8),)])


def _set_the_shape_of_a_new_array(x):
    v = np.copy(x, order="K")     # a broadcast x: NumPy's copy is not C-ordered
    v.shape = (-1,)
    return v


def _set_the_shape_of_a_transposed_product(x):
    v = x.T * 2
    v.shape = (-1,)
    return v


@pytest.mark.parametrize("fn", [_set_the_shape_of_a_new_array, _set_the_shape_of_a_transposed_product])
def test_setting_the_shape_of_an_array_not_in_c_order_raises(fn):
    """Seed 2619: ``v.shape = (-1,)`` of a new array whose memory NumPy did not lay out in C
    order raises NumPy's AttributeError ("Incompatible shape for in-place modification");
    kiln reshaped it."""
    _check(fn, [(np.broadcast_to(np.arange(3.0), (2, 3)),), (np.ones((2, 3)),), (np.arange(3.0),)])


def _unused_scalar_math_that_overflows(x):
    v = x.sum() * 2 ** 70
    return x


def _unused_scalar_power_that_raises(x):
    w = x[0] ** np.int64(-1)
    return x


def _unused_masked_ufunc_that_overflows(x):
    v = np.multiply(x, -3, out=np.full(x.shape, 7, x.dtype), where=x > 0)
    return x


@pytest.mark.parametrize("fn", [_unused_scalar_math_that_overflows, _unused_scalar_power_that_raises,
                                _unused_masked_ufunc_that_overflows])
def test_unused_scalar_math_raises(fn):
    """Seed 7660: ``x.sum() * 2 ** 70``, unused, of an integer x: NumPy's scalar math
    raises OverflowError (and an integer scalar to a negative integer power ValueError);
    dead-code elimination dropped it. Seed 3454: so did ``np.multiply(x, -3, out=o,
    where=m)`` of an unsigned x (the ufunc of both is a parameter of the op)."""
    _check(fn, [(np.array([3], np.uint32),), (np.array([2, 3], np.int8),), (np.array([2.0, 3.0]),)])


def _update_an_index_of_a_numpy_scalar(x):
    v = x.sum()
    w = v[...]
    w += 1                       # a new array: v stays
    v.reshape(-1)[0] = 5         # so is s.reshape(-1) (seed 10742)
    v[..., None] += x[..., None]
    return v


def test_an_index_of_a_numpy_scalar_is_a_new_array():
    """Seed 2277: ``v[..., None] += x[..., None]`` of a NumPy scalar v: NumPy's ``v[...]``
    is a new array, so the update writes it and the store raises TypeError; kiln took it
    for a view of v, wrote v and returned a 0-d array. Seed 10742: the same for
    ``v.reshape(-1)[0] = s``."""
    _check(_update_an_index_of_a_numpy_scalar, [(np.array(-4.0, np.float32),), (np.array([2.0, -1.0]),)])


def _write_through_ravel_of_a_cast(x):
    v = x.astype(np.int16)
    v.ravel()[::2] = 7         # a view of v for a C-ordered x, a copy for a Fortran-ordered one
    w = x * 2
    w.reshape(-1)[0] = 7
    return v, w


def test_a_write_through_ravel_follows_the_layout_of_each_call():
    """Seed 8186: ``x.astype(t).ravel()[::2] = s`` compiled for a C-ordered x (the ravel a
    view: v written) was reused for a Fortran-ordered x, whose cast NumPy lays out in
    Fortran order (the ravel a copy: v as it was). Whether a ravel or reshape of a computed
    value aliases it now keys the compiled variants by the layouts of the arguments it is
    made from, as it did for an argument itself."""
    c = np.arange(6, dtype=np.int8).reshape(2, 3)
    _check(_write_through_ravel_of_a_cast, [(c,), (np.asfortranarray(c),), (c.T,), (c[::-1],)])


def _unused_fills_that_raise(x, s, k):
    v = x * 2
    v.fill(s)                  # NaN or 1e300 into an integer array: NumPy raises
    w = np.full_like(x, k)     # 2 ** 40 into int16: OverflowError
    return x


def test_unused_fills_raise():
    """Seed 8502: ``v.fill(1e300)`` of a new int16 array, v unused: NumPy's fill raises
    OverflowError (ValueError for NaN); so does ``np.full_like(x, 2 ** 40)``, and
    dead-code elimination dropped both."""
    i16 = np.ones((2, 1), np.int16)
    _check(_unused_fills_that_raise, [(i16, 1.5, 3), (i16, 1e300, 3), (i16, np.nan, 3), (i16, 2.0, 2 ** 40),
                                      (np.zeros((0, 1), np.int16), np.nan, 1), (np.ones(2), np.nan, 2 ** 40)])


def _write_then_store_into_a_read_only_view(x):
    x += 1
    x.imag[...] = 0.5          # the imaginary part of a real array is read-only
    return x


def test_an_update_before_a_write_numpy_refuses_stays():
    """Seed 9620: ``x += 1; x.imag[...] = 0.5`` of an int16 x raises "assignment
    destination is read-only", x incremented; aot_eager and cpp found the error while
    functionalizing, before any write, and left x as it was."""
    _check(_write_then_store_into_a_read_only_view, [(np.arange(3, dtype=np.int16),), (np.ones((2, 2)),)])


def _two_raising_scalar_statements(x):
    v = x.sum() * 2 ** 70       # uint64 scalar math: OverflowError
    w = x[0] ** np.int64(-1)    # an integer to a negative power: ValueError
    return v, w


def test_the_first_of_two_raising_statements_raises():
    """cpp ran ``x[0] ** np.int64(-1)`` (an extern call reading no kernel's result) before
    the sum's kernel and the scalar math after it, so NumPy's OverflowError came out as the
    power's ValueError: two extern calls that may raise keep their order."""
    _check(_two_raising_scalar_statements, [(np.arange(3, dtype=np.uint32),)], backends=("cpp",))


def _multiply_by_a_python_complex_into_x(x, s):
    np.multiply(x, s, out=x)
    return x * s


def test_a_python_complex_argument_keeps_its_dtype_rule_on_dynamic_sizes():
    """Seed 4868: a graph with dynamic sizes infers its dtypes again while lowering, and a
    run-time Python complex (no kernel scalar) was taken for an object array: "Cannot cast
    array data from dtype('O') to dtype('complex64')" (the variant then ran op by op)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", RuntimeWarning)
        _check(_multiply_by_a_python_complex_into_x,
               [(np.ones((2, 3), np.complex64), 1j), (np.ones((3, 2), np.complex64), 0.5 + 0j)],
               backends=("cpp-dynamic",))
    assert not [w for w in caught if "could not be compiled" in str(w.message)]
