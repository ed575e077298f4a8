"""A focused second generator (stop 47): what real code does that random expression trees
rarely do.

- aliasing and mutation: in-place ops on arguments and on views of them (``a[1:] +=
  a[:-1]``, ``np.add(a, b, out=a[::-1])``, ``a[[0, 0, 1]] = a[[1, 0, 0]]``, ``a.T[...] =
  b``), views of arguments made, mutated and returned, and two arguments that are one
  array or overlapping views of one array (``f(x, x)``, ``f(x[1:], x[:-1])``, ``f(x, x.T)``);
- layouts: C, Fortran, reversed, strided, broadcast (read-only), read-only, byte-swapped,
  unaligned, size 0 and 1, 0-d;
- dtypes: bool to complex128 (uint32 and uint64 too) against Python and NumPy scalars (NEP
  50, a Python int that overflows the array's dtype), ``dtype=``/``casting=``/``out=`` of
  another dtype/``where=`` on ufuncs, reductions with ``initial=``/``keepdims=``/``where=``
  and tuple or negative axes;
- three calls whose layouts (and on the third sizes and dtypes) change: the second call,
  with the first call's shapes, may be Fortran-ordered or reversed, so a guard that lets it
  reuse the first call's kernel wrongly shows.

A program is a few statements drawn from templates (``STMTS``) over the names it has; each
candidate runs with NumPy on every call's arguments and is kept when it runs (or, one time
in four, as the last statement when it raises: exceptions are compared too). The oracle is
runner.py's. Plain ``random.Random(seed)`` draws, so a seed names a program; ``minimize``
drops statements while the mismatch stays.

In the suite ``test_fuzz.py`` runs a fixed seed set; a long run (docs/fuzzing.md)::

    KILN_FUZZ_ALIAS_SEED=1 KILN_FUZZ_ALIAS_PROGRAMS=500 python -m tests.fuzz.alias
"""
from __future__ import annotations

import os
import random
import sys
import warnings

import numpy as np

from .programs import Program, array_code, build_function

DTYPES = ("float64", "float32", "int64", "int32", "bool", "uint8", "int8", "int16", "uint32",
          "uint64", "float16", "complex64", "complex128")
LAYOUTS = ("C", "F", "rev", "step", "bcast", "ro", "swap", "unal", "T")
# argument patterns: how the arrays a program takes relate in memory
PATTERNS = ("two", "same", "shift", "T", "rev", "one", "view_base", "bcast_second")

