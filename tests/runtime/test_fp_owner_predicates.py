"""ops/fp_errors.py ``raises_where``: each op's predicate for a floating-point kind is
true exactly where NumPy's own loop warns of that kind, over edge values (signed zeros,
infinities, NaN, the smallest and largest floats, the thresholds of exp and its kin) in
float32 and float64, one element per call."""
from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

from kiln.ops.fp_errors import KINDS, OVER, _RAISES, raises_where
from kiln.ops.pointwise import BINARY, UNARY


class NumpyOps:
    """An ops handler (lowering/handler.py) that computes with NumPy: the predicates'
    values on arrays."""

    def constant(self, value, dtype):
        return np.dtype(dtype).type(value)

    def call(self, fn, args, dtype, out=None):
        return getattr(np, fn)(*args)


def edge_values(dtype):
    info = np.finfo(dtype)
    base = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, -7.5, np.pi, 1e-3, 20.0, 88.0,
            89.0, 90.0, 709.0, 710.0, 1023.0, 1025.0, 1e20, -1e20, 1e300, np.inf, -np.inf,
            np.nan, float(info.max), -float(info.max), float(info.tiny), float(info.smallest_subnormal),
            -float(info.smallest_subnormal), 0.9999999, -1.0000001, 1.0000001]
    with np.errstate(all="ignore"):
        return np.array(base, dtype=dtype)


def _numpy_kinds(fn, *args):
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        out = fn(*args)
    texts = [str(w.message) for w in got]
    return out, {bit for bit, _key, text in KINDS if any(t.startswith(text + " encountered") for t in texts)}


def _ufunc(op):
    entry = UNARY.get(op) or BINARY.get(op)
    return entry[0] if entry else None


# (np.floor_divide's predicates are np.divmod's quotient's: fp_errors.py _divmod_raises_where)
COVERED = sorted(op for op in _RAISES | {"floor_divide"} if _ufunc(op) is not None)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("op", COVERED)
def test_predicates_match_numpys_warnings_over_edge_values(op, dtype):
    ufunc = _ufunc(op)
    values = edge_values(dtype)
    combos = itertools.product(values, repeat=ufunc.nin)
    wrong = []
    for combo in combos:
        args = [np.array([v], dtype) for v in combo]
        out, kinds = _numpy_kinds(ufunc, *args)
        for bit, _key, _text in KINDS:
            where = raises_where(op, bit)
            if where is None:
                continue
            with np.errstate(all="ignore"):
                said = bool(where(NumpyOps(), (out, out.dtype), [(a, a.dtype) for a in args])[0])
            if op in ("power", "float_power") and bit == OVER and np.isinf(combo[1]):
                continue   # (the gap fp_errors.py names: libm's threshold, never claimed)
            if said != (bit in kinds):
                wrong.append((combo, bit, said))
    assert not wrong, wrong[:10]


@pytest.mark.parametrize("src, dst", [(np.float64, np.float32)])
def test_narrowing_cast_predicate_matches_numpy(src, dst):
    values = edge_values(src)
    where = raises_where("astype", KINDS[1][0])
    for v in values:
        x = np.array([v], src)
        out, kinds = _numpy_kinds(lambda a: a.astype(dst), x)
        with np.errstate(all="ignore"):
            said = bool(where(NumpyOps(), (out, out.dtype), [(x, x.dtype)])[0])
        assert said == (KINDS[1][0] in kinds), v


def test_every_op_whose_kernel_calls_vector_math_is_in_the_noise_table():
    """glibc's vector math raises flags NumPy's loops do not (ops/fp_errors.py
    kernel_noise): an op the C++ renderer spells with it must be in that table, or be
    one whose flags were checked to match NumPy's but for a NaN operand (log, log2,
    log10) or that calls the scalar libm (fmod)."""
    from kiln.lowering.cpp_ops import SYNTAX, _LIBM_CALL
    from kiln.ops.fp_errors import kernel_noise
    checked = {"log", "log2", "log10", "fmod"}
    calls = {fn for fn, forms in SYNTAX.items() if _LIBM_CALL.search(forms.get("f", ""))}
    assert "sin" in calls and "exp" in calls
    assert {fn for fn in calls if not kernel_noise(fn)} <= checked


def _complex_parts(dtype):
    part = np.finfo(np.dtype(dtype).char.lower())
    return [0.0, -0.0, 1.0, -2.5, np.inf, -np.inf, np.nan, float(part.max), float(part.tiny),
            float(part.max) ** 0.5 * 2, 710.0]


class _ComplexNumpyOps(NumpyOps):
    def call(self, fn, args, dtype, out=None):
        return getattr(np, fn)(args[0]) if fn in ("real", "imag") else getattr(np, fn)(*args)


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
@pytest.mark.parametrize("op", ["add", "subtract", "multiply", "true_divide", "square", "exp"])
def test_complex_predicates_never_say_what_numpy_does_not(op, dtype):
    """Complex loops' predicates (fp_predicates.py ``complex_raises_where``): never a kind
    NumPy's loop does not warn of, over edge parts; add and subtract (part by part) exactly
    NumPy's; the others may be silent beside a NaN or infinite part (counted, bounded)."""
    ufunc = {"true_divide": np.divide}.get(op) or getattr(np, op)
    with np.errstate(all="ignore"):
        values = np.array([complex(a, b) for a in _complex_parts(dtype) for b in _complex_parts(dtype)], dtype)
    spurious, missed, total = [], 0, 0
    for combo in itertools.product(values, repeat=ufunc.nin):
        args = [np.array([v], dtype) for v in combo]
        out, kinds = _numpy_kinds(ufunc, *args)
        for bit, _key, _text in KINDS:
            where = raises_where(op, bit, "c")
            if where is None:
                continue
            with np.errstate(all="ignore"):
                said = bool(where(_ComplexNumpyOps(), (out, out.dtype), [(a, a.dtype) for a in args])[0])
            total += 1
            if said and bit not in kinds:
                spurious.append((combo, bit))
            missed += not said and bit in kinds
    assert not spurious, spurious[:10]
    assert missed == 0 if op in ("add", "subtract") else missed < total * 0.1
