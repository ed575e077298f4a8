"""A differential generator of views that outlive a call (stop 56).

alias.py draws aliasing inside one call; this one draws what a caller does with what a
call returns: a function returns views of its arguments (slices, ``.T``, ``ravel``,
``reshape``, ``np.asarray``, ``astype(copy=False)``, ``np.array(copy=None)``, ``out=`` of an
argument, ``broadcast_to``, ``.real``), copies of them (``ravel`` of a transposed array,
``flatten``, ``ascontiguousarray`` of a strided one) or new arrays, and asks about them
(``np.shares_memory``, ``.base is x``, ``.flags.writeable``/``c_contiguous``/``owndata``,
``if np.shares_memory(a, b): a = a.copy()``); between calls the caller writes into the
returned arrays (``r[...] = 7``, ``r += 1``, ``r.sort()``, ``r.flags.writeable = True``,
``r.shape = (-1,)``; NumPy's errors on a read-only or copied result compared) and calls again
with the same, now mutated, arguments, and every result of every earlier call is compared
again (a result that is a view of an argument sees the later calls' writes; a new array
must not be a buffer kiln reuses).

A program takes ``x, y, s``: ``x`` a 0-, 1- or 2-d array of one of 14 dtypes laid out C,
Fortran, transposed, reversed, strided, read-only or broadcast; ``y`` the same object, a view
of ``x`` (``x[::-1]``, ``x.T``, ``x[...]``) or another array of its shape; ``s`` a Python or
NumPy scalar. Calls: new arguments, the same again after a poke, new ones (another layout
or size), the same again, new ones. The oracle is lang.py's (bit-exact values, types,
dtypes, shapes, exceptions, arguments after the call, warnings among Python's) and
runner's aliasing pattern, plus each returned array's flags (writeable, C and F
contiguity, owndata), ``.base is`` each argument, strides on axes longer than one, and
every held result after every call and poke.

    KILN_FUZZ_VIEWS_SEED=1 KILN_FUZZ_VIEWS_PROGRAMS=200 python -m tests.fuzz.views
"""
from __future__ import annotations

import linecache
import os
import random
import re
import sys
import warnings

import numpy as np

import kiln

from . import runner
from .lang import _exact, _too_big, compare_call, statements
from .runner import TIME_LIMIT, Mismatch, _alias_pattern, _leaves

DTYPES = ["float64", "float32", "int64", "int32", "int16", "int8", "uint8", "uint16", "uint32", "uint64", "bool",
          "complex128", "complex64", "float16"]
VIEWS = ["A[1:]", "A[::-1]", "A[::2]", "A.T", "A.reshape(-1)", "A.ravel()", "A.ravel(order='F')", "np.ravel(A, order='K')",
         "A.flatten()", "A.reshape(A.shape)", "np.transpose(A)", "A[None]", "A[..., None]", "np.squeeze(A)",
         "np.asarray(A)", "np.ascontiguousarray(A)", "np.asfortranarray(A)", "A.view()", "np.broadcast_to(A, (2,) + A.shape)",
         "A.real", "A.imag", "np.diagonal(A)", "A.astype(A.dtype, copy=False)", "A.astype(np.float64, copy=False)",
         "np.asarray(A, dtype=np.float64)", "np.array(A, copy=False)", "np.array(A, copy=None)", "np.array(A)",
         "A.copy()", "np.copy(A, order='K')", "np.copy(A, order='F')", "A[A > 0]", "A[[0, -1]]", "np.atleast_2d(A)",
         "np.atleast_1d(A)", "np.expand_dims(A, 0)", "np.moveaxis(A, 0, -1)", "A.swapaxes(0, -1)", "np.flip(A)",
         "A[:, ::-1]", "A[1]", "A[0, :]", "A[:, 0]", "A[...]", "A[()]", "A.reshape(-1, 1)", "A.reshape(A.shape[::-1])",
         "np.reshape(A, -1, order='F')", "A.T.reshape(-1)", "A.T.ravel()", "A.squeeze()", "np.broadcast_arrays(A, B)[0]",
         "np.split(A, [1])[1]", "np.array_split(A, 2)[0]", "A.diagonal()", "A.T.copy()", "np.asanyarray(A)",
         "np.require(A, requirements='C')", "A.reshape(A.shape, order='F')", "np.ravel(A)", "np.flipud(A)"]
