"""The operator registry's NumPy spellings: how a NumPy call finds its op.

What an op is (:class:`Op`, :class:`Category`), the table of declared ops (``REGISTRY``,
``declare``, ``get_op``) and ``F`` live in kiln/ops/opdef.py; they are re-exported here,
so ``from .registry import Category, F, declare, spell`` keeps working.

A :class:`Spelling` maps one NumPy way of writing an op (a callable, a method key, a ufunc
method key) to that op, or to a :class:`Composite` of ops; ``lookup``/``call_spelling``
find and run it, and ``N.<name>(...)`` runs ``np.<name>`` as kiln ops.
"""
from __future__ import annotations

import functools
import inspect
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ..errors import NoOpError
from .composite import Composite  # noqa: F401 (re-exported: spellings import it from here)
from .leaves import (_find_hook, ambient_hook, is_complex_like, is_float_like,  # noqa: F401 (re-exported)
                     is_runtime_number, iter_leaves, map_leaves)
from .opdef import (_NO_DEFAULT, REGISTRY, Category, F, Op,  # noqa: F401 (re-exported)
                    declare, fit_grad, get_op, register)

# ----------------------------------------------------------------------------------------
# The table of NumPy spellings that map to the ops.


@dataclass
class Bound:
    """A NumPy call normalized to an op call: ``op(*inputs, **params)``, then maybe ``out=``.

    ``post`` (optional) turns the op's result into what the NumPy spelling returns (for
    spellings like ``np.hsplit`` that are a composition); it is rarely needed.
    """
    op: Op
    inputs: tuple
    params: dict
    out: Any = None
    # The ndarray method NumPy's call was (``x.var()``) where that method warns from
    # Python code of its own: an extern of the op calls it from the user's line
    # (kiln/ops/value_warnings.py method_at), so its warnings point where NumPy's do.
    method: str | None = None
    # Its inputs hold numbers the normalizer worked out from the example's shapes
    # (np.fill_diagonal's positions, ``a.flat[::n + 1]``): capture guards the sizes of the
    # arrays it was given, which a dynamic dim would otherwise let change under them.
    sizes_read: bool = False

    @property
    def out_broadcasts(self) -> bool:
        """May ``out=`` be larger than the result (NumPy broadcasts a ufunc's result into
        it)? A reduction's, a scan's or another op's ``out=`` must have the result's shape
        (NumPy raises otherwise); :attr:`Composite.out_broadcasts` for a composite."""
        return self.op.category == Category.POINTWISE


@dataclass
class Spelling:
    """One NumPy way of writing an op: a callable, a method name or an operator.

    A composite spelling (``op`` None) normalizes to a :class:`Composite` of the ops
    named in ``uses``."""
    key: Any
    op: Op | None
    normalize: Callable[..., Any]
    text: str
    uses: tuple = ()
    builds_array: bool = False   # makes its array from a list itself (np.asarray's dtype rules)
    # NumPy makes an array of each item of its first argument (np.stack's asanyarray):
    # "all", or "strong" where a Python number among them stays weak (np.concatenate)
    array_items: str = ""

    def bind(self, *args: Any, **kwargs: Any) -> Bound:
        named = sorted(_positional_only(self.key) & kwargs.keys()) if kwargs else ()
        if named:   # np.where(c, x=a, y=b), np.concatenate(arrays=...): NumPy's TypeError
            raise TypeError(f"{self.text}() got some positional-only arguments passed as "
                            f"keyword arguments: {', '.join(named)!r}")
        return self.normalize(*args, **kwargs)

    def array_like_args(self) -> tuple[int, frozenset]:
        """How many leading positional arguments, and which keywords, NumPy makes arrays
        of first (a list of arrays is their stack: ``np.minimum.reduce([a, b, c])``):
        the operands of elementwise ops, reductions and scans (never ``out=``), and the
        first of NumPy's functions whose first parameter is ``a`` (``np.median(a)``),
        but for those that build it themselves (``builds_array``)."""
        if self.op is not None:
            if self.op.category in (Category.POINTWISE, Category.REDUCTION, Category.SCAN):
                return len(self.op.inputs), frozenset(("a", "where") + self.op.inputs)
            return 0, frozenset()
        if not self.builds_array and [p.name for p in _parameters(self.key)][:1] == ["a"]:
            return 1, frozenset(("a",))
        return 0, frozenset()


def _parameters(key: Any) -> tuple:
    """The installed NumPy's parameters of a function or ufunc spelling (none for methods,
    operators and builtins without a signature)."""
    try:
        return _parameters_of(key) if callable(key) else ()
    except TypeError:   # (an unhashable callable)
        return ()


