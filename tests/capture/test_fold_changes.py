"""Values capture works out while compiling that a later call changes without failing a
guard (stop 52, fold7): each function runs several times on values chosen so that a value
folded on the first call, or computed another way than Python's, gives a wrong later call.
Each is checked against the same function run without kiln, on the eager backend (no
C++ build)."""
import numpy as np

import kiln

from .test_python_numbers import _same   # bit for bit, signed zeros too


def _calls(fn, argsets, **options):
    cf = kiln.compile(fn, backend="eager", **options)
    for args in argsets:
        _same(cf(*args), fn(*args))


def test_min_max_of_a_run_time_number_keep_the_argument_order():
    # Python keeps the first of a NaN and a number, and of 0.0 and -0.0: min(2.0, s) of
    # s = NaN is 2.0, min(s, 2.0) is NaN; capture put the run-time number first
    def f(x, s):
        return (x * min(2.0, s), x * max(0.5, s), min(0.0, s), max(-0.0, s),
                min(1.0, s, 3.0), max(s, 1.0))

    x = np.array([1.0, 2.0])
    argsets = [(x, 1.0), (x, float("nan")), (x, -0.0), (x, 0.0), (x, 4.0)]
    _calls(f, argsets)
    _calls(f, argsets, dynamic=True)


def test_full_of_a_run_time_int_past_int64_takes_numpys_dtype():
    # np.full(2, n) is int64, uint64 for 2 ** 63 <= n < 2 ** 64 and object past it: the
    # dtype of the first call's n was baked in and a later 2 ** 63 overflowed the int64 fill
    def f(x, n):
        return np.full(2, n), x * n

    x = np.array([1.0, 2.0])
    _calls(f, [(x, n) for n in (1, 2 ** 63, 2 ** 64 + 1, -2 ** 63 - 1, 5, 2 ** 64 - 1)])


NAN = float("nan")   # another NaN than np.nan


def test_a_nan_key_is_found_by_identity_as_python_finds_it():
    # {np.nan: 1}.get(s) finds np.nan itself, not another NaN; s was guarded only as
    # "a NaN", so a later call with another NaN found np.nan's entry
    def f(x, s):
        d = {np.nan: 1.0, 1.0: 2.0}
        return x * d.get(s, 3.0), s in d, s in {np.nan, 2.0}, s in (np.nan,)

    x = np.array([1.0, 2.0])
    _calls(f, [(x, s) for s in (np.nan, NAN, 1.0, np.nan, NAN)])


class _Fill:
    value = np.nan


def test_a_nan_attribute_is_guarded_as_that_nan_object():
    # ``_Fill.value is np.nan`` was folded True with a guard that any NaN passed
    def f(x):
        return x * (_Fill.value is np.nan), [_Fill.value] == [np.nan]

    cf = kiln.compile(f, backend="eager")
    x = np.array([1.0, 2.0])
    for value in (np.nan, NAN, 1.0, np.nan):
        _Fill.value = value
        _same(cf(x), f(x))


def test_lists_of_one_nan_object_are_equal_as_in_python():
    # Python's items compare ``x is y or x == y``: [s] == [s] and [a] == [b] of one NaN
    # object are True; capture compared the items with == alone (False)
    def f(x, a, b):
        return [a] == [a], (a, 1) == (b, 1), [a] != [b], x * ([a] == [b])

    x = np.array([1.0, 2.0])
    _calls(f, [(x, np.nan, np.nan), (x, np.nan, NAN), (x, 1.0, 1.0), (x, 1.0, 2.0), (x, NAN, NAN)])


def test_sets_and_dicts_built_of_nan_arguments_count_objects():
    # {a, b} and {a: 1, b: 2} of one NaN object hold one key, of two NaNs two: the keys
    # were guarded only as NaNs, so the first call's count stayed
    def f(x, a, b):
        return len({a, b}), x * len({a: 1, b: 2}), {a} == {b}

    x = np.array([1.0, 2.0])
    _calls(f, [(x, np.nan, np.nan), (x, np.nan, NAN), (x, 1.0, 1.0), (x, NAN, NAN)])
