"""NumPy helper objects that are not functions: the index grids ``np.mgrid``/``np.ogrid``,
the concatenators ``np.r_``/``np.c_``, and the iterators ``np.ndindex``/``np.ndenumerate``/``np.nditer``/``ndarray.flat``. Their arguments are
shapes and slice bounds, so capture evaluates them: a grid is a constant array of the graph
(NumPy's own values), an iteration is unrolled over the index tuples (each ``a[idx]`` read
when the loop takes it, as Python does).

``for x in np.nditer(a)`` visits a's elements in memory order (``order='K'``: axes by
stride, negative strides reversed), each a 0-d view (read-only unless
``op_flags=['readwrite']``/``['writeonly']``, where ``x[...] = v`` writes into ``a``).
The order is the one NumPy gives for the argument's strides (guarded), or C/F order when
asked; a computed array of two or more dims (whose layout NumPy decides) breaks the graph
unless the order is given."""
from __future__ import annotations

import operator
import warnings
from typing import Any

import numpy as np

from ...array_kinds import reads_memory
from .base import ConstantVariable, VariableTracker
from .containers import TupleVariable
from .iterators import IteratorVariable, LazyIteratorVariable

# An unrolled iteration past this many index tuples would be a huge graph: it breaks.
MAX_UNROLLED_INDICES = 4096

GRID_TYPES = (type(np.mgrid), type(np.ogrid))


class IndexGridVariable(VariableTracker):
    """``np.mgrid`` / ``np.ogrid``: indexing with constant slices gives NumPy's arrays."""

    def __init__(self, grid: Any, source: Any = None) -> None:
        self.grid = grid
        self.source = source

    def describe(self) -> str:
        return "np.mgrid" if isinstance(self.grid, type(np.mgrid)) else "np.ogrid"

    def python_type(self) -> type:
        return type(self.grid)

    def getitem(self, tx, index: VariableTracker) -> VariableTracker:
        key = index.as_constant(tx)   # slice bounds: constants (shapes), runtime ones specialized
        value = tx.fold(operator.getitem, self.grid, key)
        if isinstance(value, tuple):   # ogrid: one array per axis
            return TupleVariable([tx.output.constant_array(v) for v in value])
        return tx.output.constant_array(value)


CONCATENATOR_TYPES = (type(np.r_), type(np.c_))


