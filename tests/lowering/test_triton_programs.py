"""The program corpus (tests/test_programs.py: capture, graph breaks, mutation, dynamic
sizes, NaN/inf, size 0 and 1, layouts ...) through backend="triton" on NumPy arrays
through Triton's interpreter: results, dtypes, shapes and mutated arguments as NumPy's.
Half the programs (chosen by name, the same every run, as program_test's ``share``): the
interpreter runs a kernel's every block in Python, and the op table and the fusion tests
through it (test_triton_ops.py, test_triton_backend.py) prove every kernel kind."""
import zlib

import numpy as np
import pytest

pytest.importorskip("triton")

from test_programs import PROGRAMS, check_program

from .triton_kit import interpret  # noqa: F401  (autouse: Triton's interpreter on NumPy arrays)


@pytest.mark.parametrize("name", [n for n in PROGRAMS if zlib.crc32(f"{n}/triton".encode()) % 2 == 0])
def test_program_on_triton(name, capsys):
    fn, calls = PROGRAMS[name]
    check_program(fn, calls, "triton")
    assert capsys.readouterr().out == "", "kiln never writes to stdout"


# ----------------------------------------------------------------------------- regressions
# (found by benchmarks/triton_programs.py, the whole corpus through the interpreter)

def _pad_rows_and_columns(x):
    return np.pad(x, ((1, 0), (1, 0)), "constant")


def test_a_join_run_as_numpy_is_laid_out_as_numpys_pad():
    # The Triton renderer runs np.pad's joins as NumPy's np.concatenate, which keeps its
    # pieces' Fortran order on a strided view of a Fortran-ordered array; relayout took the
    # extern's buffer for C-ordered and returned it: strides (8, 48), NumPy's (48, 8).
    x = np.asfortranarray(np.arange(50.0).reshape(5, 10))[:, ::2]
    check_program(_pad_rows_and_columns, [(x,)], "triton")


def test_float_sums_are_numpys_to_the_last_bit():
    # tl.reduce added x.sum() as a tree: 50.05 where NumPy's pairwise order gives 0.0
    # (kahan_summation_float32; the loop's compensation was right all along). Row sums
    # pairwise, column sums in order, as NumPy (triton_sums.py, test_triton_kernels.py).
    from test_programs_real5 import PROGRAMS as REAL5
    fn, calls = REAL5["kahan_summation_float32"]
    check_program(fn, calls, "triton")


def _window_sums(x, step):
    w = np.lib.stride_tricks.sliding_window_view(x, 16)
    return w.sum(axis=1), w[::step].mean(axis=1)


def test_window_sums_are_numpys_pairwise_order():
    # A sliding window's rows step as little as its columns (strides (4, 4)), and NumPy's
    # iterator keeps C order there: each row pairwise. triton_sums took equal strides for a
    # column sum (added in order), and a runtime step's stride (k1) for unknown (tl.reduce's
    # tree in float64): welch_psd_hann's float32 segment means were a bit off, its spectrum
    # 1.0744939127 where NumPy's is 1.0744938792 (real4, found by the sweep, stop 61).
    x = (np.random.default_rng(61).standard_normal(48) * 1e3).astype(np.float32)
    check_program(_window_sums, [(x, 3), (x[:40], 2)], "triton")
    from test_programs_real4 import PROGRAMS as REAL4
    check_program(*REAL4["welch_psd_hann"], "triton")


def test_a_variant_taken_at_a_slice_bound_is_found_by_its_value():
    # The graph of `np.array_equal(text[s:s + m], pat)` in rabin_karp_uint64's loop takes
    # s's value (lower.specialize_ints) and its wrapper checks it; the Triton backend keyed
    # variants on an int argument's type only, so at the next s the wrapper sent the call
    # back to the variant it came from: RecursionError (real21, found by the sweep, stop
    # 61). Keyed by value, as on C++.
    from test_programs_real21 import PROGRAMS as REAL21
    check_program(*REAL21["rabin_karp_uint64"], "triton")