MATH = ["A * 2", "A + B", "A.sum(axis=0)", "np.sort(A)", "np.where(A > 0, A, 0)", "A + s", "np.add(A, s, out=A)",
        "np.multiply(A, 2, out=B)", "np.clip(A, -1, 1, out=A)", "np.abs(A, out=A)", "A.astype(np.float32)",
        "np.concatenate((A.ravel(), B.ravel()))", "np.stack((A, B))", "np.maximum(A, B, out=A)", "np.cumsum(A, out=np.atleast_1d(B)).reshape(np.shape(A))",
        "np.negative(A, out=B)", "A.max(axis=0, keepdims=True)", "np.subtract(A, B, out=A[::-1])",
        "np.add(A, 1, out=np.empty_like(A))", "np.copysign(A, -1.0, out=A)"]
QUERIES = ["np.shares_memory(A, B)", "np.may_share_memory(A, B)", "A.base is B", "A.base is None", "A is B",
           "A.flags.writeable", "A.flags.c_contiguous", "A.flags.f_contiguous", "A.flags.owndata",
           "A.flags['C_CONTIGUOUS']", "A.ndim", "A.flags.aligned", "A.base is B.base", "len(A)", "A.size"]
WRITES = ["A[0] = s", "A[...] = B", "A += 1", "A *= s", "A[::-1] += A", "A.fill(s)", "A.sort()", "np.copyto(A, B)",
          "A[A > 0] = 0", "A.flags.writeable = False", "A.shape = (-1,)", "A[:] = A[::-1]", "np.negative(A, out=A)",
          "np.add.at(A, [0, 0], 1)", "A.put([0], [5])", "np.put(A, [0, -1], s)", "A.T[...] = 3", "A.ravel()[0] = 9",
          "A.reshape(-1)[:1] = -2", "A.real[...] = 4"]
CONTROL = ["if np.shares_memory(A, B): A = A.copy()", "if not A.flags.c_contiguous: A = np.ascontiguousarray(A)",
           "if A.flags.writeable: A[...] = 1", "if A.base is None: return A, out", "if A.base is not None: out.append(A.base is x)",
           "if A.flags.owndata: A += 2", "if not A.flags.writeable: A = A.copy()", "if A is x: return out, A"]
POKES = ["r[...] = 7", "r += 1", "r.flat[0] = -3", "r.fill(0)", "r.sort()", "r.flags.writeable = True",
         "r.flags.writeable = False", "r.shape = (-1,)", "np.negative(r, out=r)", "r[::-1] = r", "x[...] = 5",
         "x[::-1] += 1", "r.T[...] = 2"]
SHAPES = [(4,), (3, 4), (2, 3), (0,), (1,), (), (1, 3), (3, 1), (4, 4)]
LAYOUTS = ["C", "F", "T", "rev", "step", "ro", "bcast"]
YS = ["x", "x", "x[::-1]", "x.T", "x[...]", "OTHER", "OTHER", "x.copy()"]
SCALARS = ["2", "-1", "0.5", "True", "np.float32(1.5)", "np.int8(3)", "np.uint8(2)", "1.5 - 0.5j", "np.float64(-0.0)"]

_NAME = re.compile(r"\b[AB]\b")
OWNDATA = os.environ.get("KILN_FUZZ_VIEWS_OWNDATA") == "1"
# without it, the program asks no such question either (an array a graph break hands over
# is kiln's own: seed 9161), and asks another in its place
_OWNDATA_FREE = {"A.base is None": "A.base is B", "A.flags.owndata": "A.flags.writeable"}