class AxisConcatenatorVariable(VariableTracker):
    """``np.r_[...]`` / ``np.c_[...]``: NumPy's AxisConcatenator.__getitem__ on traced
    arrays and constants. Constants (numbers, lists, slices) become the arrays NumPy makes
    of them; a traced array gets ``ndmin`` leading axes (moved as ``trans1d`` says:
    ``np.c_`` stands a 1-D array up as a column); all are cast to the result type NumPy
    picks (numbers weakly) and joined by one ``np.concatenate``; a run-time Python number
    (``np.r_[0, starts, len(s)]``, s of a dynamic length) is ``np.full`` of one element.
    String directives (``np.r_['0,2', ...]``) break the graph."""

    def __init__(self, obj: Any, source: Any = None) -> None:
        self.obj = obj
        self.source = source

    def describe(self) -> str:
        return "np.r_" if isinstance(self.obj, type(np.r_)) else "np.c_"

    def python_type(self) -> type:
        return type(self.obj)

    def getitem(self, tx, index: VariableTracker) -> VariableTracker:
        from .arrays import ArrayVariable, MaskedSelectionVariable, SymScalarVariable, UnbackedSize
        what = f"numpy.{self.describe()[3:]}[...]"
        obj = self.obj
        items = index.item_list if isinstance(index, TupleVariable) else \
            [ConstantVariable(v) for v in index.value] if index.is_constant() and \
            isinstance(index.as_constant(tx), tuple) else [index]
        ndmin, trans1d = obj.ndmin, obj.trans1d
        objs, kinds = [], []
        for item in items:
            if isinstance(item, MaskedSelectionVariable):   # x[mask] not taken yet
                item = item.take(tx, what)
            if isinstance(item, ArrayVariable):   # a NumPy scalar too: its dtype counts
                nd = len(item.meta.shape)
                new = item
                if nd < ndmin:
                    new = tx.call_op(np.reshape, [item, ConstantVariable((1,) * (ndmin - nd) + tuple(
                        item.meta.shape))], {}, what)
                    if trans1d != -1:
                        k2, k1 = ndmin - nd, trans1d + (ndmin - nd + 1 if trans1d < 0 else 0)
                        axes = list(range(ndmin))
                        new = tx.call_op(np.transpose, [new, ConstantVariable(
                            tuple(axes[:k1] + axes[k2:] + axes[k1:k2]))], {}, what)
                objs.append(new)
                kinds.append(np.dtype(item.meta.dtype))
            elif item.is_constant() and not isinstance(item.as_constant(tx), str) and not obj.matrix:
                value = item.as_constant(tx)
                if type(value) in np.ScalarType:   # made in the result dtype (below)
                    objs.append(value)
                    kinds.append(value)
                else:
                    made = tx.fold(operator.getitem, obj, (value,))   # NumPy's array of it alone
                    objs.append(tx.output.constant_array(made))
                    kinds.append(made.dtype)
            elif isinstance(item, SymScalarVariable) and not isinstance(item, UnbackedSize) \
                    and type(item.example) in (int, float) and not obj.matrix:
                # a run-time Python number (``len(s)`` of a dynamic s): a one-element array
                # filled with it in the result dtype, as NumPy makes it (below)
                objs.append(item)
                kinds.append(item.example)
            else:
                tx.unsupported("unsupported_call", f"{what} with {item.describe()} is not "
                               f"captured (only arrays and constants)", "it runs as Python")
        if not objs:
            tx.unsupported("unsupported_call", f"{what} of nothing", "it runs as Python")
        dtype = tx.fold(np.result_type, *kinds)
        # a number becomes an array of the result dtype as NumPy makes it (an int that does
        # not fit raises NumPy's OverflowError); arrays are cast by the join
        objs = [tx.output.constant_array(tx.fold(np.array, o, ndmin=ndmin, dtype=dtype))
                if not isinstance(o, VariableTracker) else
                tx.call_op(np.full, [ConstantVariable((1,) * ndmin), o], {"dtype": ConstantVariable(dtype)}, what)
                if isinstance(o, SymScalarVariable) else o for o in objs]
        return tx.call_op(np.concatenate, [TupleVariable(objs)],
                          {"axis": ConstantVariable(obj.axis), "dtype": ConstantVariable(dtype),
                           "casting": ConstantVariable("unsafe")}, what)


def _count(tx, shape: tuple, what: str) -> None:
    n = int(np.prod(shape, dtype=np.int64)) if shape else 1
    if n > MAX_UNROLLED_INDICES:
        tx.unsupported("unsupported_call", f"{what} over {n} indices would unroll into a "
                       f"graph of {n} steps (at most {MAX_UNROLLED_INDICES})",
                       "write the loop as array operations (or over a range, which compiles "
                       "to a loop), or move it out of the compiled function")


class NdIndexVariable(IteratorVariable):
    """``np.ndindex(*shape)``: the index tuples in C order (the loop unrolls)."""

    def __init__(self, tx, shape: tuple) -> None:
        _count(tx, shape, "np.ndindex")
        super().__init__([ConstantVariable(i) for i in np.ndindex(*shape)])

    def describe(self) -> str:
        return "np.ndindex iterator"


class NdEnumerateVariable(LazyIteratorVariable):
    """``np.ndenumerate(a)``: (index, a[index]) pairs, each element read when taken."""

    def __init__(self, tx, array: VariableTracker) -> None:
        shape = tuple(array.getattr(tx, "shape").as_constant(tx))
        _count(tx, shape, "np.ndenumerate")
        super().__init__(list(np.ndindex(*shape)))
        self.array = array

    def describe(self) -> str:
        return "np.ndenumerate iterator"

    def python_iterable(self, rebuild, ns) -> str:
        """The iteration as Python code (the rest of it runs at a graph break)."""
        return f"{ns.ref(np.ndenumerate, 'f')}({rebuild(self.array)})"

    def next(self, tx=None) -> VariableTracker | None:
        if not self.pending:
            return None
        self.taken += 1
        idx = self.pending.pop(0)
        return TupleVariable([ConstantVariable(idx), self.array.getitem(tx, ConstantVariable(idx))])



