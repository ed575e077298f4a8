"""A differential generator of gradients (stop 50): random float64 losses over broadcasting
arguments, differentiated by kiln.grad three ways and compared with central finite
differences.

A program takes one to three float64 arrays (shapes drawn from two sizes, with size-1
dimensions and 0-d arrays so they broadcast) and returns a scalar loss: the sum of every
local it made times fixed weights. Its statements are drawn from smooth ufuncs and
operators with Python scalars, broadcasting, views (slices with negative steps,
transposes, newaxis, reshape, broadcast_to), reductions (axis, keepdims, ``where=``,
``initial=``), ``np.where``/``np.clip``/``np.maximum`` (kinks), cumsum/diff, joins, matmul,
writes into a copy (``y[::2] = ...``, ``y[m] *= ...``, through a view), loops carrying
an array and loops writing the rows of a fresh array; some arguments are empty. Each
candidate runs under NumPy while it is drawn (kept only when finite, of moderate size and
warning-free), so a program always runs.

The oracle (tests/test_programs_grads.py ``check_gradient``): the value against NumPy,
and every argument's gradient against finite differences (rtol 1e-5, atol 1e-6), for
eager ``kiln.value_and_grad``, ``kiln.value_and_grad`` of ``kiln.compile(fn)`` and
``kiln.value_and_grad`` inside a compiled function, each called twice. A gradient the
finite differences do not agree on (eps 1e-6 and 1e-5, so a kink is near) is no finding.
Then the compiled ways run again with each argument in a drawn layout (Fortran, a
transpose, reversed, strided, read-only), and at three more sizes (a recompile, then
dynamic sizes, one dim and then both: symbolic shapes in the backward graph). The suite
runs none of its programs (each is several g++ builds); tests/test_fuzz_found.py holds
what it found.

    KILN_FUZZ_GRAD_SEED=1 KILN_FUZZ_GRAD_PROGRAMS=200 python -m tests.fuzz.grads
"""
from __future__ import annotations

import linecache
import os
import random
import sys
import traceback
import warnings

import numpy as np

import kiln
from kiln.autograd import numerical_grad

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from test_programs_grads import check_gradient  # noqa: E402

UNARY = ["np.sin({})", "np.cos({})", "np.tanh({})", "{} ** 2", "{} ** 3", "np.sqrt({0} * {0} + 1.0)",
         "np.log1p({0} * {0})", "np.arctan({})", "1.0 / (1.0 + {0} * {0})", "np.exp(np.tanh({}))",
         "np.abs({})", "-{}", "np.square({})", "np.sinh(np.tanh({}))", "np.expm1(np.sin({}))",
         "np.hypot({}, 0.5)", "np.clip({}, -0.5, 0.7)", "np.maximum({}, 0.1)", "np.fmin({}, 0.3)",
         "2.5 * {}", "{} - 1", "0.5 ** {}", "np.float64(1.5) * {}", "np.cbrt({0} * {0} + 1.0)",
         "np.logaddexp({}, 0.2)", "np.sign({}) * 2.0", "np.round({0}, 1) + {0}"]
BINARY = ["{} + {}", "{} - {}", "{} * {}", "{} / (1.0 + {} ** 2)", "np.maximum({}, {})",
          "np.minimum({}, {})", "np.hypot({}, {})", "np.arctan2({}, {} + 3.0)", "np.where({} > 0, {}, 0.0)",
          "np.where({1} > {0}, {0}, {1} * 2)", "np.clip({}, -0.4, {})", "np.logaddexp({}, {})",
          "np.fmax({}, {})", "np.copysign({}, {})", "{} ** 2 * {}", "np.multiply({}, {})"]
REDUCE = ["np.sum({}{})", "np.mean({}{})", "np.max({}{})", "np.min({}{})", "np.prod({}{})",
          "np.std({}{})", "np.var({}{})", "{}.sum({})", "np.linalg.norm({}{})",
          "np.amax({}{})", "np.cumsum({}{})", "np.cumprod({}{})", "np.diff({}{})",
          "np.ptp({}{})", "np.nansum({}{})", "np.average({}{})", "np.logaddexp.reduce({}{})"]