class ViewProgram:
    """A drawn program: the body (4-space indented lines), its return, the calls (``args = ...``
    or ``AGAIN``: the previous call's argument objects), the poke after each call (or None)
    and the ``kiln.compile`` option ``dynamic``."""

    def __init__(self, body: list[str], ret: str, calls: list[str], pokes: list, dynamic=None) -> None:
        self.body, self.ret, self.calls, self.pokes, self.dynamic = body, ret, calls, pokes, dynamic

    def source(self) -> str:
        return "\n".join(["def prog(x, y, s):", "    out = []", *self.body, f"    return {self.ret}"]) + "\n"

    def build(self):
        source = self.source()
        filename = f"<kiln-viewsfuzz-{id(source)}-{random.getrandbits(32)}>"
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        ns: dict = {"np": np, "__name__": "kiln_viewsfuzz"}
        exec(compile(source, filename, "exec"), ns)
        return ns["prog"]

    def args(self, j: int, prev: tuple | None) -> tuple:
        if self.calls[j] == "AGAIN":
            return prev
        ns: dict = {"np": np}
        exec(self.calls[j], ns)
        return ns["args"]

    def reproducer(self) -> str:
        source = self.source().replace("def prog(", f"@kiln.compile(dynamic={self.dynamic})\ndef prog(")
        lines = ["import numpy as np", "import kiln", "", source]
        for j, c in enumerate(self.calls):
            lines += [f"# call {j}", "" if c == "AGAIN" else c, "res = prog(*args); print(res)"]
            if self.pokes[j]:
                lines.append(f"r = first_array(res); x = args[0]; {self.pokes[j]}  # (in a try: NumPy's errors compared)")
        return "\n".join(lines) + "\n"


def first_array(res):
    """The result array a poke writes: the first array leaf of the result, else None."""
    return next(iter(_leaves(res)), None)


def poke(code: str, res, args) -> tuple:
    """Run the caller's ``code`` on the call's result ``r`` (and its argument ``x``); NumPy's
    error, if any, as (type name, message)."""
    r = first_array(res)
    if r is None and re.search(r"\br\b", code):
        return ("no array",)
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            exec(code, {"np": np, "r": r, "x": args[0]})
    except (ValueError, TypeError, AttributeError, IndexError) as e:
        return (type(e).__name__, str(e))
    return ("ok",)


def facts(res, args) -> list:
    """What NumPy decides about each returned array beyond its values: flags, ``.base`` (is
    an argument), strides on the axes longer than one; with ``KILN_FUZZ_VIEWS_OWNDATA=1``
    also whether it owns its memory (``.flags.owndata``, ``.base is None``: kiln's copies
    may be views of a buffer of another shape, docs/fuzzing.md "Stop 56")."""
    ins = list(_leaves(args))
    return [(o.flags.writeable, o.flags.c_contiguous, o.flags.f_contiguous, [o.base is a for a in ins],
             tuple(s for s, n in zip(o.strides, o.shape) if n > 1) if o.size else (),
             (o.flags.owndata, o.base is None) if OWNDATA else ())
            for o in _leaves(res)]