class FlatIterVariable(LazyIteratorVariable):
    """``a.flat``: a's elements in C order whatever its layout, each read when taken (the
    loop unrolls); ``a.flat[i]`` with a constant int reads one element. Indexing unrolls
    nothing, so an array too large to iterate (``A.flat[::n + 1] += alpha`` on 100x100)
    still indexes; its steps (``pending``) break where something reads them."""

    def __init__(self, tx, array: VariableTracker) -> None:
        shape = tuple(array.getattr(tx, "shape").as_constant(tx))
        self.tx, self.shape = tx, shape
        self.unrolls = int(np.prod(shape, dtype=np.int64)) <= MAX_UNROLLED_INDICES
        super().__init__(list(np.ndindex(*shape)) if self.unrolls else [])
        self.array = array

    @property
    def pending(self) -> list:
        if not self.unrolls:
            _count(self.tx, self.shape, "ndarray.flat")
        return self._pending

    @pending.setter
    def pending(self, steps: list) -> None:
        self._pending = steps

    def describe(self) -> str:
        return "ndarray.flat iterator"

    def python_iterable(self, rebuild, ns) -> str:
        return f"{rebuild(self.array)}.flat"

    def next(self, tx=None) -> VariableTracker | None:
        if not self.pending:
            return None
        self.taken += 1
        return self.array.getitem(tx, ConstantVariable(self.pending.pop(0)))


    def _element(self, tx, index: VariableTracker) -> ConstantVariable:
        """The index tuple of ``a.flat[i]`` (a constant int ``i``), or of ``a.flat[s]`` (a
        slice: the elements' index arrays, ``a.flat[::n + 1] += alpha`` on a diagonal);
        other indices break."""
        i = index.as_constant(tx) if index.is_constant() else None
        if isinstance(i, slice):
            flat = range(int(np.prod(self.shape, dtype=np.int64)))[i]
            _count(tx, (len(flat),), f"ndarray.flat[{index.describe()}]")   # (constant index arrays)
            flat = np.arange(flat.start, flat.stop, flat.step, dtype=np.int64)
            return ConstantVariable(np.unravel_index(flat, self.shape) if self.shape else flat)
        if isinstance(i, (bool, np.bool_)) or not isinstance(i, (int, np.integer)):
            tx.unsupported("unsupported_call", f"ndarray.flat[{index.describe()}]: only a "
                           f"constant int index is captured", "index the array itself")
        n = int(np.prod(self.shape, dtype=np.int64))
        if not -n <= i < n:
            tx.user_error(IndexError(f"index {i} is out of bounds for size {n}"))
        where = np.unravel_index(int(i) % n, self.shape) if self.shape else ()
        return ConstantVariable(tuple(int(k) for k in where))

    def getitem(self, tx, index: VariableTracker) -> VariableTracker:
        read = _flat_item(tx, self.array, index)
        if read is not None:
            return read
        return self.array.getitem(tx, self._element(tx, index))

    def setitem(self, tx, index: VariableTracker, value: VariableTracker) -> None:
        where = self._element(tx, index)
        if isinstance(index.as_constant(tx), slice):
            # NumPy repeats a shorter value along the selection; an index write broadcasts
            count = len(where.value[0]) if self.shape else len(where.value)
            size = int(np.prod(value.getattr(tx, "shape").as_constant(tx))) \
                if value.python_type() is np.ndarray else 1
            if size not in (1, count):
                tx.unsupported("unsupported_call", f"ndarray.flat[{index.describe()}] = a value of "
                               f"{size} elements for {count}: NumPy repeats it", "index the array itself")
        else:
            _single_item_check(tx, self.array, value, index)
        return self.array.setitem(tx, where, value)


def _flat_item(tx, array: VariableTracker, index: VariableTracker) -> VariableTracker | None:
    """``a.flat[i]`` of a run-time integer ``i`` (a NumPy integer the graph computes,
    ``Z.flat[np.abs(Z - z).argmin()]``, or a run-time Python int) as one ``flat_item`` read
    (NumPy's own bounds and message); None for anything else (constants, slices)."""
    from .arrays import ArrayVariable, SymScalarVariable
    if not isinstance(array, ArrayVariable) or array.tensor or array.array_type is not np.ndarray:
        return None
    if isinstance(index, ArrayVariable) and not index.tensor and index.meta.shape == () \
            and np.dtype(index.meta.dtype).kind in "iu":
        node = index.node
    elif isinstance(index, SymScalarVariable) and type(index.example) is int:
        node = tx.output.scalar_node(index)
    else:
        return None
    from ...ops import REGISTRY
    result = ArrayVariable(tx.output.graph.call(REGISTRY["flat_item"], (array.node, node), {},
                                                source=tx.location()), ())
    result.scalar = True     # (a NumPy scalar, as NumPy's flat gives)
    return result