# Statement templates: X and Y are array names (arguments or views), S a scalar argument,
# V the name the statement binds. Templates that cannot apply on some call (shapes, dtypes)
# are rejected by the probe.
WRITES = [
    "X[1:] += X[:-1]", "X[:-1] -= X[1:]", "X[::-1] *= 2", "X *= S", "X += Y", "X -= Y.T",
    "X[...] = Y", "X.T[...] = Y", "X[...] = X[::-1]", "X[...] = X.T", "X[...] = Y[::-1]",
    "np.add(X, Y, out=X)", "np.add(X, Y, out=X[::-1])", "np.multiply(X, S, out=X)",
    "np.subtract(Y, X, out=X, casting='unsafe')", "np.add(X, Y, out=X, where=Y > 0)",
    "np.multiply(X, 3, out=X, where=X < 1)", "np.add(X, X.T, out=X)", "np.add(X[:-1], X[1:], out=X[1:])",
    "np.add(X[1:], X[:-1], out=X[:-1])",
    "X[[0, 0, 1]] = X[[1, 0, 0]]", "X[[0, 1]] += X[[1, 0]]", "X[[1, 0]] = X[:2]", "X[X > 0] -= X.mean()",
    "X[Y > 0] = S", "np.copyto(X, Y[::-1])", "np.copyto(X, Y, where=X < Y)", "np.copyto(X, S, casting='unsafe')",
    "X.fill(S)", "X[0] = S", "X[-1] = X[0]", "np.square(X, out=X)", "np.cumsum(X, axis=0, out=X)",
    "np.cumsum(X, axis=-1, out=X[::-1])", "np.clip(X, -1, 1, out=X)", "np.add.at(X, [0, 0, -1], S)",
    "np.put(X, [0, -1], Y)", "np.floor_divide(X, 2, out=X)", "X //= 2", "X %= 3", "X **= 2", "X <<= 1",
    "X |= Y", "X += 300", "X += 1.5", "X -= 2 ** 70", "X *= np.float32(S)", "np.abs(X, out=X)",
    "np.matmul(X, Y, out=X)", "X @= Y", "np.sum(X, axis=0, out=X[0])", "np.sum(X, axis=-1, out=X[..., 0])",
    "np.maximum(X, Y, out=Y)", "np.add(X, S, out=Y, casting='unsafe')", "np.true_divide(X, 2, out=X)",
    "np.logical_not(X, out=X)", "np.conjugate(X, out=X)", "X.real[...] = S", "X.imag[...] = S",
    "X.ravel()[::2] = S", "X.reshape(-1)[0] = S", "np.negative(X, out=Y)", "X[..., ::2] += X[..., 1::2]",
    "np.add(X, Y, out=(X,))", "X[0] += X", "X[:, 0] = X[0]", "X[1:, 1:] = X[:-1, :-1]", "X[1:, 1:] += X[:-1, :-1]",
    "np.add(X, 1, out=X, where=X > 0, dtype=np.float64, casting='unsafe')", "np.sum(X, axis=0, out=Y, where=X > 0)",
    "np.divmod(X, 3, out=(X, Y))", "np.modf(X, out=(Y, X))", "X[::2] = X[1::2]", "X[X.nonzero()] *= S",
    "X[np.argsort(X, axis=None, kind='stable')[:2]] = S", "X[..., None] += Y[..., None]", "X.flat[::2] = S",
    "np.multiply.at(X, ([0, 0],), 2)", "np.place(X, X > 0, Y.copy())", "np.putmask(X, X < 1, Y)",
    "X[:] = np.broadcast_to(S, X.shape)", "np.broadcast_to(X, X.shape)[...] = 1", "X.shape = (-1,)",
]
EXPRS = [
    "X + S", "S - X", "X * Y", "X / S", "X // S", "X % S", "X ** 2", "X + 300", "X * 2 ** 70", "X + 1j",
    "X + np.float32(S)", "X < 2 ** 63", "X & Y", "X == S", "np.add(X, S, dtype=np.float32)",
    "np.add(X, Y, dtype='f8')", "np.multiply(X, Y, casting='same_kind')", "np.subtract(X, Y, dtype=np.int16, casting='unsafe')",
    "np.add(X, Y, out=np.zeros(np.broadcast_shapes(X.shape, Y.shape), np.float32), where=Y > 0)",
    "np.multiply(X, S, out=np.full(X.shape, 7, X.dtype), where=X > 0)",
    "np.add(X, Y, out=np.empty(X.shape, np.complex64), casting='unsafe')",
    "np.sum(X, axis=(0, -1), keepdims=True, initial=1, where=X > 0)", "np.max(X, axis=-1, initial=-5, where=X > 0)",
    "np.min(X, initial=100)", "X.sum(axis=-1, dtype=np.int8)", "np.prod(X, axis=(-2,), keepdims=True)",
    "np.add.reduce(X, axis=None, where=X != 0)", "X.mean(axis=(0,), where=X > 0)", "np.any(X, axis=-1, keepdims=True, where=Y > 0)",
    "np.logical_and(X, Y, out=np.ones(X.shape, bool))", "X.sum(axis=(-1, 0))", "X.max(axis=0, keepdims=True)",
    "np.cumsum(X, axis=-1, dtype=np.float32)", "np.add.reduce(X, axis=(0,), initial=2.5)", "X.std(axis=-1, where=X > 0)",
    "np.minimum.reduce(X, axis=-1, initial=0, where=Y < 2)", "X.astype(np.int16)", "X.astype(np.float16) * S",
    "np.multiply.reduce(X, axis=0, keepdims=True, dtype=np.int64)", "np.negative(X, dtype=np.float64)",
    "np.equal(X, Y)",
    "np.add(X, S, casting='no')", "np.add(X, S, casting='safe', dtype=np.float64)",
    "np.sqrt(X, where=X > 0, out=np.zeros(X.shape))", "np.matmul(X, Y)", "X @ Y.T", "np.dot(X, S)",
    # views: made, mutated by later statements, returned
    "X[::-1]", "X.T", "X.reshape(-1)", "X[1:]", "X.ravel()", "X[None]", "np.broadcast_to(X, (2,) + X.shape)",
    "X.view()", "X[..., ::2]", "X.real", "np.transpose(X)", "X[0]", "X[:, None]", "np.swapaxes(X, 0, -1)",
    "X.reshape(X.shape)", "X.squeeze()", "np.asarray(X)", "np.asfortranarray(X)", "np.ascontiguousarray(X)",
    "np.add(X, Y, dtype=np.complex64)", "np.add(X, S, out=None)", "np.true_divide(X, Y, casting='unsafe', dtype=np.float16)",
    "np.sum(X, where=[True], initial=0.5)", "np.max(X, axis=(), initial=0)", "X.sum(axis=(-2, -1), keepdims=True, dtype=np.uint8)",
    "np.count_nonzero(X, axis=-1, keepdims=True)", "np.all(X, axis=(0,), where=X < 3)", "X.min(axis=-1, initial=3, keepdims=True)",
    "np.mean(X, axis=-1, dtype=np.float32, keepdims=True)", "np.var(X, axis=0, ddof=1, where=X > -2)",
    "np.add.accumulate(X, axis=-1, dtype=np.int16)", "X.cumprod(axis=0)", "np.copy(X, order='K')", "X.copy(order='A')",
    "X.astype(X.dtype, copy=False)", "X.astype('>f4')", "np.array(X, copy=None)",
    "X.byteswap()", "X.view(X.dtype.newbyteorder()).byteswap()", "np.frombuffer(X.tobytes(), X.dtype)",
]


