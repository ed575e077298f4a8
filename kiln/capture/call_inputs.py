"""What capture asks of a bound NumPy call's inputs before it records a node: what the
normalizer is handed for each tracker (:func:`to_bind`; an array's view of it,
:class:`ArrayArg`), positions in nested inputs, and
questions answered on stand-ins (does NumPy return a scalar here, does the output's
meta depend on an input's value)."""
from __future__ import annotations

from typing import Any
import enum
import warnings

import numpy as np

from ..ops import Bound, Composite, TensorMeta, infer_meta
from ..array_kinds import reads_memory
from ..ir.graph import has_size_refs, resolve_sizes
from ..ops.meta import is_dtype_class, on_stand_ins, to_fake
from ..ops.registry import iter_leaves, map_leaves
from ..ops.value_warnings import DEPRECATIONS, may_deprecate
from .dims import array_tracker
from .loops import LoopIndexVariable
from .variables.arrays import ArrayVariable, MaskedSelectionVariable, PyValueVariable, SymScalarVariable, UnbackedSize
from .variables.base import ConstantVariable, VariableTracker


class ArrayArg(TensorMeta):
    """What an op normalizer sees for an array: its shape and dtype (and its tracker)."""
    __slots__ = ("var", "below")

    def __init__(self, var: ArrayVariable, below: int | None = None) -> None:
        super().__init__(var.meta.shape, var.meta.dtype)
        self.var = var
        self.below = below   # every value is below it (Op.values_below), where known

    @property
    def T(self) -> "TensorMeta":
        return TensorMeta(self.shape[::-1], self.dtype)

    @property
    def data_sized(self) -> tuple:
        """Per dim: is its length known only after an op ran (an UnbackedSize: ``x[mask]``'s,
        possibly 0, where ``shape`` holds only an example)?"""
        return tuple(isinstance(d, UnbackedSize) for d in self.var.dims)

    @property
    def numpy_scalar(self) -> bool:
        """Is it a NumPy scalar (np.float64), not a 0-d array, in the user's program?"""
        return bool(self.var.scalar)


def as_meta(v: Any) -> Any:
    return TensorMeta(v.shape, v.dtype) if isinstance(v, ArrayArg) else v


def input_at(inputs: tuple, where: Any) -> Any:
    """An op input by position, or by a path into a tuple input (``(1, 0)``: x[mask]'s mask)."""
    for i in (where if isinstance(where, tuple) else (where,)):
        inputs = inputs[i]
    return inputs


def replace_at(inputs: tuple, where: Any, value: Any) -> tuple:
    path = where if isinstance(where, tuple) else (where,)
    items = list(inputs)
    items[path[0]] = value if len(path) == 1 else replace_at(items[path[0]], path[1:], value)
    return tuple(items)


def numpy_returns_scalar(op, inputs: tuple, params: dict) -> bool:
    """Does NumPy give a scalar (``np.float64``), not a 0-d array, for this 0-d result?
    (A full reduction, an integer index, arithmetic on scalars: ``type()``, ``isinstance``
    and ``s += 1`` — a new value, not a write — depend on it.)"""
    if op.state is not None:   # (its kernel would draw: the spelling says what NumPy gives)
        return False

    def stand_in(v: Any) -> Any:
        if isinstance(v, ArrayArg):
            return np.dtype(v.dtype).type(1) if v.var.scalar else TensorMeta(v.shape, v.dtype)
        return v
    try:
        return isinstance(on_stand_ins(op.impl, *to_fake(map_leaves(inputs, stand_in)), **params),
                          np.generic)
    except Exception:
        return False


def _writes_or_draws(fn: Any, bound: Any) -> bool:
    """Does the call write (``out=``, an in-place op) or draw random numbers? Then no
    probe runs it, not even on stand-ins."""
    if isinstance(bound, Bound) and (bound.op.mutates or bound.out is not None
                                     or bound.op.state is not None):
        return True
    if isinstance(bound, Composite) and bound.out is not None:
        return True
    owner = getattr(fn, "__self__", None)
    return "random" in (getattr(fn, "__module__", None) or "") or \
        isinstance(owner, (np.random.Generator, np.random.RandomState))


