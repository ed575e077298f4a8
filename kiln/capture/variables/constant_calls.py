"""Calling a class that capture holds as a constant (``ConstantVariable``): ``np.float32(x)``,
``int(s)``, ``tuple(xs)``, ``dict(...)``, ``slice(...)``, ``np.dtype(...)``, ``functools.partial``,
``np.vectorize``, ``np.errstate``, ``collections.defaultdict``, ``super()``, a user class.

:func:`call_constant` is the whole interface (``VariableTracker.call`` of a constant,
kiln/capture/variables/base.py). Wrapping a value from outside the frame, and the guards it
gets, is kiln/capture/variables/builder.py, which imports this module, not the reverse.
"""
from __future__ import annotations

import collections
import functools
import itertools

import numpy as np

from .base import ConstantVariable, VariableTracker
from . import containers
from .containers import DefaultDictVariable

_HEAP_TYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: the type was made by a class statement


def call_constant(tx, var: ConstantVariable, args: list, kwargs: dict) -> VariableTracker:
    """Calling a class: NumPy scalar types and Python types on constants/runtime scalars."""
    from .arrays import ArrayVariable, PyValueVariable, SymScalarVariable
    cls = var.value
    if not isinstance(cls, type):
        return VariableTracker.call(var, tx, args, kwargs)
    if cls is super and not kwargs:
        from .super_object import make_super
        return make_super(tx, list(args))
    if cls is np.ndarray:  # np.ndarray(shape, dtype): a spelling like any NumPy function
        return tx.call_op(np.ndarray, args, kwargs, "numpy.ndarray")
    if cls in (np.ndindex, np.ndenumerate, np.nditer):
        from .numpy_objects import construct
        made = construct(tx, cls, args, kwargs)
        if made is not None:
            return made
    if issubclass(cls, np.generic) or cls in (int, float, bool, complex):
        if len(args) == 1 and not kwargs and isinstance(args[0], SymScalarVariable):
            ref = tx.output.ns.ref(cls, "type")
            return args[0].apply(tx, ref, cls.__name__, cls, [])
        from ..loops import ScalarValueVariable, apply_scalar
        if len(args) == 1 and not kwargs and cls is not complex and (
                isinstance(args[0], ScalarValueVariable) or tx.output.loop_trace is not None
                and isinstance(args[0], ArrayVariable) and args[0].scalar):
            # a scalar computed in a graph (a loop body's element code)
            return apply_scalar(tx, f"np.{cls.__name__}" if issubclass(cls, np.generic)
                                else cls.__name__, list(args))
        if len(args) == 1 and not kwargs and isinstance(args[0], PyValueVariable) \
                and issubclass(cls, np.generic):
            from ..python_numbers import python_scalar_type
            made = python_scalar_type(tx, cls, args[0])    # ``np.uint16(int(hdr[0]))``
            if made is not None:
                return made
        if len(args) == 1 and isinstance(args[0], ArrayVariable):
            if cls in (int, float, bool, complex):
                from ..loop_lists import python_value
                read = python_value(tx, args[0], cls) if cls in (int, float) else None
                if read is not None:    # in a graph loop's body (``losses.append(float(v))``)
                    return read
                tx.unsupported("data_dependent", f"{cls.__name__}() of an array reads its data",
                               "keep the value as a 0-d array, or move this out of the compiled function")
            result = tx.call_op(("method", "astype"), [args[0], ConstantVariable(np.dtype(cls))], {},
                                f"{cls.__name__}(array)")
            if isinstance(result, ArrayVariable) and not result.tensor and result.meta.shape == () \
                    and result.array_type is np.ndarray:
                # np.float64(a 0-d array) is a NumPy scalar, as x[()] is (astype keeps 0-d)
                result = result.getitem(tx, ConstantVariable(()))
            return result
        if all(a.is_constant() for a in args) and all(v.is_constant() for v in kwargs.values()):
            return ConstantVariable(tx.fold(cls, *[a.value for a in args],
                                            **{k: v.value for k, v in kwargs.items()}))
    if cls in (tuple, list):
        from .containers import ListVariable, TupleVariable
        items = args[0].items(tx) if args else []
        return (TupleVariable if cls is tuple else ListVariable)(items)
    if cls in (set, frozenset) and not kwargs and len(args) <= 1:
        # a set of the items' values, as ``{a, b}`` is (BUILD_SET): Python's own set, made
        # in the same order, so it iterates in Python's order (``sorted(set(ks))``)
        from .sequence_items import key_value
        return ConstantVariable(tx.fold(cls, [key_value(tx, v) for v in (args[0].items(tx) if args else [])]))
    if cls is dict:
        from .containers import DictVariable
        entries = {}
        if args:
            if isinstance(args[0], DictVariable):
                entries.update(args[0].entries)
            else:
                for pair in args[0].items(tx):
                    k, v = pair.items(tx)
                    entries[k.as_constant(tx)] = v
        entries.update(kwargs)
        return DictVariable(entries)
    if cls is slice:
        from .containers import SliceVariable
        parts = list(args) + [ConstantVariable(None)] * (3 - len(args))
        if len(args) == 1:
            parts = [ConstantVariable(None), args[0], ConstantVariable(None)]
        return SliceVariable(*parts)
    if (cls in (str, range) or cls in (np.dtype, np.finfo, np.iinfo)) and \
            all(a.is_constant() for a in list(args) + list(kwargs.values())):
        # np.dtype('float32'), np.finfo(x.dtype), ...: pure on constants.
        result = tx.fold(cls, *[a.value for a in args], **{k: v.value for k, v in kwargs.items()})
        if not isinstance(result, np.ndarray):
            return ConstantVariable(result)
    if cls in (str, range) and all(a.is_constant() for a in args):
        return ConstantVariable(tx.fold(cls, *[a.value for a in args]))
    if cls is range:
        return ConstantVariable(tx.fold(range, *[a.as_constant(tx) for a in args]))
    if cls is functools.partial and args and not isinstance(args[0], ConstantVariable):
        from .functions import PartialVariable
        return PartialVariable(args[0], list(args[1:]), dict(kwargs))
    if cls is np.vectorize:
        from ..vectorize import make_vectorize
        return make_vectorize(tx, list(args), dict(kwargs))
    if cls is np.errstate:  # captured (numpy_objects.errstate), or made and entered as
        from .errstate import errstate   # Python (translator.plain_context_manager)
        made = errstate(tx, list(args), dict(kwargs))
        if made is not None:
            return made
        tx.unsupported("unsupported_call", "making and entering np.errstate runs as Python; "
                       "the with statement's body is compiled")
    if cls is collections.defaultdict and (not args or args[0].is_constant() and
                                           args[0].value in DefaultDictVariable.FACTORIES):
        made = call_constant(tx, ConstantVariable(dict), list(args[1:]), dict(kwargs))
        if type(made) is containers.DictVariable:
            return DefaultDictVariable(args[0].value if args else None, made.entries)
    from .iterators import POOLED, accumulate, pooled
    if cls in POOLED:
        return pooled(tx, cls, list(args), dict(kwargs))
    if cls is itertools.accumulate:
        return accumulate(tx, list(args), dict(kwargs))
    from .user_classes import construct
    made = construct(tx, cls, list(args), dict(kwargs))
    if made is not None:
        return made
    if not cls.__flags__ & _HEAP_TYPE:   # set, map, collections.defaultdict, itertools.chain
        tx.unsupported("unsupported_call", f"constructing {cls.__module__}.{cls.__qualname__} objects "
                       f"is not supported (a built-in type kiln has no model of: it runs as Python)")
    tx.unsupported("unsupported_call", f"constructing {cls.__qualname__} objects is not supported "
                   f"(its class runs code of its own when made: __new__, a metaclass, "
                   f"__setattr__, __slots__, __del__ or a C base)",
                   "create the object outside the compiled function and pass it in")