def _single_item_check(tx, array: VariableTracker, value: VariableTracker, index: VariableTracker) -> None:
    """``a.flat[i] = v`` sets one item as NumPy converts a scalar, and answers any failure
    with ``ValueError('Error setting single item of array.')`` where ``a[i] = v`` raises the
    conversion's own error (an OverflowError for 300 into int8, a TypeError for a complex
    into a float array) and a value of one or more dims broadcasts. So a value with dims
    raises, a constant is converted by NumPy now, and a run-time number that may not convert
    (a Python number or a wider NumPy scalar into an integer array, a Python complex into a
    real one) runs as Python."""
    dtype = getattr(getattr(array, "meta", None), "dtype", None)
    if dtype is None:
        return
    kind = value.python_type()
    if kind is np.ndarray:
        if len(value.meta.shape):
            tx.user_error(ValueError("Error setting single item of array."))
        return
    if value.is_constant():
        try:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                np.empty(1, dtype).flat[0] = value.as_constant(tx)
        except (TypeError, ValueError, OverflowError):
            tx.user_error(ValueError("Error setting single item of array."))
        return
    if issubclass(kind, np.generic) and np.can_cast(kind, dtype):
        return
    if kind is not bool and (dtype.kind in "iu" or kind is complex and dtype.kind != "c"):
        tx.unsupported("unsupported_call", f"ndarray.flat[{index.describe()}] = a run-time {kind.__name__} "
                       f"into {dtype}: NumPy answers a value it cannot convert with ValueError('Error "
                       f"setting single item of array.')", "index the array itself: a[i] = v")


class NdIterVariable(LazyIteratorVariable):
    """``np.nditer(a)``: a's elements as 0-d views, in the order NumPy visits them."""

    def __init__(self, tx, array: VariableTracker, visits: list, params: dict) -> None:
        super().__init__(visits)
        self.array = array
        self.params = params            # order, op_flags: constants
        self.writable = params["op_flags"] != ["readonly"]

    def describe(self) -> str:
        return "np.nditer iterator"

    def python_iterable(self, rebuild, ns) -> str:
        """The iteration as Python code (the rest of it runs at a graph break)."""
        return f"{ns.ref(np.nditer, 'f')}({rebuild(self.array)}, order={self.params['order']!r}, " \
               f"op_flags={self.params['op_flags']!r})"

    def next(self, tx=None) -> VariableTracker | None:
        if not self.pending:
            return None
        self.taken += 1
        element = self.array.getitem(tx, ConstantVariable(self.pending.pop(0) + (Ellipsis,)))
        if self.writable:
            return element
        # a read-only 0-d view of the element, as nditer's (a write raises NumPy's error)
        return tx.call_op(np.broadcast_to, [element, ConstantVariable(())], {}, "np.nditer")



_NDITER_FLAGS = ({"readonly"}, {"readwrite"}, {"writeonly"})


def _nditer(tx, array: VariableTracker, kwargs: dict) -> VariableTracker | None:
    """``np.nditer(a, order=..., op_flags=...)`` over one array, or None (not captured)."""
    params = {k: v.as_constant(tx) for k, v in kwargs.items()}
    order = params.pop("order", "K")
    op_flags = params.pop("op_flags", None)
    flags = params.pop("flags", None)
    if params or flags or order not in ("C", "F", "A", "K"):
        return None
    op_flags = list(op_flags or ("readonly",))
    if set(op_flags) not in _NDITER_FLAGS or len(op_flags) != 1:
        return None
    params = {"order": order, "op_flags": op_flags}
    shape = tuple(array.getattr(tx, "shape").as_constant(tx))
    _count(tx, shape, "np.nditer")
    if order in ("A", "K") and len(shape) > 1 or order == "K" and len(shape) == 1:
        # the order depends on the memory layout: the argument's own, guarded
        source = array.source if array.base is None else None
        if source is None or array.node.kind != "placeholder":
            if len(shape) > 1 or array.base is not None:
                tx.unsupported("unsupported_call", "np.nditer over a computed array visits its "
                               "elements in the memory order NumPy gives it, which kiln does not "
                               "follow", "pass order='C' (or 'F'), or iterate over an argument")
            order = "C"   # a 1-d result of an op: contiguous, forward
        else:
            value = tx.output.leaf_value(source)
            if not reads_memory(value):
                tx.unsupported("unsupported_call", "np.nditer over an array on a GPU",
                               "it runs as Python (CuPy refuses the copy to the host)")
            code, text = source.code(tx.output.ns), source.display()
            tx.guards.add_truth(f"{code}.strides == {value.strides!r}",
                                f"{text}.strides == {value.strides!r}", True, (source,))
            it = np.nditer(value, flags=["multi_index", "refs_ok", "zerosize_ok"], order=order)
            visited = []
            while not it.finished:
                visited.append(it.multi_index)
                it.iternext()
            return NdIterVariable(tx, array, visited, params)
    indices = list(np.ndindex(*shape)) if order in ("C", "A", "K") else \
        [tuple(reversed(i)) for i in np.ndindex(*reversed(shape))]
    return NdIterVariable(tx, array, indices, params)