def _call_on_stand_ins(fn: Any, args: list, kwargs: dict, cap: int | None = None) -> Any:
    """NumPy's ``fn(*args, **kwargs)`` with each array argument a fake of its shape and
    dtype (no memory of the user's is read or written), each dimension at most ``cap``
    (1: what a ufunc broadcasts as before, one element computed); raises what NumPy
    raises."""
    def stand_in(v: Any) -> Any:
        if isinstance(v, ArrayArg):
            shape = v.shape if cap is None else tuple(min(d, cap) for d in v.shape)
            return np.dtype(v.dtype).type(0) if v.var.scalar else to_fake(TensorMeta(shape, v.dtype))
        return v
    args = map_leaves(list(args), stand_in)
    if isinstance(fn, tuple) and fn[0] == "method" and args:   # x.mean(): a method key
        fn, args = getattr(args[0], fn[1]), args[1:]
    return fn(*args, **{k: map_leaves(v, stand_in) for k, v in kwargs.items()})


def numpy_warns_on_empty(fn: Any, bound: Any, args: list, kwargs: dict) -> str | None:
    """The first warning NumPy's ``fn(*args, **kwargs)`` gives when an array argument is
    empty ("Mean of empty slice", "Degrees of freedom <= 0 for slice", 0 / 0 in a mean), or
    None. Such a warning depends only on shapes, which the graph fixes: a compiled kernel
    over no elements says nothing, so the call runs as NumPy. Asked only with an empty
    array among the arguments (then the run costs nothing), and never for a call that
    writes (``out=``, an in-place op) or draws random numbers."""
    arrays = [v for v in flatten(list(args) + list(kwargs.values())) if isinstance(v, ArrayArg)]
    if not any(0 in a.shape for a in arrays) or _writes_or_draws(fn, bound):
        return None
    with np.errstate(divide="warn", over="warn", invalid="warn", under="ignore"), \
            warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        try:
            _call_on_stand_ins(fn, args, kwargs)
        except Exception:
            return None   # (the kernel's own checks and errors decide)
    found = [w for w in seen if issubclass(w.category, RuntimeWarning)]
    return str(found[0].message) if found else None


_PROBE_SIZE = 4096


def numpy_deprecation(fn: Any, bound: Any, args: list, kwargs: dict) -> Warning | None:
    """The DeprecationWarning, FutureWarning or VisibleDeprecationWarning NumPy's
    ``fn(*args, **kwargs)`` gives on the installed NumPy for these arguments (np.fix on
    NumPy 2.5; np.linalg.qr with ``mode='full'``), or None. A compiled op never calls
    NumPy's function, so such a call runs as NumPy and its warning comes out at the user's
    line. Tried for a function whose code can give one (ops/value_warnings.py
    may_deprecate), on stand-ins, stopping at the warning, and for a ufunc (whose C code
    warns for some arguments: np.maximum(a, b, out) with ``out`` positional on NumPy 2.5)
    on one element; never for a call that draws random numbers."""
    ufunc = isinstance(fn, np.ufunc)
    if not ufunc and (isinstance(fn, tuple) or not may_deprecate(fn)) or \
            (isinstance(bound, Bound) and bound.op.state is not None) or _writes_or_draws(fn, None):
        return None
    # (a large call, a QR of 4000 x 4000, is tried on its arrays cut to 3 along every
    # dimension: the small dims a deprecation is about, 2-vectors, stay as they are)
    arrays = [v for v in flatten(list(args) + list(kwargs.values())) if isinstance(v, ArrayArg)]
    cap = 1 if ufunc else 3 if any(np.prod(a.shape) > _PROBE_SIZE for a in arrays) else None
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for category in DEPRECATIONS:
            warnings.simplefilter("error", category)
        try:
            _call_on_stand_ins(fn, args, kwargs, cap)
        except DEPRECATIONS as w:
            return w
        except Exception:
            return None
    return None


def _perturbed(value: Any) -> Any:
    if isinstance(value, (bool, np.bool_)):
        return not value
    if isinstance(value, (int, np.integer)):
        return type(value)(value + 1 if value < 2 else value - 1)
    return type(value)(value * 0.5 + 0.25)


def value_free(op, inputs: tuple, params: dict, position: int) -> bool:
    """Does the output's shape/dtype stay put when input ``position`` takes another value?"""
    metas = tuple(v if not isinstance(v, ArrayArg) else TensorMeta(v.shape, v.dtype) for v in inputs)
    other = metas[:position] + (_perturbed(metas[position]),) + metas[position + 1:]
    if has_size_refs(params):   # (np.full(len(x), v): a size of an input, its example here)
        params = resolve_sizes(params, lambda r: r.example)
    try:
        return infer_meta(op, metas, params) == infer_meta(op, other, params)
    except Exception:
        return False