class ViewGen:
    def __init__(self, seed: int) -> None:
        self.r = random.Random(seed)

    def fill(self, text: str, names: list[str]) -> str:
        if not OWNDATA:
            for asked, other in _OWNDATA_FREE.items():
                text = text.replace(asked, other)
        return _NAME.sub(lambda m: self.r.choice(names), text)

    def statement(self, names: list[str], k: int) -> tuple[list[str], str | None]:
        r = self.r
        kind = r.choices(["view", "math", "query", "write", "control"], [8, 3, 1, 3, 1])[0]
        if kind in ("view", "math"):
            return [f"    v{k} = " + self.fill(r.choice(VIEWS if kind == "view" else MATH), names)], f"v{k}"
        if kind == "query":
            return ["    out.append(" + self.fill(r.choice(QUERIES), names) + ")"], None
        if kind == "write":
            return ["    " + self.fill(r.choice(WRITES), names)], None
        text = self.fill(r.choice(CONTROL), names)
        head, body = text.split(": ", 1)
        return [f"    {head}:", f"        {body}"], None

    def array(self, dtype: str, shape: tuple, layout: str) -> str:
        r = self.r
        n = int(np.prod(shape)) if shape else 1
        vals = [r.randint(-8, 8) / 4 for _ in range(max(n, 1))]
        if dtype[0] in "iu":
            vals = [int(abs(v) * 4) if dtype[0] == "u" else int(v * 4) for v in vals]
        base = f"np.array({vals[:n] if shape else vals[0]!r}).reshape({shape!r})"
        if dtype.startswith("complex"):
            base = f"({base} * (1 - 0.5j)).astype(np.{dtype})"
        elif dtype == "bool":
            base = f"({base} > 0)"
        else:
            base = f"{base}.astype(np.{dtype})"
        if layout == "F":
            return f"np.asfortranarray({base})"
        if layout == "T":
            return f"np.ascontiguousarray({base}.T).T"
        if layout == "rev":
            return f"{base}[::-1].copy()[::-1]" if shape else base
        if layout == "step":
            return f"np.repeat({base}, 2, axis=0)[::2]" if shape else base
        if layout == "ro":
            return f"np.lib.stride_tricks.as_strided({base}, writeable=False)"
        if layout == "bcast" and shape:
            return f"np.broadcast_to({base}[:1], {shape!r})"
        return base

    ys = YS   # what y is (methods.py draws other arrays more often)

    def call(self, dtype: str, shape: tuple, scalar: str | None = None) -> str:
        """One call's arguments ``x, y, s`` as code (``s`` drawn from SCALARS if not given)."""
        r = self.r
        x = self.array(dtype, shape, r.choice(LAYOUTS))
        y = r.choice(self.ys if len(shape) else ["x", "x[...]", "OTHER", "x.copy()"])
        if y == "OTHER":
            y = self.array(r.choice([dtype, dtype, r.choice(DTYPES)]), shape, r.choice(LAYOUTS))
        return f"x = {x}; y = {y}; args = (x, y, {scalar if scalar is not None else r.choice(SCALARS)})"

    def program(self, max_stmts: int = 5) -> ViewProgram:
        r = self.r
        dtype, shape = r.choice(DTYPES), r.choice(SHAPES)
        calls = [self.call(dtype, shape), "AGAIN"]
        if r.random() < 0.4:
            shape = r.choice(SHAPES)
        if r.random() < 0.2:
            dtype = r.choice(DTYPES)
        calls += [self.call(dtype, shape), "AGAIN", self.call(dtype, shape)]
        pokes = [r.choice(POKES) if r.random() < 0.8 else None for _ in calls]
        pokes[-1] = None
        body: list[str] = []
        names = ["x", "y"]
        for _ in range(max_stmts * 4):
            if len([ln for ln in body if not ln.startswith("     ")]) >= max_stmts:
                break
            lines, new = self.statement(names, len(names))
            ok = _runs(ViewProgram(body + lines, "out", calls, pokes))
            if ok is None or (not ok and r.random() >= 0.15):
                continue
            body += lines
            if new:
                names.append(new)
            if not ok:
                break
        made = [n for n in names if n.startswith("v")] or ["x"]
        ret = ", ".join(r.sample(made, min(len(made), r.randint(1, 2))))
        ret = r.choice([ret, f"{ret}, out", "out"]) if r.random() < 0.5 else ret
        return ViewProgram(body, ret, calls, pokes, r.choice([None, None, True]))