def construct(tx, cls: type, args: list, kwargs: dict) -> VariableTracker | None:
    """``np.ndindex(...)`` / ``np.ndenumerate(a)`` / ``np.nditer(a)`` as capture's
    iterators; None: not these."""
    if cls is np.ndindex:
        if kwargs:
            return None
        shape = tuple(a.as_constant(tx) for a in args)
        if len(shape) == 1 and isinstance(shape[0], tuple):
            shape = shape[0]
        tx.fold(np.ndindex, *shape)    # NumPy's errors for a bad shape
        return NdIndexVariable(tx, tuple(shape))
    if cls is np.ndenumerate and len(args) == 1 and not kwargs:
        from .arrays import ArrayVariable
        if isinstance(args[0], ArrayVariable):
            return NdEnumerateVariable(tx, args[0])
    if cls is np.nditer and len(args) == 1:
        from .arrays import ArrayVariable
        if isinstance(args[0], ArrayVariable) and not args[0].tensor:
            return _nditer(tx, args[0], kwargs)
    return None


GENERATOR_TYPES = (np.random.Generator, np.random.RandomState)


class GeneratorVariable(VariableTracker):
    """A ``np.random.Generator`` or ``RandomState`` object (``rng.normal(size=n)``): its
    methods are ops drawing from it (kiln/ops/random.py). The graph names the object
    itself, so it is guarded by identity."""

    def __init__(self, gen: Any, source: Any = None) -> None:
        self.gen = gen
        self.source = source

    def describe(self) -> str:
        where = f" {self.source.display()}" if self.source is not None else ""
        return f"{self.python_type().__name__} object{where}"

    def python_type(self) -> type:
        return getattr(self.gen, "spelling_type", type(self.gen))   # (a FreshGenerator's)

    def getattr(self, tx, name: str) -> VariableTracker:
        return GeneratorMethodVariable(self, name)


class DefaultRngVariable(VariableTracker):
    """``np.random.default_rng`` or ``np.random.RandomState``: called in the function, a new
    generator each call, which the graph makes (kiln/ops/random.py, ``FreshGenerator``) and
    draws from. It stays in the graph: returned or alive at a graph break it has no source
    to rebuild it from, so the function runs as Python there."""

    def __init__(self, maker: Any, source: Any = None) -> None:
        self.maker = maker
        self.source = source

    def describe(self) -> str:
        return f"numpy.random.{self.maker.__name__}"

    def python_type(self) -> type:
        return type(self.maker)

    def call(self, tx, args: list, kwargs: dict) -> VariableTracker:
        from ...ops.random import FRESH_GENERATOR_KEY, FreshGenerator
        gen = FreshGenerator(self.maker)
        tx.call_op(FRESH_GENERATOR_KEY, [ConstantVariable(gen)] + list(args), kwargs, self.describe())
        return GeneratorVariable(gen)


class GeneratorMethodVariable(VariableTracker):
    """``rng.normal`` before it is called."""

    def __init__(self, owner: GeneratorVariable, name: str) -> None:
        self.owner = owner
        self.name = name

    def describe(self) -> str:
        return f"{self.owner.python_type().__name__}.{self.name}"

    def call(self, tx, args: list, kwargs: dict) -> VariableTracker:
        from ...ops import find_spelling
        from ...ops.random import method_spelling_key
        key = method_spelling_key(self.owner.python_type(), self.name)
        if find_spelling(key) is None:
            tx.unsupported("unsupported_call", f"numpy.random.{self.describe()} is not captured",
                           "call it outside the compiled function and pass the result in")
        return tx.call_op(key, [ConstantVariable(self.owner.gen)] + list(args), kwargs,
                          f"numpy.random.{self.describe()}")