def flatten(values: Any):
    """The leaves of nested tuples and lists, in order."""
    for v in values:
        if isinstance(v, (tuple, list)):
            yield from flatten(v)
        else:
            yield v


def objects_the_normalizer_added(given: list, bound: Bound, scalars: dict) -> list[int]:
    """The run-time scalars (ids of their example objects) that a normalized call holds more
    often than the user passed them: a default or a constant of the normalizer
    (np.copyto's ``where=True``) that is the very object of a run-time ``True`` or small
    int, which CPython shares, and would be taken for it."""
    def count(values: list) -> dict:
        counts: dict = {}
        for v in (v for value in values for v in iter_leaves(value) if id(v) in scalars):
            counts[id(v)] = counts.get(id(v), 0) + 1
        return counts
    passed, held = count(given), count([*bound.inputs, *bound.params.values()])
    return [ident for ident, n in held.items() if n > passed.get(ident, 0)]


def specialize_read_sizes(tx, given: list, bound: Bound) -> None:
    """A normalized call whose inputs hold numbers worked out from the example's shapes
    (``Bound.sizes_read``: np.fill_diagonal's positions) holds those sizes only: the
    dynamic dims of the arrays it was given are guarded (a fill_diagonal compiled for a
    20x20 array, reused for 7x7, wrote position 201 of 49)."""
    if bound.sizes_read:
        for value in given:
            for v in iter_leaves(value):
                if isinstance(v, ArrayArg):
                    v.var.specialize_dims(tx)


def _item(var: VariableTracker) -> VariableTracker:
    """An item of a list or tuple handed to NumPy: a Python float read from data
    (``float(np.dot(phi, hist))`` inserted into ``hist``) is its float64 0-d array, which
    NumPy's array of the list makes of it too (a Python float in a sequence is float64,
    not weak)."""
    return var.array if isinstance(var, PyValueVariable) and var.kind is float else var


def _another_object(value: Any) -> Any:
    """An object equal to the number ``value`` (the same type, sign of zero and NaN), not
    it: two run-time numbers given as one object (``make_world_line([x0, y], [x1, y], n)``
    of pytransform3d's make_world_grid: ``np.linspace(p1[1], p2[1], n)`` got ``y`` twice)
    are found again by identity after the normalizer, and one object standing for both was
    specialized (one entry per y). Python ints and NumPy bools are kept (CPython's small
    ints and np.True_ are one object each: op calls tell those apart by their order)."""
    if type(value) in (float, complex):
        return -(-value)      # (a new object; the sign of a zero and a NaN's flip back)
    if isinstance(value, np.number):
        return type(value)(value)
    return value


def to_bind(tx, var: VariableTracker, scalars: dict, index: bool = False) -> Any:
    """What the normalizer gets for ``var``; ``index``: it is a subscript's index (or a
    part of one), where a run-time NumPy integer (``x[np.int64(3)]``, ``x[i:i + 3]`` of
    ``i = np.argmax(...)``) is handed over as the Python int NumPy reads it as
    (``__index__``): the normalizer would make a new int of it (ops/indexing.py
    ``_entry``), which the run-time scalar, found by identity, is not, and it would be
    specialized (one entry per value). Its graph input keeps the NumPy scalar's dtype."""
    from .variables.containers import ListVariable, SliceVariable, TupleVariable
    if isinstance(var, ArrayVariable):
        return ArrayArg(var, values_below(tx, var))
    if isinstance(var, MaskedSelectionVariable):  # inside a list or tuple: taken for real
        return ArrayArg(var.take(tx, "passing it to a NumPy function"))
    if isinstance(var, SymScalarVariable):
        value = var.example
        if index and isinstance(value, np.integer):
            value = int(value)
        if any(s.code != var.code for s in scalars.get(id(value), ())):
            value = _another_object(value)
        scalars.setdefault(id(value), []).append(var)
        return value
    if index and isinstance(var, LoopIndexVariable) and type(var.example) is int:
        value = var.index_example()
        scalars.setdefault(id(value), []).append(var)
        return value
    if isinstance(var, ConstantVariable):
        if is_dtype_class(var.value):
            tx.unsupported("unsupported_value", f"the DType class {var.value.__name__} passed to a "
                           f"NumPy function (NumPy's functions read it in different ways)")
        if isinstance(var.value, enum.Enum):
            # an IntFlag member (``x & Perm.READ``): NumPy reads a subclass of int as the
            # array of it (int64: not a weak Python int), an index as its __index__
            if index and isinstance(var.value, int):
                return int(var.value)
            value = np.asarray(var.value)
            if value.dtype.kind not in "biufc":
                tx.unsupported("unsupported_value", f"{var.value!r} passed to a NumPy function")
            return value[()]
        return var.value
    if isinstance(var, ListVariable):
        return [to_bind(tx, _item(v), scalars) for v in var.item_list]
    if isinstance(var, TupleVariable):
        return tuple(to_bind(tx, _item(v), scalars, index) for v in var.item_list)
    if isinstance(var, SliceVariable):
        # (a loop variable as a bound, ``x[:i]``, gives a length each trip changes: not an
        # index the body takes, and the loop unrolls as before)
        return slice(*(to_bind(tx, p, scalars, index and not isinstance(p, LoopIndexVariable))
                       for p in var.parts))
    tx.unsupported("unsupported_value", f"{var.describe()} passed to a NumPy function")


