"""Random numbers: ``np.random.*`` (NumPy's global RandomState) and the methods of a
``np.random.Generator`` or ``RandomState`` object (``rng.normal(size=n)``).

Each distribution is one op whose kernel calls NumPy's own method on the generator, so a
compiled function consumes exactly the stream plain NumPy consumes: the same values for
the same seed, and the generator's state after the call is the one NumPy leaves. What
makes that hold is the op's ``state`` field (kiln/ops/opdef.py): a call that reads and
advances a generator is never merged with another (CSE), removed when its result is
unused (DCE), recomputed in a backward graph (the partitioner never recomputes externs),
or run twice: where a graph reruns as Python after it ran (a speculated dtype, an error
inside a ``with`` block, the op-by-op replay of writes on an error), the generators'
states are put back first (:func:`snapshot`), so the rerun draws the same numbers once.
Externs keep their order in the C++ wrapper, so draws run in program order.

The generator is a parameter: ``None`` is NumPy's global one (``np.random.seed`` sets
it), an object is the Generator the user's code called (a module's or an object's,
guarded by identity), a slot holds one made in the function (FreshGenerator) or passed in
as an argument (PassedGenerator: guarded by type, so a new Generator per call does not
recompile). Draws are not differentiable (``Differentiation rule
for 'random_normal' not implemented``: NumPy users write the reparameterization
``mu + sigma * np.random.standard_normal(n)``, whose gradient flows through ``mu`` and
``sigma`` as usual). A draw without ``size`` of scalar parameters is a Python ``float``
or ``int`` in NumPy (``np.random.normal()``): the graph computes a 0-d array and converts
it where it leaves the graph (a composite with ``python=``).

    >>> import numpy as np
    >>> from kiln.ops import F
    >>> np.random.seed(0); a = F.random_normal(0.0, 1.0, size=(2,))
    >>> np.random.seed(0); bool((a == np.random.normal(0.0, 1.0, size=2)).all())
    True
"""
from __future__ import annotations

import inspect
import threading
from typing import Any

import numpy as np

from .indexing import is_array_entry
from .meta import TensorMeta, fresh_copy, reject, shape_of
from .registry import Bound, Category, Composite, F, N, declare, spell, spell_composite
from .shape import shape_arg

# (name, distribution parameters, result kind, parameters that are vectors): the kind is
# 'f' (float64, or a ``dtype=`` the Generator method takes), 'i' (int64, or ``dtype=``),
# 'a' (the dtype of its first parameter: choice, permutation); a vector parameter
# (dirichlet's alpha, multinomial's pvals) adds its length as the last dim.
_DISTRIBUTIONS = [
    ("random_sample", (), "f"), ("random", (), "f"), ("standard_normal", (), "f"),
    ("standard_exponential", (), "f"), ("standard_cauchy", (), "f"),
    ("normal", ("loc", "scale"), "f"), ("uniform", ("low", "high"), "f"),
    ("exponential", ("scale",), "f"), ("gamma", ("shape", "scale"), "f"),
    ("standard_gamma", ("shape",), "f"), ("beta", ("a", "b"), "f"), ("chisquare", ("df",), "f"),
    ("f", ("dfnum", "dfden"), "f"), ("gumbel", ("loc", "scale"), "f"),
    ("laplace", ("loc", "scale"), "f"), ("logistic", ("loc", "scale"), "f"),
    ("lognormal", ("mean", "sigma"), "f"), ("noncentral_chisquare", ("df", "nonc"), "f"),
    ("noncentral_f", ("dfnum", "dfden", "nonc"), "f"), ("pareto", ("a",), "f"),
    ("power", ("a",), "f"), ("rayleigh", ("scale",), "f"), ("standard_t", ("df",), "f"),
    ("triangular", ("left", "mode", "right"), "f"), ("vonmises", ("mu", "kappa"), "f"),
    ("wald", ("mean", "scale"), "f"), ("weibull", ("a",), "f"),
    ("binomial", ("n", "p"), "i"), ("negative_binomial", ("n", "p"), "i"),
    ("poisson", ("lam",), "i"), ("geometric", ("p",), "i"),
    ("hypergeometric", ("ngood", "nbad", "nsample"), "i"), ("logseries", ("p",), "i"),
    ("zipf", ("a",), "i"), ("randint", ("low", "high"), "i"), ("integers", ("low", "high"), "i"),
    ("dirichlet", ("alpha",), "f", "alpha"), ("multinomial", ("n", "pvals"), "i", "pvals"),
    ("choice", ("a", "p"), "a"), ("permutation", ("x",), "a"),
]
# Parameters that stay static (part of the op's params, not inputs).
_STATIC = ("dtype", "replace", "endpoint", "axis", "shuffle", "method")
# RandomState's aliases and its forms taking dims as arguments: (spelling, op, dims as size).
_ALIASES = {"ranf": "random_sample", "sample": "random_sample", "rand": "random_sample",
            "randn": "standard_normal"}