@functools.cache
def _parameters_of(fn: Callable) -> tuple:
    try:
        return tuple(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return ()


def _positional_only(key: Any) -> frozenset:
    """The names of the positional-only parameters (``np.where(condition, x=None, y=None, /)``)."""
    return frozenset(p.name for p in _parameters(key) if p.kind is p.POSITIONAL_ONLY)


SPELLINGS: dict[Any, Spelling] = {}


def method_key(name: str) -> tuple[str, str]:
    """Key of an ndarray method or dunder spelling: ``method_key('sum')``."""
    return ("method", name)


def ufunc_method_key(ufunc: np.ufunc, method: str) -> tuple[str, str, str]:
    """Key of a ufunc method such as ``np.add.reduce``."""
    return ("ufunc", ufunc.__name__, method)


def _spell_key(key: Any) -> Any:
    try:
        hash(key)
        return key
    except TypeError:
        return id(key)


def spell(key: Any, op: Op, normalize: Callable[..., Bound], text: str | None = None,
          array_items: str = "") -> None:
    """Map a NumPy spelling to ``op``; ``normalize(*args, **kwargs)`` returns a :class:`Bound`."""
    _add_spelling(Spelling(key, op, normalize, text or describe_callable(key), array_items=array_items))


def spell_composite(key: Any, uses: tuple[str, ...], normalize: Callable[..., Composite],
                    text: str | None = None, builds_array: bool = False) -> None:
    """Map a NumPy spelling to a composition of the ops named in ``uses``;
    ``normalize(*args, **kwargs)`` returns a :class:`Composite`. ``builds_array``: it
    converts a list to an array itself (``np.asarray``), see ``Spelling.array_like_args``."""
    _add_spelling(Spelling(key, None, normalize, text or describe_callable(key), tuple(uses),
                           builds_array))


def _add_spelling(spelling: Spelling) -> None:
    k = _spell_key(spelling.key)
    if k in SPELLINGS:
        raise ValueError(f"NumPy spelling {spelling.text!r} is mapped twice")
    SPELLINGS[k] = spelling


def find_spelling(key: Any) -> Spelling | None:
    try:
        return SPELLINGS.get(_spell_key(key))
    except TypeError:
        return None


def lookup(key: Any) -> Spelling:
    """The spelling for a NumPy callable / method key, or :class:`NoOpError` naming it."""
    found = find_spelling(key)
    if found is None:
        raise NoOpError(f"no kiln op for {describe_callable(key)}; kiln runs it as plain Python "
                        f"(a graph break). If it is an elementwise or array operation NumPy "
                        f"users need, see docs/adding_an_op.md")
    return found


def defined_in_numpy(value: Any) -> bool:
    """Is ``value`` defined in NumPy (module ``numpy`` or ``numpy.*``)? Not in a package
    whose name merely starts with it (numpy_ml, numpy_financial: user code, inlined)."""
    module = getattr(value, "__module__", None) or ""
    return module == "numpy" or module.startswith("numpy.")


# NumPy functions that read their caller's frame: np.bmat("A,B;B,A") looks A and B up in
# the calling function's locals and globals, so a call of one must run in the user's own
# frame (kiln/capture/partial.py: a function calling one runs as Python at a break).
CALLER_FRAME_READERS = frozenset({np.bmat})


def describe_callable(key: Any) -> str:
    if isinstance(key, tuple) and key and key[0] == "method":
        return f"ndarray.{key[1]}"
    if isinstance(key, tuple) and key and key[0] == "ufunc":
        return f"numpy.{key[1]}.{key[2]}"
    if isinstance(key, np.ufunc):
        return f"numpy.{key.__name__}"
    module = getattr(key, "__module__", None) or ""
    name = getattr(key, "__qualname__", None) or getattr(key, "__name__", None) or repr(key)
    if defined_in_numpy(key):
        # numpy.fft._pocketfft.fft -> numpy.fft.fft (the public spelling)
        parts = [p for p in module.split(".") if not p.startswith("_")]
        module = ".".join(parts)
    return f"{module}.{name}" if module else name


def call_spelling(key: Any, *args: Any, **kwargs: Any) -> Any:
    """Run a NumPy spelling as kiln's ops: normalize, then call the op (or the composite).

    Composite spellings are written with it (``N.sum(x, axis=1)``, ``N.getitem(x, i)``),
    so they read like the NumPy code they stand for, and whatever runs them (arrays,
    Tensors, capture, graph tracing) sees only op calls."""
    bound = lookup(key).bind(*args, **kwargs)
    if bound.out is not None:
        raise AssertionError("call_spelling: out= is not for composites")
    if isinstance(bound, Composite):
        result = bound.fn(*bound.inputs, **bound.params)
        if bound.python is not None and isinstance(result, (np.ndarray, np.generic)):
            return bound.python(result)
        return result
    return bound.op(*bound.inputs, **bound.params)


class _SpellingNamespace:
    """``N.<name>(...)``: the NumPy function ``np.<name>`` as kiln ops (call_spelling);
    ``N.getitem(x, index)``, ``N.setitem`` and ``N.method(name, x, ...)`` for ndarray's."""

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if name == "getitem":
            return lambda x, index: call_spelling(method_key("__getitem__"), x, index)
        if name == "method":
            return lambda method, x, *a, **k: call_spelling(method_key(method), x, *a, **k)
        fn = getattr(np, name)
        return lambda *args, **kwargs: call_spelling(fn, *args, **kwargs)


N = _SpellingNamespace()


# NumPy calls on a boolean-mask selection ``x[mask]`` written without taking it (no
# data-dependent size): ``fn(x, mask, *args, **kwargs)`` returns a Composite, or None
# when this call needs the selection itself (capture then runs it as Python).
MASKED_FORMS: dict[Any, Callable[..., Any]] = {}


def spell_masked(key: Any, fn: Callable[..., Any]) -> None:
    MASKED_FORMS[_spell_key(key)] = fn


def masked_form(key: Any) -> Callable[..., Any] | None:
    try:
        return MASKED_FORMS.get(_spell_key(key))
    except TypeError:
        return None
