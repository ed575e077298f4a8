"""Arrays (a graph node plus fake metadata); runtime scalars (a Python expression) are in
sym_scalars.py.

:class:`ArrayVariable` never holds data: it has the graph node that computes the array,
its shape and dtype, and for each dimension either ``None`` (static, guarded) or the
:class:`SymScalarVariable` giving its runtime size (a dynamic dimension).
"""
from __future__ import annotations

import operator
import weakref
from typing import Any

import numpy as np

from ...ops import find_spelling, method_key
from ...ops.meta import TensorMeta
from ...ops.value_warnings import setting_warns
from ..breaks import HINTS
from ..bytecode_facts import OPERATOR_SYMBOLS
from ..sources import Source
from ..python_numbers import complex_with_float, is_python_complex
from .base import ConstantVariable, VariableTracker
# (SymScalarVariable and UnbackedSize are imported from here by most of capture)
from .sym_scalars import SymScalarVariable, UnbackedSize, same_value  # noqa: F401

# ndarray properties that are ops: read, they are the op's result (not a method to call)
PROPERTY_OPS = ("T", "mT", "real", "imag")


class ArrayVariable(VariableTracker):
    def __init__(self, node: Any, dims: tuple | None = None, source: Source | None = None,
                 fresh: bool = True, base: "ArrayVariable | None" = None,
                 tensor: bool = False, array_type: type = np.ndarray) -> None:
        self.node = node
        self.dims = dims if dims is not None else (None,) * len(node.val.shape)
        self.source = source
        self.fresh = fresh          # made by the graph (not an argument, not a view of one)
        self.base = base            # the array this one is a view of
        self.has_views = False
        self.view_refs: list = []   # weak references to the trackers of those views
        self.read_only = False      # maybe a read-only view at run time (of broadcast_to...)
        self.tensor = tensor        # a kiln.Tensor at run time (an op on one returns one)
        self.scalar = False         # a NumPy scalar at run time (np.float64), not a 0-d array
        # its type at run time: np.ndarray, or a device array's (cupy.ndarray: an op on
        # one returns one; kiln/array_kinds.py)
        self.array_type = array_type

    @property
    def meta(self) -> TensorMeta:
        return self.node.val

    def describe(self) -> str:
        where = self.source.display() if self.source is not None else self.node.name
        return f"array {where} ({self.meta.dtype}{list(self.meta.shape)})"

    def python_type(self) -> type:
        if self.tensor:
            from ...tensor import Tensor
            return Tensor
        if self.scalar:
            return self.meta.dtype.type
        return self.array_type

    # -- properties, statically known and guarded --------------------------------------
    def dim(self, tx, i: int) -> VariableTracker:
        sym = self.dims[i]
        if isinstance(sym, UnbackedSize):
            sym.as_constant(tx)   # a size Python code reads: the graph breaks here
        return sym if sym is not None else ConstantVariable(self.meta.shape[i])

    def getattr(self, tx, name: str) -> VariableTracker:
        from .containers import TupleVariable
        if name == "shape":
            return TupleVariable([self.dim(tx, i) for i in range(len(self.meta.shape))])
        if name == "ndim":
            return ConstantVariable(len(self.meta.shape))
        if name == "dtype":
            return ConstantVariable(self.meta.dtype)
        if name == "size":
            return self.size(tx)
        if name == "itemsize":
            return ConstantVariable(self.meta.dtype.itemsize)
        if name == "nbytes":
            return self.size(tx).binary(tx, operator.mul, ConstantVariable(self.meta.dtype.itemsize), False)
        if name == "base":
            from ..array_base import array_base
            return array_base(tx, self)
        if name == "flat" and not self.tensor and self.array_type is np.ndarray:
            from .numpy_objects import FlatIterVariable
            return FlatIterVariable(tx, self)
        if name in PROPERTY_OPS:
            return tx.call_op(method_key(name), [self], {}, f"ndarray.{name}")
        if name == "item" and self.meta.shape == () and not self.tensor:
            from .functions import ArrayMethodVariable
            return ArrayMethodVariable(self, name)    # a Python number read (loop_lists.python_value)
        if name in ("item", "tolist", "tobytes", "__array__", "__float__", "__int__"):
            tx.unsupported("data_dependent", f"ndarray.{name}() reads array data into Python",
                           HINTS["data_dependent"])
        if find_spelling(method_key(name)) is None:
            if self.tensor and not hasattr(np.ndarray, name):   # t.detach(), t.backward()
                tx.unsupported("unsupported_call", f"kiln.Tensor.{name} is a method of the eager "
                               f"tape's Tensor, not a NumPy op", "it runs as Python: the graph "
                               "breaks here and resumes after it")
            tx.unsupported("unsupported_call", f"ndarray.{name} has no kiln op", HINTS["numpy"])
        from .functions import ArrayMethodVariable
        return ArrayMethodVariable(self, name)

    def size(self, tx) -> VariableTracker:
        """``x.size``: the product of the dims, a run-time int where a dynamic one is among
        them (``x.sum() / x.size`` builds once for every size, as ``/ len(x)`` does)."""
        live = [d for d in self.dims if d is not None and not d.pinned]
        if self.meta.size == 0 or not live or any(isinstance(d, UnbackedSize) for d in live):
            self.specialize_dims(tx)
            return ConstantVariable(int(self.meta.size))
        total, static = None, 1
        for d, n in zip(self.dims, self.meta.shape):
            if d is None or d.pinned:
                static *= n
            else:
                total = d if total is None else total.binary(tx, operator.mul, d, False)
        return total if static == 1 else total.binary(tx, operator.mul, ConstantVariable(static), False)

    def specialize_dims(self, tx) -> None:
        for i, sym in enumerate(self.dims):
            if sym is not None:
                sym.as_constant(tx)
        self.dims = (None,) * len(self.dims)

    # -- behaviour --------------------------------------------------------------------
    def binary(self, tx, op: Any, other: VariableTracker, reverse: bool) -> Any:
        if reverse and self.scalar and self.meta.dtype == np.float64 and is_python_complex(other):
            result = complex_with_float(tx, op, other, self)   # (np.float64 is a Python float)
            if result is not None:
                return result
        args = [other, self] if reverse else [self, other]
        return tx.call_op(op, args, {}, f"operator {OPERATOR_SYMBOLS.get(op, op.__name__)}")

    def unary(self, tx, op: Any) -> VariableTracker:
        if op is operator.not_:
            self.truth(tx)
        return tx.call_op(op, [self], {}, f"operator.{op.__name__}")

    def truth(self, tx) -> bool:
        tx.unsupported("data_dependent", f"the truth value of {self.describe()} depends on its data",
                       HINTS["data_dependent"])

    def items(self, tx) -> list[VariableTracker]:
        if not self.meta.shape:
            tx.user_error(TypeError("iteration over a 0-d array"))
        if self.dims[0] is not None:
            self.dims[0].as_constant(tx)
        return [self.getitem(tx, ConstantVariable(i)) for i in range(self.meta.shape[0])]

    def length(self, tx) -> VariableTracker:
        if not self.meta.shape:
            tx.user_error(TypeError("len() of unsized object"))
        return self.dim(tx, 0)

    def getitem(self, tx, index: VariableTracker) -> VariableTracker:
        from ..opcall import index_lists_stacked
        from ..python_numbers import data_int_index
        index = data_int_index(self, index)
        return tx.call_op(method_key("__getitem__"), [self, index_lists_stacked(tx, index)], {},
                          "indexing")

    def setitem(self, tx, index: VariableTracker, value: VariableTracker) -> None:
        from ..opcall import index_lists_stacked, numbers_stacked
        if self.scalar:
            tx.user_error(TypeError(f"'{self.meta.dtype.type.__name__}' object does not support "
                                    f"item assignment"))
        tx.call_op(method_key("__setitem__"), [self, index_lists_stacked(tx, index),
                                               numbers_stacked(tx, self, value)], {}, "index assignment")

    def note_view(self, view: "ArrayVariable") -> None:
        """``view`` shares this array's memory (this is its base)."""
        self.has_views = True
        self.view_refs.append(weakref.ref(view))

    def can_rewrite_in_place(self, dead_views: bool = False) -> bool:
        """An in-place update can become a new node when no one else can see the old value
        (and NumPy lets it be written: np.broadcast_to of a NumPy scalar is fresh but read-only).
        ``dead_views``: views whose trackers are gone (a temporary ``v[i - 1]`` read in an
        expression) cannot see it either (used inside kiln.grad, whose backward cannot
        follow a write into an array: ``v[i] = x[i] * y + v[i - 1]``)."""
        views = self.has_views and not (dead_views and self.view_refs and
                                         all(ref() is None for ref in self.view_refs))
        return self.fresh and self.base is None and not views and not self.read_only

    def store_attr(self, tx, name: str, value: VariableTracker) -> bool:
        """``a.name = value`` where ndarray's setter is captured; False: not here."""
        if self.scalar or setting_warns(name):   # (a.shape = ... on NumPy 2.5: deprecated)
            return False
        if name == "shape" and self.can_rewrite_in_place():
            # a = np.zeros(6); a.shape = (2, 3): an array only this frame sees takes the
            # reshaped node (NumPy reshapes it in place, without copying). NumPy refuses
            # where its memory is not in C order (``(x.T * 2).shape = (-1,)``, a copy of a
            # broadcast array): kiln knows that of a 1-d array, or where only unit axes come
            # or go; otherwise Python decides.
            reshaped = tx.call_op(np.reshape, [self, value], {}, "ndarray.shape =")
            if len(self.meta.shape) > 1 and [d for d in self.meta.shape if d != 1] != \
                    [d for d in reshaped.meta.shape if d != 1]:
                return False
            self.node, self.dims = reshaped.node, reshaped.dims
            return True
        if name == "real" or name == "imag" and self.meta.dtype.kind == "c":
            # z.real = v: ndarray's setter copies v into the view, as z.real[...] = v does
            # (a real array's .imag is a read-only copy NumPy refuses to set: left to Python)
            self.getattr(tx, name).setitem(tx, ConstantVariable(Ellipsis), value)
            return True
        return False