def legacy() -> np.random.RandomState:
    """NumPy's global RandomState (what ``np.random.normal`` and ``np.random.seed`` use)."""
    return np.random.mtrand._rand


def _generator(params: dict) -> Any:
    gen = params.get("generator")
    if isinstance(gen, GeneratorSlot):
        return gen.current
    return legacy() if gen is None else gen


def snapshot(generators: Any) -> Any:
    """``restore()`` putting every generator's state back to what it is now.

        >>> rs = np.random.RandomState(1); put_back = snapshot([rs]); x = rs.random()
        >>> put_back(); rs.random() == x
        True
    """
    gens = [g.current if isinstance(g, GeneratorSlot) else g
            for g in generators]   # a slot: the generator it holds on this call
    states = [g.get_state(legacy=False) if isinstance(g, np.random.RandomState)
              else g.bit_generator.state for g in gens]

    def restore() -> None:
        for g, s in zip(gens, states):
            if isinstance(g, np.random.RandomState):
                g.set_state(s)
            else:
                g.bit_generator.state = s
    return restore


def generators_in(nodes: Any) -> list:
    """The generators whose state the calls among ``nodes`` read (each once): a slot
    (GeneratorSlot) stands for the generator it holds when read."""
    found: dict[int, Any] = {}
    for n in nodes:
        if n.kind == "call" and n.target.state is not None:
            gen = n.kwargs.get("generator")
            if not isinstance(gen, GeneratorSlot):
                gen = n.target.state(n.kwargs)
            found.setdefault(id(gen), gen)
    return list(found.values())


def passed_generators(nodes: Any) -> list:
    """The PassedGenerator slots the calls among ``nodes`` draw from (each once)."""
    found: dict[int, Any] = {}
    for n in nodes:
        gen = n.kwargs.get("generator") if n.kind == "call" else None
        if isinstance(gen, PassedGenerator):
            found.setdefault(id(gen), gen)
    return list(found.values())


# -- the ops ---------------------------------------------------------------------------------

def _static_kwargs(static: tuple, kept: dict = {}) -> dict:  # noqa: B006 (the cache)
    """A draw's static parameters as its method's keywords, made once per ``static`` (a
    4-element draw's kernel spent more on dicts than NumPy's own call takes). Not to be
    changed: callers copy it where they add to it."""
    try:
        return kept[static]
    except KeyError:
        kw = kept[static] = dict(static)
        return kw
    except TypeError:   # an unhashable parameter: made for this call
        return dict(static)


def _kernel(method: str, names: tuple):
    sized = method != "permutation"

    def impl(*inputs: Any, size: Any, static: tuple, generator: Any) -> Any:
        gen = generator.current if isinstance(generator, GeneratorSlot) else \
            legacy() if generator is None else generator
        draw = getattr(gen, method)
        kwargs = _static_kwargs(static)
        if inputs:
            kwargs = {**kwargs, **dict(zip(names, inputs))}
        # (NumPy's Python scalar as a 0-d array: see the spelling)
        return np.asarray(draw(size=size, **kwargs) if sized else draw(**kwargs))
    return impl


def _dtype(kind: str, static: dict, first: Any) -> np.dtype:
    if kind == "a":
        return np.dtype(np.int64) if not is_array_entry(first) else np.dtype(first.dtype)
    default = np.float64 if kind == "f" else np.int64
    return np.dtype(static.get("dtype", default))