class Program:
    def __init__(self, seed: int, params: list[str], body: list[str], args: list[np.ndarray]):
        self.seed, self.params, self.body, self.args = seed, params, body, args

    def source(self, body=None) -> str:
        body = self.body if body is None else body
        lines = [ln for stmt in body for ln in stmt.split("\n")]
        names = [ln.split(" = ")[0] for ln in lines if " = " in ln and not ln.startswith(" ")]
        names = list(dict.fromkeys(n for n in names if n.isidentifier() and n.startswith("v")))
        loss = " + ".join(f"np.sum({'np.sin(' + n + ')' if i % 2 else n}) * {0.3 + 0.1 * i:.1f}"
                          for i, n in enumerate(names)) or "np.sum(x0) * 0.0"
        src = [f"def f({', '.join(self.params)}):"] + [f"    {ln}" for ln in lines] + [f"    return {loss}"]
        return "\n".join(src) + "\n"

    def build(self, body=None):
        src = self.source(body)
        filename = f"<kiln-fuzz-grad-{self.seed}-{abs(hash(src))}>"
        linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
        ns = {"np": np, "kiln": kiln}
        exec(compile(src, filename, "exec"), ns)
        return ns["f"]

    def reproducer(self, body=None) -> str:
        arrays = "\n".join(f"{p} = np.array({a.tolist()!r})" for p, a in zip(self.params, self.args))
        return (f"import numpy as np, kiln\n\n{self.source(body)}{arrays}\n"
                f"print(kiln.grad(kiln.compile(f), argnums={tuple(range(len(self.params)))})"
                f"({', '.join(self.params)}))")


# Argument shapes over two sizes ``a`` and ``b`` (each drawn: size-1 dims broadcast).
TEMPLATES = [("a", "b"), ("b",), (1, "b"), ("a", 1), (), ("a", "b"), (2, "a", "b"), ("b", "a"),
             (0, "b"), ("a", 0)]


def _shape(template: tuple, a: int, b: int) -> tuple:
    return tuple({"a": a, "b": b}.get(d, d) for d in template)


def _values(seed: int, shapes: list) -> list[np.ndarray]:
    nrng = np.random.default_rng(seed)
    return [np.asarray(np.round(nrng.uniform(-1.5, 1.5, s), 3) + 0.0011) for s in shapes]   # (0-d: arrays)


def _axis(rng: random.Random, ndim: int) -> str:
    if ndim == 0 or rng.random() < 0.3:
        return ""
    ax = rng.randrange(-ndim, ndim)
    extra = rng.choice(["", ", keepdims=True"])
    return f", axis={ax}{extra}"


