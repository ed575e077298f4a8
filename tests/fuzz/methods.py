"""A differential generator of ndarray methods, attributes, keyword edges and scalars (stop 57).

The other generators spell most operations as NumPy's functions (``np.take(x, i)``); this
one draws them as real code chains them on arrays: ``a.T``, ``a.real``/``a.imag`` (and
writes to them), ``a.flat`` (read, indexed, assigned), ``a.item()``, ``a.tolist()``,
``a.fill``, ``a.put``/``take``/``choose``/``compress``/``repeat``/``searchsorted``/
``nonzero``/``argsort(kind=)``/``partition``/``sort``, ``a.view(dtype)``, ``a.byteswap()``,
``a.astype`` with ``order=`` and ``copy=``; reductions and scans as methods with their
keyword edges (axis tuples, negative and empty axes, ``keepdims``, ``initial=``,
``where=``, ``dtype=``, ``ddof=``, ``out=``), ufuncs with ``out=`` that broadcasts and
``where=``, creation with ``order='F'``; and scalars: Python ints past int64, floats at
their ends, bools, NumPy scalars of narrow types, 0-d arrays, met with arrays and with each
other (NEP 50: ``np.float32(s) + 0.1`` stays float32, ``uint8_array + 300`` raises), taken
from arrays (``a.item(0)`` a Python number, ``a.flat[0]`` a NumPy scalar) and returned.

A program ``prog(x, y, s)`` (views.py's :class:`ViewProgram`) makes one to six names: arrays
(``x``, ``y`` and what it makes of them) and scalars (``s`` and what it makes). ``x`` is 0-,
1- or 2-d, of one of 14 dtypes, laid out C, Fortran, transposed, reversed, strided,
read-only or broadcast; ``y`` is ``x``, a view of it or another array; ``s`` one of
:data:`SCALARS`. Five calls: new arguments, the same objects again (as the last call left
them), new ones (another layout, sometimes size, dtype or kind of scalar), the same again,
new ones. The oracle is views.py's: lang.py's ``compare_call`` (bit-exact values, a Python
number's type against a NumPy scalar's, dtypes, shapes, exception type and message,
warnings among NumPy's, the arguments after the call), runner's aliasing pattern, each
returned array's flags, ``.base is`` each argument and strides, and every result held from
the calls so far.

    KILN_FUZZ_METHODS_SEED=1 KILN_FUZZ_METHODS_PROGRAMS=200 python -m tests.fuzz.methods
"""
from __future__ import annotations

import re
import sys

from . import runner
from .views import DTYPES, SHAPES, ViewGen, ViewProgram, _runs, check, minimize