def _sample(rng: np.random.Generator, shape: tuple, dtype: str) -> np.ndarray:
    if dtype == "bool":
        return rng.random(shape) < 0.5
    kind = np.dtype(dtype).kind
    if kind == "u":
        hi = 256 if dtype == "uint8" and rng.random() < 0.2 else 12
        return rng.integers(0, hi, shape).astype(dtype)
    if kind == "i":
        if dtype in ("int8", "int16") and rng.random() < 0.2:
            info = np.iinfo(dtype)
            return rng.integers(int(info.min), int(info.max) + 1, shape).astype(dtype)
        return rng.integers(-6, 7, shape).astype(dtype)
    if kind == "c":
        return (rng.integers(-8, 9, shape) / 4 + 1j * (rng.integers(-8, 9, shape) / 4)).astype(dtype)
    return (rng.integers(-16, 17, shape) / 4.0).astype(dtype)


def _layout(rng: np.random.Generator, shape: tuple, dtype: str, layout: str) -> str:
    """Code for a fresh array of ``shape`` and ``dtype`` laid out as ``layout``."""
    nd, item = len(shape), np.dtype(dtype).itemsize
    size = int(np.prod(shape))
    if layout == "F" and nd >= 2:
        return f"np.asfortranarray({array_code(_sample(rng, shape, dtype))})"
    if layout == "T" and nd >= 2:
        return array_code(_sample(rng, shape[::-1], dtype)) + ".T"
    if layout == "rev" and nd >= 1:
        return array_code(_sample(rng, shape, dtype)) + "[" + ", ".join(["::-1"] * nd) + "]"
    if layout == "step" and nd >= 1:
        return array_code(_sample(rng, tuple(2 * d for d in shape), dtype)) + "[" + ", ".join(["::2"] * nd) + "]"
    if layout == "bcast" and nd >= 1:
        return f"np.broadcast_to({array_code(_sample(rng, (1,) + shape[1:], dtype))}, {shape})"
    if layout == "ro":
        return f"np.lib.stride_tricks.as_strided({array_code(_sample(rng, shape, dtype))}, writeable=False)"
    if layout == "swap" and item > 1:
        return f"np.asarray({array_code(_sample(rng, shape, dtype))}, np.dtype('{dtype}').newbyteorder())"
    if layout == "unal" and item > 1 and size:
        return (f"np.frombuffer(bytearray(bytes(1) + {array_code(_sample(rng, shape, dtype))}.tobytes()), "
                f"np.{dtype}, offset=1).reshape({shape})")
    return array_code(_sample(rng, shape, dtype))


def _scalar(rng: np.random.Generator, kind: str) -> str:
    if kind == "int":
        return str(rng.choice(["2", "-3", "0", "1", "7", "200", "-129", "2 ** 40"]))
    if kind == "float":
        return str(rng.choice(["1.5", "-0.5", "0.0", "-0.0", "3.0", "1e300", "0.25"]))
    if kind == "complex":
        return str(rng.choice(["1j", "(1.5-2j)", "complex(0.5, 0.0)"]))
    if kind == "bool":
        return str(rng.choice(["True", "False"]))
    return f"np.{kind}({int(rng.integers(-3, 4)) if 'int' in kind and 'u' not in kind else int(rng.integers(0, 4))})"