class Gen:
    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.seed = seed

    def draw(self) -> Program:
        rng = self.rng
        a, b = rng.choice([1, 2, 3, 4]), rng.choice([1, 2, 3, 5])
        templates = [rng.choice(TEMPLATES) for _ in range(rng.randint(1, 3))]
        args = _values(self.seed, [_shape(t, a, b) for t in templates])
        params = [f"x{i}" for i in range(len(args))]
        env = dict(zip(params, args))
        body: list[str] = []
        for k in range(rng.randint(2, 7)):
            for _ in range(30):
                stmt = self.statement(env, k)
                trial = dict(env)
                if self.runs(stmt, trial):
                    body.append(stmt)
                    env = trial
                    break
        program = Program(self.seed, params, body, args)
        program.templates, program.sizes = templates, (a, b)
        return program

    def runs(self, stmt: str, env: dict) -> bool:
        before = set(env)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                with np.errstate(all="raise"):
                    exec("\n".join(stmt.split("\n")), {"np": np}, env)
        except Exception:
            return False
        for name, v in env.items():
            if name not in before or name.startswith("v"):
                a = np.asarray(v)
                if a.dtype != np.float64 or a.size > 200 or not np.all(np.isfinite(a)) or \
                        (a.size and np.max(np.abs(a)) > 1e3):
                    return False
        return True

    def pick(self, env: dict, nd=None) -> str:
        names = [n for n, v in env.items() if isinstance(v, np.ndarray) and (nd is None or v.ndim in nd)]
        return self.rng.choice(names) if names else self.rng.choice(list(env))

    def statement(self, env: dict, k: int) -> str:
        rng = self.rng
        a, b = self.pick(env), self.pick(env)
        name = f"v{k}"
        kind = rng.choice(["unary", "unary", "binary", "binary", "reduce", "view", "write", "loop",
                           "where", "join", "matmul", "rwhere", "inplace", "fresh"])
        if kind == "unary":
            return f"{name} = {rng.choice(UNARY).format(a)}"
        if kind == "binary":
            return f"{name} = {rng.choice(BINARY).format(a, b)}"
        if kind == "reduce":
            expr = rng.choice(REDUCE)
            ax = _axis(rng, np.ndim(env[a]))
            if "cum" in expr or "diff" in expr or "ptp" in expr or "average" in expr or ".reduce" in expr:
                ax = ax.replace(", keepdims=True", "")
            if expr.startswith("{}.sum"):
                ax = ax.lstrip(", ")
            return f"{name} = {expr.format(a, ax)}"
        if kind == "rwhere":   # reductions with where= / initial=
            ax = _axis(rng, np.ndim(env[a]))
            red = rng.choice(["np.sum", "np.max", "np.min", "np.prod", "np.mean"])
            extra = rng.choice([f", where={a} > 0", f", where={a} < 0.5",
                                ", initial=0.5" if red != "np.mean" else "", f", where={a} > -1"])
            if red in ("np.max", "np.min") and "where" in extra:
                extra += ", initial=" + ("-5.0" if red == "np.max" else "5.0")
            return f"{name} = {red}({a}{ax}{extra})"
        if kind == "view":
            nd = np.ndim(env[a])
            views = {0: [f"{a}[None]", f"{a}[()]", f"np.broadcast_to({a}, (2, 3))"],
                     1: [f"{a}[::-1]", f"{a}[1:]", f"{a}[::2]", f"{a}[:, None]", f"{a}[None, ::-1]",
                         f"{a}.reshape(-1, 1)", f"np.broadcast_to({a}, (3,) + {a}.shape)", f"{a}[-1]",
                         f"{a}[{a} > 0]", f"{a}[[0, -1, 0]]"],
                     2: [f"{a}.T", f"{a}[::-1, 1:]", f"{a}[:, ::-2]", f"{a}[0]", f"{a}.reshape(-1)",
                         f"{a}[..., None]", f"{a}.ravel()[::-1]", f"np.swapaxes({a}, 0, 1)[1:]",
                         f"{a}[{a} > 0]", f"{a}[:, 0]", f"{a}.diagonal()", f"{a}[[1, 0, 1]]"],
                     3: [f"{a}[1]", f"{a}.transpose(2, 0, 1)", f"{a}[:, ::-1, 0]", f"{a}.sum(axis=0)"]}
            return f"{name} = {rng.choice(views[min(nd, 3)])}"
        if kind == "write":
            nd = np.ndim(env[a])
            src = rng.choice([f"np.sin({b})", f"{b} * 2", "0.5", f"{b}.mean()"])
            targets = {0: ["[...]"], 1: ["[::2]", "[1:]", "[0]", "[::-1]", f"[{name} > 0]", "[[0, -1]]"],
                       2: ["[0]", "[:, 1:]", "[::-1, 0]", f"[{name} > 0]", "[..., -1]", "[1:, ::2]"],
                       3: ["[0]", "[:, 0]"]}
            tgt = rng.choice(targets[min(nd, 3)])
            op = rng.choice(["=", "+=", "*=", "-="])
            if rng.random() < 0.3 and nd >= 1:   # a write through a view of the copy
                return (f"{name} = {a} * 1.0\n{name}_w = {name}[::-1]\n"
                        f"{name}_w{tgt.replace(name, name + '_w')} {op} {src}")
            return f"{name} = {a} * 1.0\n{name}{tgt} {op} {src}"
        if kind == "inplace":
            op = rng.choice(["+=", "*=", "-="])
            return f"{name} = {a} + 0.0\n{name} {op} np.tanh({b})"
        if kind == "loop":
            n = rng.randint(1, 4)
            body = rng.choice([f"{name} = {name} * 0.5 + np.sin({name}) * {b}.mean()",
                               f"{name} = np.tanh({name} + {b})",
                               f"{name} = {name} + 0.1 * (np.roll({name}, 1) - {name})",
                               f"{name}[...] = {name} * 0.9 + {b}.sum() * 0.01",
                               f"{name} = np.where({name} > 0, {name} * 0.5, {name} + i * 0.1)"])
            return f"{name} = {a} * 1.0\nfor i in range({n}):\n    {body}"
        if kind == "fresh":   # a loop writing rows of a fresh array (a recurrence)
            shp = np.shape(env[a])
            if not shp or shp[0] == 0:
                return (f"{name} = np.zeros((3,) + np.shape({a}))\nfor i in range(3):\n"
                        f"    {name}[i] = {a} * (i + 1)")
            return (f"{name} = np.zeros_like({a})\n{name}[0] = {a}[0]\nfor i in range(1, {a}.shape[0]):\n"
                    f"    {name}[i] = np.sin({name}[i - 1]) * {a}[i]")
        if kind == "where":
            c = self.pick(env)
            return f"{name} = np.where({c} > 0.2, {a}, np.cos({b}))"
        if kind == "join":
            if np.ndim(env[a]) == 0:
                return f"{name} = np.stack([{a}, {a} * 2])"
            return rng.choice([f"{name} = np.concatenate([{a}, {a} ** 2])",
                               f"{name} = np.stack([{a}, np.sin({a})], axis=-1)",
                               f"{name} = np.concatenate([{a}, {b}], axis=0)"])
        # matmul
        a2, b2 = self.pick(env, (1, 2)), self.pick(env, (1, 2))
        return rng.choice([f"{name} = {a2} @ {b2}", f"{name} = {a2} @ {a2}.T", f"{name} = np.dot({a2}, {b2})",
                           f"{name} = np.outer({a2}, {b2})", f"{name} = np.einsum('...i,...i', {a2}, {a2})"])