# An array-valued expression of arrays A, B and a scalar S (``cumsum``'s ``out=`` is never
# 0-d: NumPy 2.4.6's cumsum of a 0-d array into a 0-d out= ends the process, seed 131)
ARRAYS = [
    "A.T", "A.real", "A.imag", "A.conj()", "A.flat[::2]", "A.flat[[0, -1]]", "A.take([0, -1])",
    "A.take(-1, axis=-1)", "A.take([0, 7], mode='clip')", "A.take([-9, 4], mode='wrap')", "A.repeat(2)",
    "A.repeat(2, axis=-1)", "A.repeat([1, 2], axis=0)", "A.compress([True, False, True])",
    "A.compress(A.ravel() > 0)", "A.compress([False, True], axis=-1)", "A.nonzero()[0]",
    "A.argsort(kind='stable')", "A.argsort(axis=0, kind='stable')", "A.argsort(axis=None, kind='stable')",
    "A.searchsorted(S)", "np.sort(A, axis=None).searchsorted(A, side='right')", "np.partition(A, 0, axis=-1)[..., :1]",
    "A.view(np.uint8)", "A.view(A.dtype)", "A.view(np.int16)", "np.abs(A).astype(np.int64).choose([A, B], mode='clip')",
    "(A > 0).choose([B, S])", "A.clip(min=0)", "A.clip(max=S)", "A.clip(S, None)", "A.round(1)", "A.round(-1)",
    "A.cumsum(axis=-1, dtype=np.float32)", "A.cumprod(axis=0, dtype=np.int64)", "A.cumsum(axis=None)",
    "A.mean(axis=(0, -1))", "A.mean(axis=0, dtype=np.float32)", "A.var(ddof=1, axis=-1)",
    "A.std(axis=-1, ddof=2, keepdims=True)", "A.sum(axis=(), keepdims=True)", "A.sum(axis=-1, where=A > 0, keepdims=True)",
    "A.max(axis=0, initial=S)", "A.min(axis=-1, initial=10, where=B > 0)", "A.prod(axis=-1, dtype=np.float64)",
    "A.any(axis=-1, keepdims=True)", "A.all(axis=(0,), where=B > 0)", "A.argmax(axis=-1, keepdims=True)", "A.argmin(axis=0)",
    "A.diagonal(1)", "A.diagonal(-1, 0, -1)", "A.dot(B.T)", "A.squeeze()", "A.swapaxes(-1, 0)", "A.transpose()",
    "A.transpose(*range(A.ndim)[::-1])", "A.reshape(-1, order='F')", "A.flatten('F')", "A.ravel('A')", "A.copy(order='F')",
    "A.copy(order='A')", "A.astype(np.float32, order='F')", "A.astype(np.int8)", "A.astype(np.uint8, copy=False)",
    "A.astype('>f8')", "A.byteswap()", "np.zeros_like(A, order='F')", "np.full_like(A, S)",
    "np.ones_like(A, dtype=np.int8, order='K')", "np.ones(A.shape, order='F') * A", "np.add(A, S, out=A)",
    "np.multiply(A.sum(axis=0, keepdims=True), 2, out=B)", "A.sum(axis=0, out=B[0])", "np.add(A, B, out=A, where=B > 0)",
    "np.add.reduce(A, axis=(0, -1))", "np.maximum.reduce(A, axis=None, initial=S)",
    "np.minimum.reduce(A, axis=-1, keepdims=True, where=A > 0, initial=S)", "A.cumsum(axis=0, out=np.atleast_1d(B))", "A * S", "S - A",
    "A // S", "A % S", "A ** 2", "A / S", "A > S", "np.asarray(S)", "np.array(S, ndmin=1)", "A[..., None] * S",
    "A.sum(keepdims=True)", "A.ravel()[::-1].cumsum()", "np.cumsum(A, axis=-1, dtype=np.uint8)",
    "A.reshape(A.shape[::-1], order='F')", "A.T.copy(order='K')", "A.T.astype(np.float64)", "A.mean(axis=-1, keepdims=True)",
    "A.max(axis=(-1,), keepdims=True)", "A.conjugate().imag", "A.real.T", "A.flat[A.size // 2:]", "A.std(dtype=np.float32)",
]
# A scalar-valued expression (a Python or NumPy number)
SCALARS_OF = [
    "A.item(0)", "A.item(-1)", "A.item()", "A.sum() + S", "S * 2", "S + 0.25", "S // 2", "-S", "S ** 2", "abs(S)",
    "S - True", "S / 3", "S % 2", "A.flat[0]", "A.flat[-1] * S", "A.max(initial=S)", "A.sum(dtype=np.int8)", "A.mean()",
    "A.var(ddof=1)", "A.std(ddof=0)", "float(A.sum())", "int(A.size)", "A.argmax()", "A.trace()", "A.sum(axis=None)",
    "np.float32(S) + 0.1", "np.float32(S) * S", "S + np.int8(1)", "S * A.dtype.type(3)", "A.dtype.type(S)",
    "A.ravel()[0] + S", "bool(S)", "S == A.item(0)", "S < 0", "round(S, 1)", "S + 2**62", "S * 1e300", "S & 3",
    "S << 2", "np.int64(S) * 2**31", "np.uint8(200) + S", "A.min() - S", "A.prod(dtype=np.int64)", "A.all()",
    "A.any(where=B > 0)", "complex(S) * 1j", "int(S)", "float(S)", "S.item() if hasattr(S, 'item') else S",
]
# Other values the program hands back (tuples, lists, dtypes, flags)
OTHERS = [
    "A.tolist()", "A.nonzero()", "A.shape", "A.dtype", "A.dtype.kind", "A.flags.c_contiguous", "A.flags.f_contiguous",
    "A.flags.writeable", "list(A.flat)", "A.ndim", "A.size", "A.nbytes", "A.itemsize", "len(A)", "divmod(S, 3)",
    "type(S).__name__", "A.T.shape", "A.item(0) is not None", "[v * S for v in A.flat]", "A.flat.index",
]
WRITES = [
    "A.fill(S)", "A.put([0, -1], S)", "A.put([0, 9], B, mode='clip')", "A.put([-7], S, mode='wrap')", "A.real[...] = S",
    "A.imag[...] = S", "A.flat[0] = S", "A.flat[::2] = 0", "A.flat = S", "A.sort(axis=0, kind='stable')", "A.sort(axis=-1)",
    "A.T[0] = S", "A.setflags(write=False)", "A += S", "A *= 1.5", "A //= S", "A -= True", "A[...] = S", "A.partition(0)",
    "np.add(A, S, out=A, where=A > 0)", "np.multiply(A.mean(axis=0, keepdims=True), 1, out=A)", "A.clip(0, 1, out=A)",
    "A.round(0, out=A)", "A.cumsum(axis=-1, out=np.atleast_1d(A))", "A.sum(axis=0, keepdims=True, out=B[:1])",
    "np.copyto(A, S, where=B > 0)", "np.copyto(A, S, casting='same_kind')", "A.real += 1", "A.flat[[1, 1]] = S",
    "A.T.fill(0)", "A[A.nonzero()] = S",
]
CONTROL = [
    "if A.flags.f_contiguous: A = A.T", "if A.ndim == 2: A = A.T.copy()", "if isinstance(S, float): S = S * 2",
    "if type(S) is int: S = S + 2**62", "if A.size: S = A.item(0)", "if A.dtype.kind == 'f': A = A.astype(np.float32, copy=False)",
    "if S: A = A * S", "if np.isscalar(S): S = np.float32(S)", "if A.flat[0]: out.append(A.flat[0])",
    "if A.size > 2: A = A.ravel()[1:]",
]
# The scalar argument: Python numbers at their ends, NumPy scalars of narrow types, 0-d arrays
SCALARS = ["2", "-1", "0", "300", "2**63", "2**62", "-2**63", "0.5", "-0.0", "1e300", "float('nan')", "True", "False",
           "np.float32(0.375)", "np.float16(2.5)", "np.float64(-0.0)", "np.int8(-3)", "np.uint8(200)", "np.int64(2**62)",
           "np.uint64(2**63)", "np.bool_(True)", "np.complex64(1 - 2j)", "1.5 - 0.5j", "np.array(2.5)",
           "np.array(3, dtype=np.int16)", "np.array(True)", "np.array(0.375, dtype=np.float32)", "np.int32(-7)"]