def _runs(prog: ViewProgram) -> bool | None:
    """Whether ``prog`` runs plainly on every call; None when it is no program (a drawing
    error)."""
    try:
        fn = prog.build()
    except SyntaxError:
        return None
    ok, args = True, None
    for j in range(len(prog.calls)):
        try:
            args = prog.args(j, args)
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                res = fn(*args)
        except (NameError, UnboundLocalError, SyntaxError):
            return None
        except Exception:          # noqa: BLE001 - a candidate that raises
            ok = False
            continue
        if _too_big(res):
            return None
        if prog.pokes[j]:
            poke(prog.pokes[j], res, args)
    return ok


def check(prog: ViewProgram, backends=("eager", "cpp"), time_limit: float = TIME_LIMIT) -> None:
    runner.check(prog, backends, time_limit, _check_backend)


def _check_backend(prog: ViewProgram, backend: str) -> None:
    ref = prog.build()
    compiled = kiln.compile(prog.build(), backend=backend, dynamic=prog.dynamic)
    ref_args = kiln_args = None
    held_ref, held_kiln = [], []
    for j in range(len(prog.calls)):
        ref_args, kiln_args = prog.args(j, ref_args), prog.args(j, kiln_args)
        where = f"call {j} (dynamic={prog.dynamic})"
        exp, got = compare_call(ref, compiled, ref_args, kiln_args, where, "1")
        if exp[0] == "ok":
            if _alias_pattern(got[1], kiln_args) != _alias_pattern(exp[1], ref_args):
                raise Mismatch(f"{where}: outputs alias arguments differently")
            if facts(got[1], kiln_args) != facts(exp[1], ref_args):
                raise Mismatch(f"{where}: result flags/base/strides {facts(got[1], kiln_args)} != NumPy's "
                               f"{facts(exp[1], ref_args)}")
            held_ref.append(exp[1])
            held_kiln.append(got[1])
            if prog.pokes[j]:
                pe, pg = poke(prog.pokes[j], exp[1], ref_args), poke(prog.pokes[j], got[1], kiln_args)
                if pe != pg:
                    raise Mismatch(f"{where}: the caller's `{prog.pokes[j]}` gave {pg} where NumPy's result gave {pe}")
        _exact(held_kiln, held_ref, f"{where}: results held from calls so far")
        _exact(list(kiln_args), list(ref_args), f"{where}: arguments after the poke")
        if _alias_pattern(held_kiln, kiln_args) != _alias_pattern(held_ref, ref_args):
            raise Mismatch(f"{where}: held results alias the arguments differently")


def check_seed(seed: int, backends=("eager", "cpp")) -> ViewProgram:
    prog = ViewGen(seed).program()
    check(prog, backends)
    return prog


def minimize(prog: ViewProgram, backends=("eager", "cpp")) -> ViewProgram:
    """Drop body statements, pokes and trailing calls while the program still fails."""

    def fails(p: ViewProgram) -> bool:
        return _runs(p) is not None and runner.fails(check, p, backends)

    def variants(p: ViewProgram):
        for a, b in statements(p.body):
            yield ViewProgram(p.body[:a] + p.body[b:], p.ret, p.calls, p.pokes, p.dynamic)
        for k, stmt in enumerate(p.pokes):
            if stmt:
                yield ViewProgram(p.body, p.ret, p.calls, [*p.pokes[:k], None, *p.pokes[k + 1:]], p.dynamic)
        for k in range(len(p.calls) - 1, 0, -1):
            yield ViewProgram(p.body, p.ret, p.calls[:k], p.pokes[:k], p.dynamic)
        if p.dynamic:
            yield ViewProgram(p.body, p.ret, p.calls, p.pokes, None)

    return runner.shrink(prog, variants, fails)


def main() -> int:
    """A long run (runner.long_run): KILN_FUZZ_VIEWS_SEED, KILN_FUZZ_VIEWS_PROGRAMS,
    KILN_FUZZ_VIEWS_BACKENDS (default eager,cpp)."""
    from .runner import long_run
    return long_run("views", check_seed, lambda seed, backends: minimize(ViewGen(seed).program(), backends).reproducer(),
                    "eager,cpp", every=20)


if __name__ == "__main__":
    sys.exit(main())