def _meta_rule(method: str, kind: str, vector: str | None, names: tuple):
    def meta(*inputs: Any, size: Any, static: tuple, generator: Any) -> TensorMeta:
        static_d = dict(static)
        first = inputs[0] if inputs else None
        if method == "permutation":
            shape = tuple(shape_of(first)) if is_array_entry(first) else (int(first),)
            if not shape:
                raise IndexError("x must be an integer or at least 1-dimensional")
            return TensorMeta(shape, _dtype(kind, static_d, first))
        if method == "choice":
            return TensorMeta(() if size is None else tuple(size), _dtype(kind, static_d, first))
        tail = ()
        if vector is not None:
            tail = tuple(shape_of(inputs[names.index(vector)]))[-1:]
            shape = () if size is None else tuple(size)
        elif size is not None:
            shape = tuple(size)
        else:   # NumPy broadcasts the parameters (and raises its own error if it cannot)
            shape = np.broadcast_shapes(*[tuple(shape_of(v)) for v in inputs if v is not None])
        return TensorMeta(shape + tail, _dtype(kind, static_d, first))
    return meta


def _float_draw_raises(name: str, names: tuple):
    """A float draw raises only for parameters NumPy rejects (``scale < 0``): numbers
    known at capture are checked once, on a scratch generator; arrays may hold anything.
    (A graph that cannot raise needs no snapshot of its generators' states for a rerun:
    kiln/api.py, kiln/aot/runtime.py; MT19937's costs ~230 us.)"""
    def raises_for(*inputs: Any) -> bool:
        if not all(type(v) in (int, float, bool) for v in inputs):
            return True
        try:
            getattr(np.random.RandomState(0), name)(**dict(zip(names, inputs)), size=1)
        except Exception:
            return True
        return False
    return raises_for


def _choice_raises(a: Any, p: Any, size: Any, static: tuple, generator: Any) -> bool:
    """``choice`` raises only for a population and sizes NumPy rejects (an empty one, more
    draws than items without replacement, a negative size), all fixed once ``a`` is a
    constant or an array of static shape and ``size`` a param: the count checked here,
    the rest tried once on a scratch generator of the same kind, drawing one item (or
    none) from a population of a's dims cut to 1. A ``p`` may not sum to 1, a run-time
    int ``a`` may be 0: those may raise.
    (A graph that cannot raise takes no snapshot of its generators' states per call.)"""
    meta, graph = getattr(a, "val", a), getattr(a, "graph", None)
    if p is not None or graph is not None and (not isinstance(meta, TensorMeta) or any(
            n.meta.get("dynamic_dims") for n in graph.placeholders)):
        return True
    dims = () if size is None else size
    if not isinstance(dims, tuple) or not all(type(d) is int and d >= 0 for d in dims):
        return True
    kw = dict(static)
    kind = generator.spelling_type if isinstance(generator, GeneratorSlot) else \
        type(legacy() if generator is None else generator)
    scratch = np.random.default_rng(0) if issubclass(kind, np.random.Generator) else np.random.RandomState(0)
    count = int(np.prod(dims))
    if not kw.get("replace", True):   # more draws than items raise; the rest as with replacement
        shape = tuple(meta.shape) if hasattr(meta, "shape") else None   # (else an int)
        axis = kw.get("axis", 0)
        if shape == () or type(axis) is not int or shape is not None and not -len(shape) <= axis < len(shape):
            return True
        if count > (shape[axis] if shape is not None else meta):
            return True
        kw["replace"] = True
    size = 1 if count else dims   # (the trial draws one item, or none)
    # (an array of a's dims and dtype, each dim 1 or 0: as empty as a, and as small as can be)
    population = np.zeros(tuple(min(d, 1) for d in meta.shape), meta.dtype) \
        if hasattr(meta, "shape") else meta
    try:
        scratch.choice(population, size=size, **kw)
    except Exception:   # noqa: BLE001 - whatever NumPy raises, the op may
        return True
    return False


OPS: dict[str, Any] = {}
for _name, _inputs, _kind, *_vector in _DISTRIBUTIONS:
    _checked = _kind == "f" and not _vector
    OPS[_name] = declare(
        f"random_{_name}", Category.EXTERN, _kernel(_name, _inputs), inputs=_inputs,
        params={"size": None, "static": (), "generator": None},
        meta=_meta_rule(_name, _kind, _vector[0] if _vector else None, _inputs),
        may_raise=not _checked, state=_generator, fresh_result=True,
        doc=f"{_name} draws from a random generator (None: NumPy's global one): NumPy's own method")
    if _checked:
        OPS[_name].raises_for = _float_draw_raises(_name, _inputs)