class PyValueVariable(VariableTracker):
    """A Python bool or int NumPy reads from array data (``np.allclose(a, b)``,
    ``np.count_nonzero(x)``): the graph computes it as the 0-d array ``array``, converted
    with ``kind`` where it leaves the graph (returned, stored, handed to Python at a
    break). Any other use (a branch on it, arithmetic) breaks the graph there, so Python
    sees the value NumPy gives."""

    def __init__(self, array: ArrayVariable, kind: type) -> None:
        self.array = array
        self.kind = kind

    def describe(self) -> str:
        return f"Python {self.kind.__name__} read from {self.array.describe()}"

    def python_type(self) -> type:
        return self.kind

    def truth(self, tx) -> bool:
        tx.unsupported("data_dependent", f"the truth value of {self.describe()} depends on "
                       f"the data", HINTS["data_dependent"])

    def binary(self, tx, op: Any, other: VariableTracker, reverse: bool) -> Any:
        """``s + np.random.random()`` on Python floats: +, - and * of doubles are the same
        IEEE operations in Python and in a float64 kernel, so the sum is computed in the
        graph (as Python computes it: capture/python_numbers.py) and stays a Python float
        read from it."""
        from ..python_numbers import python_value_binary
        return python_value_binary(tx, self, op, other, reverse)