YS = ["x", "x[::-1]", "x.T", "x[...]", "OTHER", "OTHER", "OTHER", "x.copy()"]

_ARRAY, _SCALAR = re.compile(r"\b[AB]\b"), re.compile(r"\bS\b")


class MethodGen(ViewGen):
    ys = YS

    def fill(self, text: str, arrays: list[str], scalars: list[str]) -> str:   # noqa: D102 (ViewGen's, with S)
        text = _ARRAY.sub(lambda m: self.r.choice(arrays), text)
        return _SCALAR.sub(lambda m: self.r.choice(scalars), text)

    def statement(self, arrays: list[str], scalars: list[str], k: int) -> tuple[list[str], str | None, str]:
        r = self.r
        kind = r.choices(["array", "scalar", "other", "write", "control"], [8, 4, 2, 3, 1])[0]
        if kind == "array":
            return [f"    v{k} = " + self.fill(r.choice(ARRAYS), arrays, scalars)], f"v{k}", kind
        if kind == "scalar":
            return [f"    w{k} = " + self.fill(r.choice(SCALARS_OF), arrays, scalars)], f"w{k}", kind
        if kind == "other":
            return ["    out.append(" + self.fill(r.choice(OTHERS), arrays, scalars) + ")"], None, kind
        if kind == "write":
            return ["    " + self.fill(r.choice(WRITES), arrays, scalars)], None, kind
        head, body = self.fill(r.choice(CONTROL), arrays, scalars).split(": ", 1)
        return [f"    {head}:", f"        {body}"], None, kind

    def program(self, max_stmts: int = 6) -> ViewProgram:
        r = self.r
        dtype, shape, scalar = r.choice(DTYPES), r.choice(SHAPES), r.choice(SCALARS)
        calls = [self.call(dtype, shape, scalar), "AGAIN"]
        if r.random() < 0.4:
            shape = r.choice(SHAPES)
        if r.random() < 0.2:
            dtype = r.choice(DTYPES)
        if r.random() < 0.5:   # another value of the scalar, sometimes of another type
            scalar = r.choice(SCALARS)
        calls += [self.call(dtype, shape, scalar), "AGAIN", self.call(dtype, shape, scalar)]
        pokes = [None] * len(calls)
        body: list[str] = []
        arrays, scalars = ["x", "y"], ["s"]
        for _ in range(max_stmts * 4):
            if len([ln for ln in body if not ln.startswith("     ")]) >= max_stmts:
                break
            lines, new, kind = self.statement(arrays, scalars, len(arrays) + len(scalars))
            ok = _runs(ViewProgram(body + lines, "out", calls, pokes))
            if ok is None or (not ok and r.random() >= 0.15):
                continue
            body += lines
            if new:
                (arrays if kind == "array" else scalars).append(new)
            if not ok:
                break
        made = [n for n in arrays + scalars if n[0] in "vw"] or ["x", "s"]
        ret = ", ".join(r.sample(made, min(len(made), r.randint(1, 3))))
        ret = r.choice([ret, f"{ret}, out", "out"]) if r.random() < 0.5 else ret
        return ViewProgram(body, ret, calls, pokes, r.choice([None, None, True]))


def check_seed(seed: int, backends=("eager", "cpp")) -> ViewProgram:
    prog = MethodGen(seed).program()
    check(prog, backends)
    return prog


def main() -> int:
    """A long run (runner.long_run): KILN_FUZZ_METHODS_SEED, KILN_FUZZ_METHODS_PROGRAMS,
    KILN_FUZZ_METHODS_BACKENDS (default eager,cpp)."""
    return runner.long_run("methods", check_seed,
                           lambda seed, backends: minimize(MethodGen(seed).program(), backends).reproducer(),
                           "eager,cpp", every=20)


if __name__ == "__main__":
    sys.exit(main())