OPS["choice"].may_raise, OPS["choice"].raises_for = False, _choice_raises
OPS["choice"].raises_for_params = True


def _seed_impl(seed: Any, generator: Any) -> Any:
    _generator({"generator": generator}).seed(seed)
    return np.zeros((), np.bool_)   # nothing reads it; the call stays for its effect


random_seed = declare("random_seed", Category.EXTERN, _seed_impl, inputs=("seed",),
                      params={"generator": None}, meta=lambda seed, generator: TensorMeta((), np.bool_),
                      may_raise=True, state=_generator, doc="np.random.seed(seed): sets the state")


def _shuffled_impl(x: Any, static: tuple, generator: Any) -> Any:
    out = fresh_copy(x)
    _generator({"generator": generator}).shuffle(out, **dict(static))
    return out


# np.random.shuffle(x) is copyto(x, shuffled(x)): the functional form draws what the
# in-place shuffle draws (it shuffles a copy), so the arguments end up as NumPy leaves them.
shuffled = declare("random_shuffled", Category.EXTERN, _shuffled_impl, inputs=("x",),
                   params={"static": (), "generator": None},
                   meta=lambda x, static, generator: TensorMeta(tuple(shape_of(x)), x.dtype),
                   may_raise=True, state=_generator, fresh_result=True,
                   doc="a shuffled copy of x, as rng.shuffle(x) would leave it")


# -- spellings -------------------------------------------------------------------------------

def _scalar_type(method: str, kind: str, static: dict, first: Any) -> Any:
    """What NumPy returns for a draw without ``size`` of scalar parameters: a Python type,
    or "numpy" for a NumPy scalar of the result's dtype."""
    if kind == "a":
        return "numpy" if is_array_entry(first) else int   # choice(array): an element
    if kind == "f":
        return float
    if method == "integers" or (method == "randint" and static.get("dtype", int) not in (int, bool)):
        return "numpy"
    return bool if static.get("dtype") is bool else int


def _as_input(value: Any) -> Any:
    if value is None or is_array_entry(value) or isinstance(value, (bool, int, float, np.generic)):
        return value
    return np.asarray(value)


def _normalizer(method: str, names: tuple, kind: str, cls: type, text: str, dims_as_size: bool):
    op = OPS[method]
    sig = inspect.signature(getattr(cls, method))

    def normalize(generator: Any, *args: Any, **kwargs: Any) -> Any:
        if dims_as_size:   # np.random.rand(3, 4)
            if kwargs:
                raise TypeError(f"{text.rsplit('.', 1)[-1]}() got an unexpected keyword argument "
                                f"'{next(iter(kwargs))}'")
            bound = {"size": shape_arg(args) if args else None}
        else:
            ba = sig.bind(None, *args, **kwargs)
            ba.apply_defaults()
            bound = dict(ba.arguments)
            bound.pop("self")
        if bound.pop("out", None) is not None:
            reject(text, "out", "<array>", "assign the result instead")
        if bound.get("check_valid", "warn") != "warn" or "tol" in bound:
            reject(text, "check_valid", bound.get("check_valid"), "drop it")
        size = bound.pop("size", None)
        size = None if size is None else shape_arg(size)
        inputs = tuple(_as_input(bound.pop(n, None)) for n in names)
        if method == "choice" and is_array_entry(inputs[0]) and len(shape_of(inputs[0])) != 1 \
                and bound.get("axis", 0) != 0:
            reject(text, "axis", bound.get("axis"), "kiln draws along the first axis only")
        static = tuple(sorted((k, v) for k, v in bound.items() if k in _STATIC))
        extra = [k for k in bound if k not in _STATIC]
        if extra:
            reject(text, extra[0], bound[extra[0]], "not modelled by kiln")
        params = {"size": size, "static": static, "generator": generator}
        python = _scalar_type(method, kind, dict(static), inputs[0] if inputs else None) \
            if size is None and method != "permutation" and method not in ("dirichlet", "multinomial") \
            and (method == "choice" or all(v is None or len(shape_of(v)) == 0 for v in inputs)) \
            else None
        if python == "numpy":   # x[()] of the 0-d result: NumPy's scalar
            return Composite(lambda *ins, **ps: N.getitem(op(*ins, **ps), ()), inputs, params,
                             passes_scalars=True)
        if python is not None:
            return Composite(lambda *ins, **ps: op(*ins, **ps), inputs, params, python=python,
                             passes_scalars=True)
        return Bound(op, inputs, params)
    return normalize


