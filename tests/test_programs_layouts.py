"""Programs from the layouts hunt, checked like tests/test_programs.py (values, dtypes,
shapes, strides, exceptions, argument states, aliasing) on cpp (also dynamic=True), eager
and aot_eager: memory layouts of arguments (views with steps, Fortran order, broadcast and
``as_strided`` views whose elements overlap, read-only, byte-swapped and unaligned
arrays, empty and 0-d arrays) and aliasing between what a function reads and writes.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from numpy.lib.stride_tricks import as_strided

import kiln
from tests.test_programs import program_registry, program_test

PROGRAMS, program = program_registry()   # name -> (fn, the calls it is checked on)
# (NumPy's own warning on reading the flag of an np.broadcast_arrays view, as a program does)
pytestmark = pytest.mark.filterwarnings("ignore:future versions will not create a writeable array")


def windows():
    """``(8, 3)`` windows of ``arange(10.)`` a step apart: each element is in up to three
    windows (writeable, as ``as_strided`` makes them). A factory: every call its own base."""
    return (as_strided(np.arange(10.0), (8, 3), (8, 8)),)


def rows_of_one():
    """Four rows that are the same three elements (a zero stride), writeable."""
    return (as_strided(np.arange(3.0), (4, 3), (0, 8)),)


# ------------ writes into an array whose elements overlap one another
# (NumPy computes every element's new value, then stores only the elements it names: an
# element aliased by several gets the last store. kiln's kernel wrote in place and read
# back its own stores; its functional copy-back wrote every element, unwritten ones too.)

@program(windows, rows_of_one)
def add_into_overlapping_windows(w):
    w += 1
    return w


@program(windows, rows_of_one)
def expression_into_overlapping_windows(w):
    w[:] = w * 2 + 1


@program(windows, rows_of_one)
def part_of_overlapping_windows_scaled(w):
    w[:, 1:] *= 2
    return w.sum()


@program(lambda: windows() + (np.arange(24.0).reshape(8, 3),))
def copy_into_overlapping_windows(w, b):
    np.copyto(w, b)
    return w.sum()


@program(lambda: windows() + (3,))
def overlapping_windows_updated_in_a_loop(w, n):
    for _ in range(n):
        w += 1
    return w.sum()


@program(lambda: (as_strided(np.arange(10.0), (8, 3), (8, 8), writeable=False),),
         lambda: (np.lib.stride_tricks.sliding_window_view(np.arange(10.0), 3),))
def read_only_overlapping_windows_read(w):
    return w.sum(axis=1) + w[:, 0], w * 2


@program((np.arange(8.0),), (np.arange(11.0) - 4,))
def shifted_add_into_itself(x):
    x[1:] += x[:-1]
    return x[::-1]


# ------------ other layouts (all passed when written)

@program(lambda: (np.asfortranarray(np.arange(12.0).reshape(3, 4)),
                  np.frombuffer(bytearray(bytes(1) + np.arange(4.0).tobytes()), np.float64, offset=1)),
         lambda: (np.arange(12.0).reshape(4, 3).T, np.arange(8.0)[::-2]))
def fortran_results_and_an_unaligned_argument_updated(x, u):
    u += x[0]
    return x + 1, np.sin(x) * u, x.sum(axis=0), u


@program(lambda: (np.arange(6, dtype=">f8"), np.lib.stride_tricks.as_strided(np.arange(6.0), writeable=False)),
         (np.zeros((0, 5)), np.zeros((3, 0))), (np.array(2.5), np.array(-1.0)))
def byte_swapped_empty_0d_and_read_only(x, r):
    y = x * 2 + r.sum()
    r += 1   # NumPy's ValueError on a read-only r
    return y



_M = np.arange(12.0).reshape(3, 4)[::-1] % 5


@program((_M.T,), (np.asfortranarray(_M),), (_M[:, ::-1],))
def numpy_kernels_on_computed_values_keep_their_layout(x):
    # np.sort of x * 2 (a Fortran-ordered x) is Fortran-ordered in NumPy: the product is
    # (order='K') and sort copies it so; kiln handed the kernel a C-ordered product, so its
    # result was C-ordered (stop 46, a hand probe beside the fuzzer). Also partition, astype
    return np.sort(x * 2), np.partition(x + 1, 1), np.sort(x * 1j, axis=0), (x - 1).astype(np.float32), \
        np.sort((x * 3).T)


@program((_M.T,), (_M[:, ::-1],), (np.asfortranarray(_M)[::-1],))
def round_and_isin_lay_out_their_results_as_numpy(x):
    # np.round(x, 1) allocates its result as np.empty(..., order='F' if x is Fortran-
    # contiguous only): a reversed Fortran-ordered view rounds into C order, where kiln's
    # ufuncs followed x (order='K'); np.isin's result is C-ordered whatever x's (stop 46,
    # a hand probe beside the fuzzer)
    return np.round(x[::-1], 1), np.round(x, -1), np.round(x * 2, 2), np.isin(x, [1.0, 2.0]), \
        np.isin(x * 2, [2.0], invert=True)

# ------------ arrays a call makes are its own
# (A method of a NumPy scalar argument, folded at capture, returned one constant array:
# the same object on every call with that value, so a write into one call's result
# showed in the next call's.)

@pytest.mark.parametrize("backend", ["cpp", "eager", "aot_eager"])
def test_array_from_a_numpy_scalars_method_is_new_every_call(backend):
    def made(x, s):
        return x + 1, s.reshape(1), s.ravel(), s.__array__()

    compiled = kiln.compile(made, backend=backend)
    first = compiled(np.ones(3), np.float64(2.0))
    for a in first[1:]:
        a[...] = -1.0
    second = compiled(np.ones(3), np.float64(2.0))
    for got, want in zip(second, made(np.ones(3), np.float64(2.0))):
        assert type(got) is type(want) and got.shape == want.shape and (got == want).all()
    assert not any(np.shares_memory(a, b) for a, b in zip(first, second))


# ------------ writes through views
# (``x.real`` of a real array is x itself; its write was put back as the complex number
# new + i imag(x), which the copy into x cast back with a ComplexWarning NumPy never gives.)

@program((np.arange(4.0),), (np.arange(4, dtype=np.float32),), (np.arange(4) - 2,),
         (np.arange(4.0) + 1j,))
def written_through_the_real_part(x):
    r = x.real
    r[1] = 5
    r[::2] *= 2
    return x, r


# (np.meshgrid(copy=False) returned read-only broadcast_to views where NumPy's are
# np.broadcast_arrays's, writeable; and a tuple where sparse=True gives NumPy's list.)
@program((np.arange(3.0), np.arange(4.0)), (np.arange(2.0), np.arange(2.0)[::-1]))
def meshgrid_views_written(x, y):
    g = np.meshgrid(x, y, copy=False, sparse=True)
    g[0][0, 1] = 10.0
    a, b = np.meshgrid(x, y, copy=False)
    c = np.meshgrid(x, y, indexing="ij", copy=False)
    return g, a, b, c, [m.flags.writeable for m in (a, b, *c)], x, y


# (A join into out= was computed whole, then copied: NumPy copies each array into its
# slice of out in turn, so a later array that overlaps an earlier slice reads it written.)
@program((np.arange(6.0),), (np.arange(12.0).reshape(6, 2),))
def rotated_by_concatenate_into_itself(x):
    r = np.concatenate([x[3:], x[:3]], out=x)
    return r is x, x


@program((np.arange(6.0).reshape(2, 3),), (np.arange(8.0).reshape(2, 4),))
def rows_swapped_by_stack_into_itself(x):
    np.stack([x[1], x[0]], out=x)
    return x


@program((np.arange(12.0).reshape(6, 2),))
def flattened_into_itself(x):
    np.concatenate([x[1:], x[:1]], axis=None, out=x.reshape(-1))
    return x


@pytest.mark.parametrize("backend", ["cpp", "eager", "aot_eager"])
def test_a_write_through_real_of_a_real_array_does_not_warn(backend):
    compiled = kiln.compile(written_through_the_real_part, backend=backend)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = compiled(np.arange(4.0))
    assert [str(w.message) for w in caught] == []
    assert [a.tolist() for a in got] == [[0.0, 5.0, 4.0, 3.0]] * 2


test_program = program_test(PROGRAMS, ["cpp", "cpp-dynamic", "eager", "aot_eager"])
