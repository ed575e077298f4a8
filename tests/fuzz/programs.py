"""Random NumPy programs, written as Python source, for the program fuzzer.

A :class:`Program` is the text of a module (helper functions, then ``def prog(...)``) and
the code of each call's arguments. It is built by hypothesis one statement at a time:
every candidate statement is run with plain NumPy on the arguments of every call (and,
for each ``if`` on data, with both arms forced), and kept only when it runs, so most
programs do real work instead of failing on their first line. A few candidates that
raise are kept on purpose (as the last statement): kiln must raise NumPy's exception.

Which programs are valid is decided by NumPy here; whether kiln agrees with NumPy is the
test's business (runner.py), so nothing in this file can hide a kiln bug.

Decisions are hypothesis draws with the simplest choice first, so a failing program
shrinks to few, short statements; array values come from a NumPy generator seeded by one
draw, and print as literals in the reproducer.
"""
from __future__ import annotations

import contextlib
import io
import math
import os
import re
import signal
import threading
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
from hypothesis import strategies as st

import kiln

from .repeats import Repeats, instrument

DTYPES = ("float64", "float32", "int64", "int32", "bool", "uint8")
# drawn less often (an argument's dtype one time in five, a cast's one in four): narrow
# integers that wrap, half floats, complex numbers
MORE_DTYPES = ("int8", "float16", "complex128", "int16", "uint16", "complex64", "uint32", "uint64")
FLOAT = ("float64", "float32")
# Long runs can weight some expression and statement kinds (exprs.py ``_e_<kind>``,
# stmts.py/more.py ``_s_<kind>``): KILN_FUZZ_FOCUS=gather,scatter,promote draws each
# named kind four times as often (docs/fuzzing.md).
FOCUS = [k for k in os.environ.get("KILN_FUZZ_FOCUS", "").split(",") if k]
MAX_SIZE = 256            # elements in any value a candidate makes (kernels stay tiny)
MAX_NDIM = 4


# ----------------------------------------------------------------------------- the program

# A candidate statement is run while it is generated; one that runs this long (a while
# loop whose body rebinds its own counter: ``while k < 2: k = x.cumsum() ...``) is an
# invalid candidate, not a hang of the generator (seed 5002 hung it for 40 minutes).
CANDIDATE_SECONDS = 10.0


class CandidateTimeout(Exception):
    """A candidate ran past CANDIDATE_SECONDS while the program was generated."""