SCALARS = ("int", "float", "complex", "bool", "float32", "int8", "uint8", "float16", "int64", "uint64")


class AliasGen:
    """Draws one program from ``seed``."""

    def __init__(self, seed: int) -> None:
        self.r = random.Random(seed)
        self.rng = np.random.default_rng(seed)

    def calls(self) -> tuple[list[str], list[str]]:
        r = self.r
        pattern = r.choice(PATTERNS)
        ndim = r.choice([2, 2, 1, 3, 0]) if pattern not in ("T", "shift") else r.choice([2, 1, 2])
        n = r.choice([3, 2, 4, 1, 0, 3])
        if pattern == "T" and ndim != 2:
            pattern = "rev"
        if ndim == 0 and pattern in ("rev", "view_base"):
            pattern = "same"
        shape = tuple(r.choice([n, n, 1]) if pattern != "T" else n for _ in range(ndim))
        dtypes = [r.choice(DTYPES), r.choice(DTYPES)]
        if r.random() < 0.4:
            dtypes[1] = dtypes[0]
        scalar = r.choice(SCALARS)
        layouts = [["C", "C"], [r.choice(LAYOUTS), r.choice(LAYOUTS)], [r.choice(LAYOUTS), r.choice(LAYOUTS)]]
        shape2 = tuple(r.choice([d, d, 2, 5, 1, 0]) for d in shape) if pattern != "T" else (r.choice([n, 2, 5]),) * 2
        dtypes2 = [d if r.random() < 0.7 else r.choice(DTYPES) for d in dtypes]
        params = {"one": ["x0", "s0"]}.get(pattern, ["x0", "x1", "s0"])
        # the second or third call may pass the arrays related otherwise (f(x, y) after
        # f(x, x)): kiln's aliasing guards must tell the calls apart
        patterns = [pattern] * 3
        pairs = ("two", "same", "rev") + (("T",) if ndim == 2 and len(set(shape)) == 1 else ())
        if pattern in pairs and ndim and r.random() < 0.4:
            patterns[r.choice([1, 2])] = r.choice(pairs)
        calls = []
        for k, (lay, shp, dts, pattern) in enumerate(zip(layouts, [shape, shape, shape2], [dtypes, dtypes, dtypes2],
                                                         patterns)):
            base = _layout(self.rng, shp, dts[0], lay[0])
            s = _scalar(self.rng, scalar)
            if pattern == "two" or pattern == "bcast_second":
                other = _layout(self.rng, shp, dts[1], "bcast" if pattern == "bcast_second" else lay[1])
                code = f"x0 = {base}\nx1 = {other}\nargs = (x0, x1, {s})\n"
            elif pattern == "one":
                code = f"x0 = {base}\nargs = (x0, {s})\n"
            else:
                second = {"same": "b", "shift": "b[:-1]", "T": "b.T", "rev": "b[::-1]",
                          "view_base": "b[..., ::2]" if shp else "b[...]"}[pattern]
                first = "b[1:]" if pattern == "shift" else "b"
                code = f"b = {base}\nargs = ({first}, {second}, {s})\n"
            calls.append(code)
        n_calls = r.choice([3, 3, 2])
        return params, calls[:n_calls]

    def program(self, max_stmts: int = 5) -> Program:
        r = self.r
        params, calls = self.calls()
        arrays = [p for p in params if p.startswith("x")]
        body: list[str] = []
        made: list[str] = []
        n_stmts = r.randint(1, max_stmts)
        ended = False
        for k in range(n_stmts * 3):
            if len(body) >= n_stmts or ended:
                break
            names = arrays + made
            X, Y = r.choice(names), r.choice(names)
            if r.random() < 0.45:
                line = r.choice(WRITES)
                new = None
            else:
                new = f"v{len(made) + 1}"
                line = f"{new} = " + r.choice(EXPRS)
            line = "    " + line.replace("X", X).replace("Y", Y).replace("S", "s0")
            ok = _runs(params, body + [line], calls)
            if ok is None:
                continue
            if not ok:
                if r.random() < 0.25:    # kept as the last statement: kiln must raise as NumPy does
                    body.append(line)
                    ended = True
                continue
            body.append(line)
            if new:
                made.append(new)
        rets = [r.choice(made + arrays) for _ in range(r.choice([1, 1, 2]))] if made or r.random() < 0.5 else []
        ret = ", ".join(rets) if len(rets) > 1 else (rets[0] if rets else "")
        return Program(params, [], body, ret, calls)