def _fd_agrees(fn, args, n) -> bool:
    """Finite differences at two step sizes agree (no kink within a step)."""
    g1 = numerical_grad(fn, [np.copy(a) for a in args], n, np.ones(()), 1e-6)
    g2 = numerical_grad(fn, [np.copy(a) for a in args], n, np.ones(()), 1e-5)
    return np.allclose(g1, g2, rtol=1e-6, atol=1e-7)


def check(program: Program, body=None) -> None:
    """Raise AssertionError (or the exception kiln raised) on a mismatch."""
    fn = program.build(body)
    argnums = tuple(range(len(program.args)))
    if not all(_fd_agrees(fn, program.args, n) for n in argnums):
        return
    for way in ("eager", "compiled_fn", "in_compiled"):
        try:
            check_gradient(fn, program.args, argnums=argnums, ways=(way,))
        except kiln.KilnError as err:
            # kiln.grad's documented limit: its eager tape cannot follow a Tensor written
            # into a NumPy array (``v = np.zeros(n); v[i] = t``); compiled, it can
            if LOST not in str(err) or way == "compiled_fn":
                raise
            return
    kinds = [random.Random(program.seed + n).choice(LAYOUTS) for n in argnums]
    check_layouts(program, fn, kinds)
    check_sizes(program, fn)


LOST = "a Tensor that carries the gradient became a plain NumPy array"
LAYOUTS = ("F", "T", "reversed", "strided", "readonly")


def _laid_out(a: np.ndarray, kind: str) -> np.ndarray:
    """``a``'s values in another memory layout (Fortran, a transpose, reversed, every other
    element of a larger array, read-only; a 0-d one stays C-ordered)."""
    if a.ndim == 0 and kind != "readonly":
        return a.copy()
    if kind == "F":
        return np.asfortranarray(a)
    if kind == "T":
        return np.ascontiguousarray(a.T).T
    if kind == "reversed":
        return np.ascontiguousarray(a[(slice(None, None, -1),) * a.ndim])[(slice(None, None, -1),) * a.ndim]
    if kind == "strided":
        big = np.zeros(tuple(2 * n for n in a.shape))
        view = big[(slice(None, None, 2),) * a.ndim]
        view[...] = a
        return view
    out = a.copy()
    out.flags.writeable = False
    return out


