"""Complex parts in generated C++: ``z.real``/``z.imag`` read inside a kernel (not NumPy's
view then a C-order copy), writes through them (``z.imag *= -1``, ``out.real = a``) as the
``complex_parts`` op (the new part next to the old other part: NaN-free where an infinite
part meets 1j), and reductions over complex values that vectorize (no struct local handed
whole to a helper: omp simd then made it a per-lane array and ran 5-10x slower than NumPy).
"""
import re

import numpy as np
import pytest

import kiln
from kiln.ir import trace
from kiln.ops import F, TensorMeta
from kiln.runtime import cpp_backend
from tests.test_programs import check_program

SPECIAL = np.array([np.inf, -np.inf, np.nan, -0.0, 0.0, 1e300, 2.5, -3.0])


def _complex(shape, dtype=np.complex128, seed=0):
    rng = np.random.default_rng(seed)
    z = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    flat = z.reshape(-1)
    flat.real[:len(SPECIAL)] = SPECIAL
    flat.imag[:len(SPECIAL)] = SPECIAL[::-1]
    with np.errstate(over="ignore"):
        return z.astype(dtype)


def set_real(z, x):
    z.real[:] = x
    return z


def negate_imag(z):
    z.imag *= -1
    return z


def assemble(a, b):
    out = np.empty(a.shape, np.complex128)
    out.real = a
    out.imag = b
    return out


def set_attr_parts(z, a):
    z.real = a
    z.imag = 2.0
    return z


def real_view_returned(z):
    return z.real[1:], z.imag


def part_product_rows(z):
    return (z.real * z.imag).sum(axis=1)


def spectrogram(z):
    p = np.abs(z) ** 2
    return p.sum(axis=0) / p.shape[0], p.sum(axis=1)


def abs_max_rows(z):
    return np.abs(z).max(axis=1), np.angle(z).min(axis=0)


def power_in_double(z):
    return (np.abs(z) ** 2).sum(axis=1, dtype=np.float64)


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
def test_complex_part_programs_match_numpy(dtype):
    z = _complex((6, 40), dtype)
    part = np.float32 if dtype == np.complex64 else np.float64
    with np.errstate(over="ignore"):
        x = np.resize(SPECIAL, (6, 40)).astype(part)
    check_program(set_real, [(z, x), (z[:, ::2], x[:, ::2])], "cpp")
    check_program(negate_imag, [(z,), (np.asfortranarray(z),)], "cpp")
    check_program(set_attr_parts, [(z, x), (z, x[0])], "cpp")
    check_program(real_view_returned, [(z,)], "cpp")
    for fn in (part_product_rows, spectrogram, abs_max_rows, power_in_double):
        check_program(fn, [(z,), (z.T.copy(),)], "cpp")
    check_program(assemble, [(x.astype(np.float64), x[::-1].astype(np.float64))], "cpp")


def _artifact(fn, *args):
    g = trace(fn, [TensorMeta(a.shape, a.dtype) for a in args], [f"a{i}" for i in range(len(args))])
    return cpp_backend(g, list(args)).kiln_artifact


def test_parts_are_read_in_the_kernel_and_written_part_by_part():
    z = _complex((64, 64))
    art = _artifact(lambda z: F.sum(F.multiply(F.real(z), F.imag(z)), axis=1), z)
    assert "_ext_" not in art.wrapper, art.wrapper
    # z.imag *= -1 after functionalization: complex_parts(real(z), -imag(z)), one kernel
    art = _artifact(lambda z: F.complex_parts(F.real(z), F.multiply(F.imag(z), -1.0)), z)
    body = art.cpp[art.cpp.index("kiln_fused"):]
    assert "_ext_" not in art.wrapper and "kiln_cmul(" not in body, body


def test_a_returned_part_stays_a_view():
    z = _complex((8, 8))
    compiled = kiln.compile(real_view_returned)
    r, i = compiled(z)
    assert np.shares_memory(r, z) and np.shares_memory(i, z)


def test_complex_values_reach_helpers_part_by_part():
    # A struct local handed whole to an inline helper is addressable when OpenMP lowers
    # the loop, so omp simd keeps it in a per-lane array and the loop stays scalar.
    z = _complex((64, 256))
    for program in (lambda z: F.max(F.absolute(z), axis=1),
                    lambda z: F.sum(F.square(F.absolute(z)), axis=0),
                    lambda z: F.sum(F.absolute(F.multiply(z, F.conjugate(z))), axis=1, dtype=np.float64)):
        cpp = _artifact(program, z).cpp
        body = cpp[cpp.index("kiln_fused"):]
        assert not re.search(r"\bkiln_c\w+\((?:[^()]*, )?t\d+[,)]", body), body