def _runs(params: list[str], body: list[str], calls: list[str]) -> bool | None:
    """Whether ``body`` runs with NumPy on every call; None when it is no program to check
    (a value past the size limit, or what NumPy leaves unspecified)."""
    prog = Program(params, [], body, "", calls)
    text = "\n".join(body)
    try:
        fn, _ = build_function(prog.source(probe=True))
    except SyntaxError:
        return None
    for n in range(len(calls)):
        args = prog.args(n)
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                ns = fn(*args)
        except Exception:          # noqa: BLE001 - a candidate that raises
            return False
        for v in ns.values():
            if isinstance(v, np.ndarray) and (v.size > 256 or v.ndim > 4):
                return None
            if isinstance(v, np.ndarray) and v.dtype == object:
                return None
        if _unspecified(text, ns):
            return None
    return True


def _unspecified(text: str, ns: dict) -> bool:
    """What NumPy leaves to its path (docs/fuzzing.md): min/max of both signed zeros,
    float-to-integer casts of values out of range, mask assignments of overlapping values,
    NumPy 2.4's strided in-place negative."""
    floats = [v for v in ns.values() if isinstance(v, (np.ndarray, np.generic)) and v.dtype.kind in "fc"]
    if ("maximum" in text or "minimum" in text or ".max(" in text or "np.max(" in text or "np.min" in text) and \
            any(np.any(np.asarray(v) == 0) and np.any(np.signbit(np.asarray(v).real)[np.asarray(v) == 0]) for v in floats):
        return True
    if any(not np.all(np.isfinite(np.asarray(v))) for v in floats) and ("astype(np.int" in text or "int16" in text
                                                                         or "casting='unsafe'" in text or "int8" in text):
        return True
    if any(np.any(np.abs(np.asarray(v)) > 30000) for v in floats) and ("int16" in text or "int8" in text
                                                                       or "unsafe" in text):
        return True
    if "np.negative(" in text and "out=" in text:
        return True
    return False


def check_seed(seed: int, backends=("eager", "aot_eager", "cpp")) -> Program | None:
    """Check the program of ``seed``; raise runner.Mismatch when kiln and NumPy disagree."""
    from .runner import check
    prog = AliasGen(seed).program()
    if not prog.body:
        return None
    check(prog, backends=backends)
    return prog


def minimize(prog: Program, backends=("eager", "cpp")) -> Program:
    """Drop statements (and calls) while the program still fails."""
    from .runner import check, fails as still_fails

    def fails(p: Program) -> bool:
        return still_fails(lambda q, b: check(q, backends=b), p, backends)

    changed = True
    while changed:
        changed = False
        for i in range(len(prog.body)):
            cand = Program(prog.params, [], prog.body[:i] + prog.body[i + 1:], prog.ret, prog.calls)
            if cand.ret and cand.ret.split(",")[0].strip().startswith("v") and \
                    not any(ln.strip().startswith(r.strip() + " =") for r in cand.ret.split(",") for ln in cand.body
                            if r.strip().startswith("v")):
                continue
            if fails(cand):
                prog, changed = cand, True
                break
        for i in range(len(prog.calls)):
            if len(prog.calls) > 1:
                cand = Program(prog.params, [], prog.body, prog.ret, prog.calls[:i] + prog.calls[i + 1:])
                if fails(cand):
                    prog, changed = cand, True
                    break
    return prog


def main() -> int:
    """A long run (runner.long_run): KILN_FUZZ_ALIAS_SEED, KILN_FUZZ_ALIAS_PROGRAMS,
    KILN_FUZZ_ALIAS_BACKENDS (default eager,aot_eager,cpp)."""
    from .runner import long_run
    return long_run("alias", check_seed, lambda seed, backends: minimize(AliasGen(seed).program(), backends).reproducer(),
                    "eager,aot_eager,cpp")


if __name__ == "__main__":
    sys.exit(main())