class MaskedSelectionVariable(VariableTracker):
    """``x[mask]`` (a mask of x's shape, or of its leading dims) not taken yet: its length
    depends on the data.

    While only elementwise ops use it, they run on the whole of ``full`` and stay masked
    (``np.sqrt(x[m]) * 2`` is ``(np.sqrt(x) * 2)[m]``); writing it back through the same
    mask (``y[m] = f(x[m])``) is ``np.copyto(y, f(x), where=m)``: no data-dependent size
    at all. Any other use takes the selection for real (:meth:`take`)."""

    def __init__(self, full: ArrayVariable, mask: ArrayVariable,
                 where: ArrayVariable | None = None) -> None:
        self.full = full
        self.mask = mask   # over full's leading dims (all of them, or the rows of a row mask)
        # the mask as a ``where=`` over the whole of full: a row mask with a 1 for each
        # trailing dim (``m[:, None]`` for a 2-D full), so that it broadcasts by rows
        self.where = mask if where is None else where
        self.taken: VariableTracker | None = None

    @property
    def rows(self) -> bool:
        """A mask over the leading dims only: the selection keeps the trailing ones."""
        return len(self.mask.meta.shape) < len(self.full.meta.shape)

    def describe(self) -> str:
        return "a boolean-mask selection"

    def python_type(self) -> type:
        return np.ndarray

    def same_mask(self, other: "MaskedSelectionVariable") -> bool:
        return same_value(other.mask.node, self.mask.node)

    # operators go through call_op, as an array's do (which keeps the selection masked)
    scalar = False   # (never a NumPy scalar: ArrayVariable.binary asks)
    binary = ArrayVariable.binary
    unary = ArrayVariable.unary

    def getattr(self, tx, name: str) -> VariableTracker:
        if self.taken is not None:
            return self.taken.getattr(tx, name)
        if name == "dtype":
            return ConstantVariable(self.full.meta.dtype)
        if name == "ndim":
            return ConstantVariable(1 + len(self.full.meta.shape) - len(self.mask.meta.shape))
        if name in PROPERTY_OPS:   # (not a method: ``Vm.T @ Vm`` of ``Vm = V[m]`` broke the graph)
            return tx.call_op(method_key(name), [self], {}, f"ndarray.{name}")
        if find_spelling(method_key(name)) is not None:
            from .functions import ArrayMethodVariable
            return ArrayMethodVariable(self, name)   # x[m].sum(): decided when called
        return self.take(tx, f"ndarray.{name}").getattr(tx, name)

    def truth(self, tx) -> bool:
        return self.take(tx, "its truth value").truth(tx)

    def length(self, tx) -> VariableTracker:
        return self.take(tx, "len()").length(tx)

    def items(self, tx) -> list[VariableTracker]:
        return self.take(tx, "iteration").items(tx)

    def getitem(self, tx, index: VariableTracker) -> VariableTracker:
        return self.take(tx, "indexing").getitem(tx, index)

    def setitem(self, tx, index: VariableTracker, value: VariableTracker) -> None:
        # (the selection is a copy: writing it leaves the array it came from alone)
        self.take(tx, "item assignment").setitem(tx, index, value)

    def take(self, tx, use: str) -> VariableTracker:
        """The selection itself, for a use that needs it (``use``): ``getitem_mask`` in the
        graph, with its length an unbacked size (or a graph break, if that cannot be)."""
        if self.taken is None:
            from ..selections import take_selection
            self.taken = take_selection(tx, self, f"{use} of x[mask]")
        return self.taken