def _plain_runs(fn, args: list) -> bool:
    """Does the program run on these arguments under NumPy, warning-free, to a finite
    loss, with finite differences that agree?"""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with np.errstate(all="raise"):
                if not np.isfinite(fn(*[np.copy(a) for a in args])):
                    return False
    except Exception:
        return False
    return all(_fd_agrees(fn, args, n) for n in range(len(args)))


def check_sizes(program: Program, fn) -> None:
    """One compiled function called at the drawn sizes, then at three others (a
    recompile, then dynamic sizes, one dim and then both: symbolic shapes in the
    backward graph)."""
    argnums = tuple(range(len(program.args)))
    ways = {"compiled_fn": kiln.value_and_grad(kiln.compile(fn), argnums),
            "in_compiled": kiln.compile(lambda *a: kiln.value_and_grad(fn, argnums)(*a))}
    a, b = program.sizes
    for k, (a2, b2) in enumerate([(a, b), (a + 2, b), (a + 3, b), (a + 3, b + 2)]):
        args = _values(program.seed + 7 * k, [_shape(t, a2, b2) for t in program.templates])
        if k and not _plain_runs(fn, args):
            return
        want = [numerical_grad(fn, [np.copy(x) for x in args], n, np.ones(())) for n in argnums]
        for way, vg in ways.items():
            _, grads = vg(*[np.copy(x) for x in args])
            for n, g, w in zip(argnums, grads, want):
                assert g.shape == w.shape, (way, k, g.shape, w.shape)
                np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6,
                                           err_msg=f"{way} sizes {(a2, b2)} d/d arg {n}")


def check_layouts(program: Program, fn, kinds: list[str]) -> None:
    """The gradients of arguments in other layouts are those of C-ordered ones."""
    argnums = tuple(range(len(program.args)))
    want = [numerical_grad(fn, [np.copy(a) for a in program.args], n, np.ones(())) for n in argnums]
    ways = {"compiled_fn": kiln.value_and_grad(kiln.compile(fn), argnums),
            "in_compiled": kiln.compile(lambda *a: kiln.value_and_grad(fn, argnums)(*a))}
    for way, vg in ways.items():
        for call in range(2):
            args = [_laid_out(a, k) for a, k in zip(program.args, kinds)]
            _, grads = vg(*args)
            for n, g, w in zip(argnums, grads, want):
                assert g.shape == program.args[n].shape and g.dtype == np.float64, (way, kinds)
                np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6,
                                           err_msg=f"{way} call {call} layouts {kinds} d/d arg {n}")


def _fails(program: Program, body) -> bool:
    try:
        check(program, body)
    except Exception:
        return True
    return False


def minimize(program: Program) -> list[str]:
    body = list(program.body)
    changed = True
    while changed:
        changed = False
        for i in range(len(body)):
            trial = body[:i] + body[i + 1:]
            env = dict(zip(program.params, program.args))
            if all(Gen(0).runs(s, env) for s in trial) and _fails(program, trial):
                body, changed = trial, True
                break
    return body


def main() -> int:
    first = int(os.environ.get("KILN_FUZZ_GRAD_SEED", "1"))
    count = int(os.environ.get("KILN_FUZZ_GRAD_PROGRAMS", "100"))
    found = 0
    for seed in range(first, first + count):
        if seed % 20 == 0:
            print(f"... seed {seed}", flush=True)
        program = Gen(seed).draw()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                check(program)
        except Exception as err:
            found += 1
            body = minimize(program)
            print(f"=== seed {seed}: {type(err).__name__}: {str(err)[:600]}\n--- minimized ---\n"
                  f"{program.reproducer(body)}\n", flush=True)
            if os.environ.get("KILN_FUZZ_GRAD_TRACE"):
                traceback.print_exc()
    print(f"{count} programs, {found} failing", flush=True)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