@contextlib.contextmanager
def candidate_time_limit(seconds: float = CANDIDATE_SECONDS):
    """Raise CandidateTimeout in the main thread after ``seconds`` (unless a timer is
    already set: the runner's own time limit)."""
    if threading.current_thread() is not threading.main_thread() \
            or signal.getitimer(signal.ITIMER_REAL)[0] > 0:
        yield
        return

    def expire(signum, frame):
        raise CandidateTimeout(f"a candidate ran past {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@dataclass
class Program:
    params: list[str]
    helpers: list[str]              # source of helper functions (module level)
    body: list[str]                 # lines of prog's body (4-space indented, no return)
    ret: str                        # the return statement's expression ('' for none)
    calls: list[str]                # per call: code that binds ``args`` (a tuple)
    data_conds: list[str] = field(default_factory=list)   # ifs on data: __DATA<k>__ in body

    def source(self, probe: bool = False, variant: int = 0) -> str:
        """The module's text; a probe returns ``locals()`` and takes the arms of the ifs on
        data that the bits of ``variant`` say."""
        text = self._source(probe)
        for k, cond in enumerate(self.data_conds):
            text = text.replace(f"__DATA{k}__", ("True" if variant >> k & 1 else "False") if probe else cond)
        return text

    def _source(self, probe: bool) -> str:
        body = self.body
        if probe:       # an early return hands the probe the namespace it returns from
            body = [re.sub(r"^(\s+)return\b.*$", r"\1return locals()", ln) for ln in body]
        lines = [*self.helpers, f"def prog({', '.join(self.params)}):", *body]
        if probe:
            lines.append("    return locals()")
        elif self.ret:
            lines.append(f"    return {self.ret}")
        elif not self.body:
            lines.append("    pass")
        return "\n".join(lines) + "\n"

    def build(self) -> tuple[Callable, io.StringIO]:
        """A fresh ``prog`` function (its own globals, its own SINK for prints)."""
        return build_function(self.source())

    def args(self, n: int) -> tuple:
        """Fresh arguments for call ``n`` (new arrays each time)."""
        ns: dict = {"np": np}
        exec(self.calls[n], ns)
        return ns["args"]

    def reproducer(self) -> str:
        """A runnable script: the program compiled by kiln, called as the fuzzer called it."""
        calls = "\n".join(f"# call {n}\n{c}print(prog(*args))" for n, c in enumerate(self.calls))
        source = self.source().replace("def prog(", "@kiln.compile\ndef prog(")
        return f"import io\nimport numpy as np\nimport kiln\nSINK = io.StringIO()\n\n{source}\n{calls}\n"

    def __repr__(self) -> str:
        return "\n" + self.reproducer()


_FILENAMES = iter(range(1, 1 << 62))


def build_function(source: str) -> tuple[Callable, io.StringIO]:
    import linecache
    filename = f"<kiln-fuzz-{next(_FILENAMES)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    sink = io.StringIO()
    ns: dict = {"np": np, "kiln": kiln, "SINK": sink, "__name__": "kiln_fuzz"}
    exec(compile(source, filename, "exec"), ns)
    return ns["prog"], sink


# ----------------------------------------------------------------------------- literals

def lit(x: Any) -> str:
    """Python source for a scalar or nested list of scalars (nan/inf spelled via np)."""
    if isinstance(x, list):
        return "[" + ", ".join(lit(v) for v in x) + "]"
    if isinstance(x, complex):
        return f"complex({lit(x.real)}, {lit(x.imag)})"
    if isinstance(x, float):
        if math.isnan(x):
            return "np.nan"
        if math.isinf(x):
            return "np.inf" if x > 0 else "-np.inf"
    return repr(x)


def array_code(a: np.ndarray) -> str:
    if a.size == 0:
        return f"np.zeros({a.shape}, np.{a.dtype})"
    if a.dtype == np.float32:     # the shortest text that reads back as the same float32
        items = [lit(float(str(v))) if np.isfinite(v) else lit(float(v)) for v in a.reshape(-1)]
        return f"np.array({_nest(items, a.shape)}, np.float32)"
    return f"np.array({lit(a.tolist())}, np.{a.dtype})"


def _nest(items: list[str], shape: tuple) -> str:
    if not shape:
        return items[0]
    if len(shape) == 1:
        return "[" + ", ".join(items) + "]"
    step = len(items) // shape[0]
    return "[" + ", ".join(_nest(items[i * step:(i + 1) * step], shape[1:]) for i in range(shape[0])) + "]"


def sample(rng: np.random.Generator, shape: tuple, dtype: str, specials: bool) -> np.ndarray:
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype == "uint8":
        hi = 256 if rng.random() < 0.2 else 12
        return rng.integers(0, hi, shape).astype(np.uint8)
    if dtype in ("int32", "int64"):
        return rng.integers(-6, 7, shape).astype(dtype)
    if dtype in ("int8", "int16", "uint16", "uint32", "uint64"):     # sometimes near the ends of the range (wrap)
        info = np.iinfo(dtype)
        lo, hi = (int(info.min), int(info.max) + 1) if rng.random() < 0.3 else (0 if info.min == 0 else -6, 12)
        return rng.integers(lo, hi, shape, dtype=dtype) if dtype in ("uint32", "uint64") else \
            rng.integers(lo, hi, shape).astype(dtype)
    if dtype in ("complex64", "complex128"):
        part = "float32" if dtype == "complex64" else "float64"
        re_, im = sample(rng, shape, part, False), sample(rng, shape, part, False)   # (no inf: C++ and NumPy complex inf arithmetic differ by platform)
        return (re_ + 1j * im.astype(np.float64)).astype(dtype) if re_.size else np.zeros(shape, dtype)
    if rng.random() < 0.7:
        values = rng.integers(-16, 17, shape) / 4.0          # exact in binary: short literals
    else:
        values = np.round(rng.uniform(-3, 3, shape), 3)
    if specials and values.size:
        flat = values.reshape(-1)
        picks = rng.integers(0, flat.size, max(1, flat.size // 5))
        flat[picks] = rng.choice(np.array([np.nan, np.inf, -np.inf, -0.0, 0.0]), picks.size)
    return values.astype(dtype)


# ----------------------------------------------------------------------------- values seen by the generator

def signature(v: Any) -> tuple:
    """What must agree across every run for a name to be usable afterwards."""
    if isinstance(v, np.ndarray):
        return ("array", v.dtype.str, v.ndim)
    if isinstance(v, np.generic):
        return ("npscalar", v.dtype.str)
    if isinstance(v, (list, tuple)):
        return (type(v).__name__, len(v), tuple(signature(x) for x in v))
    if isinstance(v, dict):
        return ("dict", tuple(sorted(v)))
    return (type(v).__name__,)


@dataclass
class Expr:
    src: str
    vals: list          # one value per run (call x forced-branch variant)

    @property
    def v(self) -> Any:
        return self.vals[0]

    @property
    def is_array(self) -> bool:
        return isinstance(self.v, np.ndarray)

    @property
    def dtype(self) -> np.dtype:
        return np.asarray(self.v).dtype

    @property
    def kind(self) -> str:
        return self.dtype.kind

    @property
    def shapes(self) -> list[tuple]:
        return [np.shape(v) for v in self.vals]

    @property
    def ndim(self) -> int:
        return np.ndim(self.v)


def _ok_value(v: Any) -> bool:
    if isinstance(v, np.ndarray):
        return v.size <= MAX_SIZE and v.ndim <= MAX_NDIM
    if isinstance(v, (list, tuple)):
        return len(v) <= 8 and all(_ok_value(x) for x in v)
    return True


# ----------------------------------------------------------------------------- the generator

ATOM = 2                 # precedence levels for parenthesizing generated source


class Gen:
    """Draws one program. ``self.runs`` are the namespaces seen after the current
    statements, one per (call, forced-branch variant)."""

    def __init__(self, draw: Callable, max_stmts: int) -> None:
        self.draw = draw
        self.max_stmts = max_stmts
        self.rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1), label="seed"))
        self.n_names = 0
        self.n_helpers = 0
        self.helpers: list[str] = []
        self.body: list[str] = []
        self.data_conds: list[str] = []
        self.pending: list[str] = []     # lines of the block being drawn
        self.depth = 0
        self.globals: dict = {}
        self.unspecified = False      # the last probe met what NumPy leaves open (repeats.py)
        self.params: list[str] = []
        self.calls: list[str] = []
        self.ended = False           # a statement that raises was kept: nothing may follow
        self.expect_error = False    # the statement being drawn may raise (extra.py _s_raising)

    # -- draws (simplest first) ----------------------------------------------------------
    def pick(self, options: list | tuple, label: str = "") -> Any:
        return options[self.draw(st.integers(0, len(options) - 1), label=label or None)]

    def pick_kind(self, kinds: list[str], label: str) -> str:
        """One of ``kinds``, those named in KILN_FUZZ_FOCUS four times as likely."""
        return self.pick(kinds + [k for k in FOCUS if k in kinds] * 3, label)

    def pick_dtype(self, more: float = 0.2) -> str:
        """A dtype name: one of DTYPES, or with probability ``more`` one of MORE_DTYPES."""
        more = 0.6 if "dtypes" in FOCUS else more       # (KILN_FUZZ_FOCUS=dtypes)
        return self.pick(MORE_DTYPES, "more dtypes") if self.chance(more) else self.pick(DTYPES, "dtype")

    def chance(self, p: float) -> bool:
        """A draw that is False when shrunk; True with probability about ``p``."""
        return self.draw(st.integers(0, 19)) >= round(20 * (1 - p))   # small ranges draw ~uniformly

    def fresh(self, prefix: str = "v") -> str:
        self.n_names += 1
        return f"{prefix}{self.n_names}"

    # -- arguments -----------------------------------------------------------------------
    def make_args(self) -> None:
        dims = [0 if self.chance(0.08) else self.pick([3, 4, 2, 5, 1]) for _ in range(3)]
        n_calls = self.pick([2, 3, 1])
        specials = self.chance(0.2)
        n_arrays = self.pick([1, 2, 3])
        arrays = []
        for k in range(n_arrays):
            ndim = self.pick([2, 1, 3, 2, 1, 0])
            shape_dims = [self.pick([0, 1, 2, 'one']) for _ in range(ndim)]
            dtype = self.pick_dtype() if k == 0 or self.chance(0.6) else arrays[0][1]
            layout = self.pick(["C", "T", "step", "rev", "F", "bcast", "view0", "ro", "swap", "unal",
                                "win"]) if self.chance(0.5) else "C"
            if layout == "view0":      # a view of the first argument: arguments that overlap in memory
                layout = self._arg_view_index(len(arrays[0][0])) if arrays else "C"
            arrays.append((shape_dims, dtype, layout))
        scalars = []
        for _ in range(self.pick([0, 1, 2])):
            kind = self.pick(["float", "int", "np.float32", "np.int64", "bool", "np.float64", "0d", "more"])
            if kind == "more":       # (stop 46) NumPy scalars and 0-d arrays of the other dtypes
                kind = self.pick(["np.float16", "np.uint64", "np.int8", "np.complex64", "np.bool_", "0d_int32",
                                  "0d_float32", "0d_complex128", "np.uint8"])
            scalars.append(kind)
        extra = self.pick([None, "list", "dict"]) if self.chance(0.3) else None

        names = [f"x{k}" for k in range(n_arrays)] + [f"s{k}" for k in range(len(scalars))]
        if extra == "list":
            names.append("L")
        elif extra == "dict":
            names.append("state")
        self.params = names
        # call 1 repeats call 0's sizes (a cache hit); call 2 may change sizes (a recompile)
        sizes = [dims, dims, [d if self.chance(0.5) else self.pick([3, 2, 5, 1, 4]) for d in dims]]
        for n in range(n_calls):
            self.calls.append(self._call_code(arrays, scalars, extra, sizes[n], specials))

    def _call_code(self, arrays, scalars, extra, dims, specials) -> str:
        rng = self.rng
        lines, vals = [], []
        for k, (shape_dims, dtype, layout) in enumerate(arrays):
            shape = tuple(1 if d == "one" else dims[d] for d in shape_dims)
            if layout.startswith("x0["):
                vals.append(layout)
                continue
            code = self._layout_code(rng, shape, dtype, layout, specials)
            lines.append(f"x{k} = {code}")
            vals.append(f"x{k}")
        for k, kind in enumerate(scalars):
            if kind == "float":
                v = repr(float(rng.integers(-8, 9) / 4))
                if rng.random() < 0.15:   # Python floats where double arithmetic overflows,
                    v = str(rng.choice(["1e200", "-1e200", "-0.0", "5e-324", "1e-200"]))  # underflows
            elif kind == "int":
                v = repr(int(rng.integers(-3, 5)))
                if rng.random() < 0.1:    # past int64 once multiplied
                    v = str(rng.choice(["2 ** 62", "-(2 ** 62)", "2 ** 40"]))
            elif kind == "bool":
                v = repr(bool(rng.random() < 0.5))
            elif kind == "0d":
                v = f"np.array({float(rng.integers(-8, 9) / 4)!r})"
            elif kind.startswith("0d_"):
                dt = kind[3:]
                num = int(rng.integers(-3, 5)) if "int" in dt else float(rng.integers(-8, 9) / 4)
                v = f"np.array({complex(num, float(rng.integers(-2, 3))) if 'complex' in dt else num!r}, np.{dt})"
            elif kind == "np.bool_":
                v = f"np.bool_({bool(rng.random() < 0.5)!r})"
            elif kind == "np.complex64":
                v = f"np.complex64({complex(float(rng.integers(-8, 9) / 4), float(rng.integers(-2, 3)))!r})"
            elif kind in ("np.uint64", "np.uint8"):
                v = f"{kind}({int(rng.integers(0, 7))})"
            else:
                num = float(rng.integers(-8, 9) / 4) if "float" in kind else int(rng.integers(-3, 5))
                v = f"{kind}({num!r})"
            vals.append(v)
        if extra == "list":
            n = int(rng.integers(1, 4))
            dtype = arrays[0][1]
            shape = tuple(1 if d == "one" else dims[d] for d in arrays[0][0])
            vals.append("[" + ", ".join(array_code(sample(rng, shape, dtype, specials)) for _ in range(n)) + "]")
        elif extra == "dict":
            vals.append(f"{{'n': {int(rng.integers(0, 3))}, 'scale': {float(rng.integers(1, 9) / 4)!r}}}")
        lines.append(f"args = ({', '.join(vals)},)")
        return "\n".join(lines) + "\n"

    def _arg_view_index(self, ndim: int) -> str:
        if ndim == 0:
            return "x0[...]"
        index = self.pick(["::-1", "1:", "::2", "...", "0"]) if ndim == 1 else \
            self.pick(["::-1", "1:", "::2", "...", "0", ":, 1:", "::-1, ::2"])
        return f"x0[{index}]"

    def _layout_code(self, rng, shape, dtype, layout, specials) -> str:
        nd = len(shape)
        if layout == "T" and nd >= 2:
            return array_code(sample(rng, shape[::-1], dtype, specials)) + ".T"
        if layout == "F" and nd >= 2:
            return f"np.asfortranarray({array_code(sample(rng, shape, dtype, specials))})"
        if layout == "step" and nd >= 1:
            base = sample(rng, tuple(2 * d for d in shape), dtype, specials)
            return array_code(base) + "[" + ", ".join(["::2"] * nd) + "]"
        if layout == "rev" and nd >= 1:
            return array_code(sample(rng, shape, dtype, specials)) + "[::-1]"
        if layout == "bcast" and nd >= 1:
            base = sample(rng, (1,) + shape[1:], dtype, specials)
            return f"np.broadcast_to({array_code(base)}, {shape})"
        size, item = int(np.prod(shape)), np.dtype(dtype).itemsize
        if layout == "ro":         # read-only: a write raises NumPy's ValueError
            return f"np.lib.stride_tricks.as_strided({array_code(sample(rng, shape, dtype, specials))}, writeable=False)"
        if layout == "swap" and item > 1:   # byte-swapped ('>f8' on a little-endian machine)
            return f"np.asarray({array_code(sample(rng, shape, dtype, specials))}, np.dtype('{dtype}').newbyteorder())"
        if layout == "unal" and item > 1 and size:   # unaligned, writeable
            return (f"np.frombuffer(bytearray(bytes(1) + {array_code(sample(rng, shape, dtype, specials))}"
                    f".tobytes()), np.{dtype}, offset=1).reshape({shape})")
        if layout == "win" and nd >= 2 and size:   # writeable windows whose elements overlap:
            base = sample(rng, (sum(shape) - nd + 1,), dtype, specials)   # x[i, j] is base[i + j]
            return f"np.lib.stride_tricks.as_strided({array_code(base)}, {shape}, {(item,) * nd})"
        return array_code(sample(rng, shape, dtype, specials))

    # -- probing -------------------------------------------------------------------------
    def program(self, ret: str = "") -> Program:
        return Program(list(self.params), list(self.helpers), list(self.body), ret, list(self.calls),
                       list(self.data_conds))

    def data_cond(self, cond: str) -> str:
        """A placeholder for an if on data (probes force each arm in turn)."""
        self.data_conds.append(cond)
        return f"__DATA{len(self.data_conds) - 1}__"

    @property
    def data_ifs(self) -> int:
        return len(self.data_conds)

    def probe(self, body: list[str] | None = None) -> list[dict] | None:
        """Run the program so far under every call and branch variant; the namespaces at
        the end, or None when some run raises."""
        prog = Program(self.params, self.helpers, self.body if body is None else body, "", self.calls,
                       self.data_conds)
        runs = []
        self.unspecified = False
        for variant in range(1 << self.data_ifs):
            lines, bodies = instrument(prog.source(probe=True, variant=variant).splitlines())
            try:
                fn, _ = build_function("\n".join(lines) + "\n")
            except SyntaxError:
                return None
            self.globals = fn.__globals__
            for n in range(len(self.calls)):
                self.globals["__repeat__"] = repeats = Repeats(bodies)
                try:
                    with warnings.catch_warnings(), np.errstate(all="ignore"), \
                            candidate_time_limit():
                        warnings.simplefilter("ignore")
                        ns = fn(*prog.args(n))
                except Exception:       # noqa: BLE001 - an invalid candidate
                    return None
                if repeats.hit:         # a later pass meets what NumPy leaves open
                    self.unspecified = True
                    return None
                if not all(_ok_value(v) for v in ns.values()):
                    return None
                runs.append(ns)
        return runs

    def try_stmt(self, lines: list[str], runs: list[dict], allow_error: bool = True) -> list[dict] | None:
        """Append ``lines`` when the program still runs (or, rarely, keep a raising statement
        as the last one); the new namespaces, or None when rejected."""
        new = self.probe(self.body + lines)
        if new is not None:
            self.body += lines
            return new
        if allow_error and not self.unspecified and self.chance(0.6 if self.expect_error else 0.04):
            self.body += lines
            self.ended = True
        return None

    # -- environment ---------------------------------------------------------------------
    def names(self, runs: list[dict], pred: Callable[[Expr], bool] = lambda e: True) -> list[Expr]:
        out = []
        first = runs[0]
        for name in first:
            if name.startswith("_"):
                continue
            vals = [ns.get(name, _MISSING) for ns in runs]
            if any(v is _MISSING for v in vals):
                continue
            sig = signature(vals[0])
            if any(signature(v) != sig for v in vals):
                continue
            e = Expr(name, vals)
            if isinstance(vals[0], (np.ndarray, np.generic, int, float, bool, list, dict)) and pred(e):
                out.append(e)
        return out

    def eval(self, src: str, runs: list[dict]) -> Expr | None:
        vals = []
        try:
            code = compile(src, "<candidate>", "eval")
        except SyntaxError:
            return None
        for ns in runs:
            env = {**self.globals, **ns}
            try:
                with warnings.catch_warnings(), np.errstate(all="ignore"):
                    warnings.simplefilter("ignore")
                    v = eval(code, env)
            except Exception:        # noqa: BLE001 - an invalid candidate
                return None
            if not _ok_value(v):
                return None
            vals.append(v)
        sig = signature(vals[0])
        if any(signature(v) != sig for v in vals):
            return None
        return Expr(src, vals)


_MISSING = object()