def _shuffle_in_place(x: Any, static: tuple, generator: Any) -> None:
    N.copyto(x, F.random_shuffled(x, static=static, generator=generator))


def _shuffle_normalizer(cls: type, text: str):
    sig = inspect.signature(getattr(cls, "shuffle"))

    def normalize(generator: Any, *args: Any, **kwargs: Any) -> Composite:
        ba = sig.bind(None, *args, **kwargs)
        x = ba.arguments["x"]
        if not is_array_entry(x):
            reject(text, "x", type(x).__name__, "kiln shuffles arrays only")
        static = tuple((k, v) for k, v in ba.arguments.items() if k == "axis")
        return Composite(_shuffle_in_place, (x,), {"static": static, "generator": generator})
    return normalize


def _seed_normalize(seed: Any = None) -> Composite:
    if not (seed is None or isinstance(seed, (int, np.integer)) or is_array_entry(seed)):
        seed = np.asarray(seed)

    def run(seed: Any) -> None:
        F.random_seed(seed, generator=None)
    return Composite(run, (seed,), {}, passes_scalars=True)


def method_spelling_key(cls: type, name: str) -> tuple:
    """The spelling key of a generator's method: ``("random", "Generator", "normal")``."""
    return ("random", cls.__name__, name)


def _spell_class(cls: type, names: set) -> None:
    for name, inputs, kind, *_ in _DISTRIBUTIONS:
        if name in names:
            text = f"numpy.random.{cls.__name__}.{name}"
            spell(method_spelling_key(cls, name), OPS[name],
                  _normalizer(name, inputs, kind, cls, text, False), text)
    for alias, target in _ALIASES.items():   # RandomState.rand(2, 3), .randn, .ranf, .sample
        if alias in names:
            entry = next(d for d in _DISTRIBUTIONS if d[0] == target)
            text = f"numpy.random.{cls.__name__}.{alias}"
            spell(method_spelling_key(cls, alias), OPS[target],
                  _normalizer(target, entry[1], entry[2], cls, text, alias in ("rand", "randn")), text)
    spell_composite(method_spelling_key(cls, "shuffle"), ("random_shuffled", "copyto"),
                    _shuffle_normalizer(cls, f"numpy.random.{cls.__name__}.shuffle"),
                    f"numpy.random.{cls.__name__}.shuffle")


_RS = {n for n in dir(np.random.RandomState) if not n.startswith("_")}
_GEN = {n for n in dir(np.random.Generator) if not n.startswith("_")}
_spell_class(np.random.RandomState, _RS)
_spell_class(np.random.Generator, _GEN)


def _global(name: str, target: str, dims_as_size: bool) -> None:
    """``np.random.<name>``: the global RandomState's method, spelled as a function."""
    entry = next(d for d in _DISTRIBUTIONS if d[0] == target)
    norm = _normalizer(target, entry[1], entry[2], np.random.RandomState, f"numpy.random.{name}",
                       dims_as_size)
    spell(getattr(np.random, name), OPS[target], lambda *a, **k: norm(None, *a, **k),
          f"numpy.random.{name}")


for _name, _target in _ALIASES.items():
    if hasattr(np.random, _name):
        _global(_name, _target, _name in ("rand", "randn"))
for _name in sorted(_RS):
    if any(d[0] == _name for d in _DISTRIBUTIONS) and hasattr(np.random, _name):
        _global(_name, _name, False)
spell_composite(np.random.shuffle, ("random_shuffled", "copyto"),
                lambda *a, **k: _shuffle_normalizer(np.random.RandomState, "numpy.random.shuffle")(None, *a, **k),
                "numpy.random.shuffle")
spell_composite(np.random.seed, ("random_seed",), _seed_normalize, "numpy.random.seed")


# -- generators made inside the compiled function ----------------------------------------------
# ``rng = np.random.default_rng(seed)`` (or ``np.random.RandomState(seed)``) in the function
# makes a new generator on every call. The graph names a FreshGenerator instead (one per
# captured call site): the op ``random_fresh_generator`` puts a new generator made from
# the seed in it when the call reaches that line, and the draws after it read that one
# (``_generator``). The generator lives in a thread-local slot, so concurrent calls do not
# share a stream; capture keeps it inside the graph (a generator that would leave it,
# returned or alive at a graph break, is not captured: the function runs as Python there).