def values_below(tx, var: ArrayVariable) -> int | None:
    """Op.values_below of the op that made ``var``'s value, while nothing in the graph has
    written into that value or the values its bound came from (a mutation op into one of
    them or into a view of one: ``e = a.reshape(-1)`` then ``a[0] = 99``)."""
    below = var.node.meta.get("values_below")
    if below is None:
        return None
    sources, todo = set(), [var.node]
    while todo:
        node = todo.pop()
        if id(node) not in sources and node.meta.get("values_below") is not None:
            sources.add(id(node))
            todo.extend(node.inputs)
    for n in tx.output.graph.calls:
        for i in n.op.mutates:
            target = n.args[i]
            while getattr(target, "kind", None) == "call" and id(target) not in sources \
                    and target.op.may_alias and target.args:
                target = target.args[0]
            if id(target) in sources:
                return None
    return below


def constants_of(var: VariableTracker, value: Any, out: list) -> None:
    """The constants written in an argument (``var``, bound as ``value``), not those
    standing for run-time scalars (``n`` in ``x[:n]``)."""
    from .variables.containers import ListVariable, SliceVariable, TupleVariable
    if isinstance(var, (SymScalarVariable, LoopIndexVariable)):
        return
    if isinstance(var, (ListVariable, TupleVariable)) and isinstance(value, (list, tuple)) \
            and len(var.item_list) == len(value):
        for v, b in zip(var.item_list, value):
            constants_of(v, b, out)
    elif isinstance(var, SliceVariable) and isinstance(value, slice):
        for v, b in zip(var.parts, (value.start, value.stop, value.step)):
            constants_of(v, b, out)
    else:
        out.extend(v for v in iter_leaves(value) if not isinstance(v, TensorMeta))


def example_of(tx, value: Any) -> Any:
    """The call's value of an argument array (an op's speculation starts from it), or None
    (also for an array whose memory capture does not read: a CuPy array's data stay on
    its GPU, and the op's default is speculated)."""
    var = array_tracker(value)
    if var is None or var.source is None or var.node.kind != "placeholder":
        return None
    try:
        example = tx.output.leaf_value(var.source)
    except KeyError:
        return None
    if var.tensor:   # a kiln.Tensor argument (kiln.grad of a compiled function): its data,
        example = example.numpy()   # which NumPy runs on without recording on the tape
    return example if reads_memory(example) else None


def binds_with_numbers(spelling, args: list, kwargs: dict) -> bool:
    """Did binding fail only because a 0-d array of the graph stands where NumPy takes a
    Python number (``np.zeros((k, 3))`` with ``k = g.max() + 1``)? NumPy takes the value;
    kiln would need it while capturing. Not the user's error, then, but a graph break
    (which ``fullgraph=True`` reports)."""
    swapped = False

    def number(v: Any) -> Any:
        nonlocal swapped
        if isinstance(v, ArrayArg) and not v.shape:
            swapped = True
            return np.dtype(v.dtype).type(1)
        if type(v) in (list, tuple):
            return type(v)(number(x) for x in v)
        return v
    args, kwargs = [number(a) for a in args], {k: number(v) for k, v in kwargs.items()}
    if not swapped:
        return False
    try:
        spelling.bind(*args, **kwargs)
    except Exception:
        return False
    return True