class GeneratorSlot:
    """Where a graph's draws find a generator that is not the same object on every call:
    ``current``, this thread's (a call's draws run on its thread)."""

    spelling_type: type = np.random.Generator

    def __init__(self) -> None:
        self._slot = threading.local()


class FreshGenerator(GeneratorSlot):
    """Where the generator made by ``np.random.default_rng`` or ``np.random.RandomState``
    in a compiled function lives while the graph runs."""

    def __init__(self, maker: Any = np.random.default_rng) -> None:
        super().__init__()
        self.maker = maker
        self.spelling_type = np.random.RandomState if maker is np.random.RandomState \
            else np.random.Generator

    @property
    def current(self) -> Any:
        gen = getattr(self._slot, "gen", None)
        if gen is None:   # not made yet on this thread (a snapshot before the first call)
            gen = self._slot.gen = self.maker(0)
        return gen

    def reset(self, seed: Any) -> None:
        self._slot.gen = self.maker(seed)

    def __repr__(self) -> str:
        return f"<the {self.spelling_type.__name__} made in a compiled function>"


def _fresh_generator_impl(seed: Any, generator: Any) -> Any:
    generator.reset(None if seed is None else (int(seed) if np.ndim(seed) == 0 else np.asarray(seed)))
    return np.zeros((), np.bool_)   # nothing reads it; the call stays for its effect


random_fresh_generator = declare(
    "random_fresh_generator", Category.EXTERN, _fresh_generator_impl, inputs=("seed",),
    params={"generator": None}, meta=lambda seed, generator: TensorMeta((), np.bool_),
    may_raise=True, state=lambda params: params["generator"].current,
    doc="rng = np.random.default_rng(seed) (or RandomState(seed)) inside a compiled function: "
        "a new generator in the FreshGenerator the later draws name")


def _fresh_generator_normalize(generator: Any, seed: Any = None) -> Composite:
    name = f"numpy.random.{getattr(generator.maker, '__name__', 'default_rng')}"
    if not (seed is None or isinstance(seed, (int, np.integer)) or is_array_entry(seed)):
        reject(name, "seed", type(seed).__name__,
               "pass an int (or None), or make the generator outside and pass it in")

    def run(seed: Any) -> None:
        F.random_fresh_generator(seed, generator=generator)
    return Composite(run, (seed,), {}, passes_scalars=True)


FRESH_GENERATOR_KEY = ("random", "fresh", "generator")
spell_composite(FRESH_GENERATOR_KEY, ("random_fresh_generator",), _fresh_generator_normalize,
                "numpy.random.default_rng")


# -- generators passed in as arguments ---------------------------------------------------------
# ``def step(x, rng): x + rng.standard_normal(x.shape)``: the caller's generator is often a
# new object on every call (``default_rng(seed)``), so the graph does not name it. It names
# a PassedGenerator slot instead (one per argument that is drawn from), guarded by the
# argument's type and its bit generator's type, never by identity or state; the entry
# puts the call's argument in the slot before the graph runs (kiln/entries.py graph_call),
# and the draws read it there (``_generator``), in program order, with NumPy's own methods.

class PassedGenerator(GeneratorSlot):
    """Where a Generator or RandomState passed in as an argument lives while the graph
    runs; ``code`` is the entry's expression for the argument, ``text`` the user's name."""

    def __init__(self, spelling_type: type, code: str, text: str) -> None:
        super().__init__()
        self.spelling_type = spelling_type
        self.code = code
        self.text = text

    @property
    def current(self) -> Any:
        gen = getattr(self._slot, "gen", None)
        if gen is None:
            raise RuntimeError(f"{self!r} was read before the entry bound it")
        return gen

    def bind(self, gen: Any) -> None:
        self._slot.gen = gen

    def __repr__(self) -> str:
        return f"<the {self.spelling_type.__name__} passed in as {self.text}>"


def bit_generator_attr(gen: Any) -> str:
    """The attribute holding ``gen``'s bit generator (guarded by type, not state)."""
    return "_bit_generator" if isinstance(gen, np.random.RandomState) else "bit_generator"
