"""Calling a NumPy spelling on trackers: normalize through ops/, record a graph node.

The steps: turn trackers into what the spelling's normalizer expects (arrays become
:class:`ArrayArg`, a TensorMeta that remembers its tracker; runtime scalars their example
value), bind, then map the bound inputs back to graph values. A runtime scalar that ends
up in a *parameter* is specialized (guarded by value); an array there breaks the graph.
In-place forms (``x += y``, ``out=``, mutation ops) are rewritten into a new node when
the target array was made in the graph and nothing else can see it; otherwise they are
recorded as mutation ops (``copyto``, ``setitem``, ``add_at``, ``fill``) writing into the
target's node, in program order: the eager interpreter runs them in place, aot
functionalizes them and writes final values back into the caller's arrays (docs/aot.md §5):
kiln/capture/array_writes.py. Recording one normalized op call as a node (``_emit``):
kiln/capture/opcall_emit.py.
"""
from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from ..errors import KilnError
from ..ops import (REGISTRY, Bound, Category, Composite, TensorMeta, describe_callable,
                   find_spelling)
from ..ops.speculation import speculating
from ..ops.registry import CALLER_FRAME_READERS, ambient_hook
from .breaks import HINTS
from .call_inputs import (ArrayArg, binds_with_numbers, constants_of, example_of, flatten,
                          numpy_deprecation, numpy_warns_on_empty, objects_the_normalizer_added,
                          specialize_read_sizes, to_bind)
from .const_fold import fold_ufunc
from .device_arrays import converts_device_arrays
from .python_numbers import SAME_AS_WEAK, narrowed_int
from .variables.arrays import (ArrayVariable, MaskedSelectionVariable, PyValueVariable,
                               SymScalarVariable)
from .variables.base import ConstantVariable, VariableTracker


def call_op(tx, key: Any, args: list, kwargs: dict, what: str) -> VariableTracker:
    if tx.output.loop_trace is not None:   # inside a loop body: element code only
        from .loops import call_in_body
        return call_in_body(tx, key, args, kwargs, what)
    if any(isinstance(a, StackedListVariable) for a in args):   # ``np.array(ys)`` after a graph loop
        key, args, kwargs = stacking_call(tx, key, args, kwargs)
    spelling = find_spelling(key)
    folded = fold_ufunc(key, spelling.op if spelling is not None else None, args, kwargs)
    if folded is not None:
        return folded
    if spelling is None:
        if any(key is f for f in CALLER_FRAME_READERS):
            tx.unsupported("unsupported_call", f"{describe_callable(key)} reads its caller's frame; "
                           f"the function runs as Python", reads_frame=True)
        tx.unsupported("unsupported_call", f"{describe_callable(key)} has no kiln op", HINTS["numpy"])
    if tx.output.device_type is not None:
        converts_device_arrays(tx, key, list(args) + list(kwargs.values()))
    def taken(v):  # a selection taken already is its array
        return v.taken if isinstance(v, MaskedSelectionVariable) and v.taken is not None else v
    args, kwargs = [taken(a) for a in args], {k: taken(v) for k, v in kwargs.items()}
    args, kwargs = _lists_of_arrays_stacked(tx, spelling, args, kwargs)
    if spelling.array_items and args:
        args = [_run_time_items_made(tx, spelling.array_items, args[0])] + list(args[1:])
    if spelling.op is not None and spelling.op.category == Category.POINTWISE:
        args, kwargs = _weak_values(tx, args, kwargs, spelling.op)
    masked = [a for a in flatten(list(args) + list(kwargs.values()))
              if isinstance(a, MaskedSelectionVariable)]
    if masked:
        return selections.masked_call_of(tx, key, spelling, list(args), dict(kwargs), masked, what)
    scalars: dict[int, list] = {}
    # (an op taking run-time slices takes them from its spelling's argument at that
    # position: the index of ``x[index]`` and ``x[index] = value``)
    at = spelling.op.runtime_slices if spelling.op is not None else None
    bargs = [to_bind(tx, a, scalars, i == at) for i, a in enumerate(args)]
    bkwargs = {k: to_bind(tx, v, scalars) for k, v in kwargs.items()}
    if scalars:
        # A literal that *is* a runtime scalar's example object would be mistaken for it:
        # specialize such scalars first (they are rare: small ints written twice).
        consts: list = []
        for a, v in list(zip(args, bargs)) + [(kwargs[k], v) for k, v in bkwargs.items()]:
            constants_of(a, v, consts)
        shared = {id(c) for c in consts} & set(scalars)
        for ident in shared:
            for sym in scalars.pop(ident):
                sym.as_constant(tx)
    # one object standing for several run-time numbers (CPython's True, its small ints):
    # told apart by order where the spelling takes them in order, else specialized (below)
    one_object = [ident for ident, syms in scalars.items() if len({s.code for s in syms}) > 1]
    filename, lineno, _ = tx.location()
    # (ops whose result dtype depends on the values speculate it per user line)
    with speculating(f"{filename}:{lineno}", tx.output.dynamic.kinds, lambda a: example_of(tx, a)):
        try:
            bound = spelling.bind(*bargs, **bkwargs)
        except KilnError as e:
            tx.unsupported("unsupported_call", f"{spelling.text}: {e}")
        except Exception as e:  # the user's own mistake: NumPy would raise it too
            if binds_with_numbers(spelling, bargs, bkwargs):
                tx.unsupported("unsupported_value", f"{spelling.text}: an array as a static parameter")
            tx.user_error(e)
        warned = numpy_warns_on_empty(key, bound, bargs, bkwargs)
        if warned is not None:
            tx.unsupported("numpy_warning", f"{spelling.text} on an empty array warns in NumPy "
                           f"('{warned}'); it runs as NumPy so the warning comes out")
        deprecated = numpy_deprecation(key, bound, bargs, bkwargs)
        if deprecated is not None:
            tx.unsupported("numpy_warning", f"{spelling.text} gives a {type(deprecated).__name__} "
                           f"in NumPy {np.__version__} ('{deprecated}'); it runs as NumPy so "
                           f"the warning comes out")
        used: set[int] = set()
        in_order = isinstance(bound, Composite) and bound.passes_scalars and bound.in_order
        if not isinstance(bound, Composite):   # (a run-time True passed as np.copyto's src)
            one_object += [i for i in objects_the_normalizer_added(bargs + list(bkwargs.values()), bound, scalars)
                           if i not in one_object]
        for ident in one_object:
            if in_order:
                scalars[ident] = InOrder(scalars[ident])
            else:
                for sym in scalars.pop(ident):
                    sym.as_constant(tx)
        if isinstance(bound, Composite):
            if not bound.passes_scalars:
                _specialize_shared_objects(tx, scalars)
            result = _composite(tx, spelling.text, bound, scalars, used)
            for ident, syms in list(scalars.items()):
                if not (isinstance(syms, InOrder) and syms):
                    continue
                if len(syms) < syms.given:
                    tx.unsupported("unsupported_call", f"{spelling.text}: kiln cannot tell its "
                                   f"run-time numbers apart (one object, some taken by no op)")
                for sym in scalars.pop(ident):   # none taken (made into a constant)
                    sym.as_constant(tx)
        else:
            specialize_read_sizes(tx, bargs + list(bkwargs.values()), bound)
            result = _emit(tx, spelling.text, bound, scalars, used)
            if bound.op.category == Category.CREATION:
                _int64_range_guarded(tx, scalars, used)
    passed = [v for v in flatten(bargs + list(bkwargs.values())) if isinstance(v, ArrayArg)]
    if not isinstance(bound, Composite) and any(id(v) not in used and v is not bound.out for v in passed):
        # (a composite may leave an input unused: np.linalg.matrix_power(a, 0) is eye)
        tx.unsupported("unsupported_call", f"{spelling.text}: kiln cannot follow an array argument")
    for ident, syms in scalars.items():
        if ident not in used:
            # The normalizer turned the value into something else (float(n), a dtype...):
            # whatever it became is baked into the graph, so the value must be guarded.
            for sym in syms:
                sym.as_constant(tx)
    if isinstance(bound, Composite) or bound.out is None or not isinstance(result, ArrayVariable) \
            or bound.op.mutates:
        return result
    if bound.op.out_c_order:
        check_c_order_out(tx, spelling.text, bound.out, result)
    return write_out(tx, spelling.text, bound.out, result, bound.out_broadcasts)


def _int64_range_guarded(tx, scalars: dict, used: set) -> None:
    """A creation op's normalizer reads a Python int's dtype from its size, as NumPy does
    (``np.full(2, n)`` is int64, uint64 for ``n = 2 ** 63``, object past it): a run-time
    int taken by one is guarded to stay on the example's side of int64's range (a later
    ``2 ** 63`` recompiles, for NumPy's dtype, instead of overflowing the int64 fill)."""
    for ident in used:
        for sym in scalars.get(ident, ()):
            if type(sym.example) is not int:
                continue
            ranges = [(-2 ** 63, 2 ** 63, "-2 ** 63 <= {} < 2 ** 63")]
            if not -2 ** 63 <= sym.example < 2 ** 63:   # uint64's, or past it (object)
                ranges.append((0, 2 ** 64, "0 <= {} < 2 ** 64"))
            for low, high, text in ranges:
                tx.guards.add_truth(f"({low} <= {sym.code} < {high})", f"({text.format(sym.text)})",
                                    low <= sym.example < high, sym.leaves)


def _lists_of_arrays_stacked(tx, spelling, args: list, kwargs: dict) -> tuple:
    """A list or tuple holding arrays where NumPy makes an array of it first
    (``np.sum([x, y], axis=0)``): their stack (``np.asarray``), so the op's shape rules
    and axes see the array NumPy sees, not a sequence of two."""
    from .variables.containers import TupleVariable   # (ListVariable is one)
    count, names = spelling.array_like_args()

    def stacked(v: VariableTracker) -> VariableTracker:
        if isinstance(v, TupleVariable) and _holds_array(v):
            return call_op(tx, np.asarray, [v], {}, "numpy.asarray")
        return v
    if not count and not names:
        return args, kwargs
    return ([stacked(a) if i < count else a for i, a in enumerate(args)],
            {k: stacked(v) if k in names else v for k, v in kwargs.items()})


def index_lists_stacked(tx, index: VariableTracker) -> VariableTracker:
    """``x[[i, j]]``, ``x[[i, j], 0]`` of NumPy integers the graph holds (``for a, b in
    pairs``): NumPy makes an array of a list in an index, and so does the graph
    (``np.asarray``), as for the lists NumPy functions take."""
    from .variables.containers import ListVariable, TupleVariable

    def stacked(v: VariableTracker) -> VariableTracker:
        if isinstance(v, ListVariable) and _holds_array(v):
            return call_op(tx, np.asarray, [v], {}, "numpy.asarray")
        return v
    if type(index) is TupleVariable:
        entries = [stacked(v) for v in index.item_list]
        return index if all(a is b for a, b in zip(entries, index.item_list)) else TupleVariable(entries)
    return stacked(index)


def numbers_stacked(tx, target: ArrayVariable, value: VariableTracker) -> VariableTracker:
    """``out[step] = S, E, I, R`` of run-time floats (np.float64 arguments, a SEIR model's
    state row) into a float array: NumPy makes an array of the sequence first, and so does
    the graph (``np.asarray``, whose spelling makes run-time numbers inputs), where NumPy's
    constant array of their values would recompile at every new value."""
    from ..ops.from_data import numbers_dtype
    from .variables.containers import TupleVariable   # (ListVariable is one)
    if not isinstance(value, TupleVariable) or target.meta.dtype.kind != "f" \
            or not any(isinstance(v, SymScalarVariable) for v in value.item_list):
        return value
    examples = [v.example if isinstance(v, SymScalarVariable) else
                v.value if isinstance(v, ConstantVariable) else None for v in value.item_list]
    if getattr(numbers_dtype(examples), "kind", "") != "f":
        return value
    return call_op(tx, np.asarray, [value], {}, "numpy.asarray")


def _run_time_items_made(tx, array_items: str, items: VariableTracker) -> VariableTracker:
    """``np.stack([S, dt])``, ``np.hstack([[S], [dt]])`` of run-time floats: NumPy makes an
    array of each item first, and so does the graph (``np.asarray``, which makes them
    inputs), where NumPy's constant array of each value would recompile at every new value.
    ``"strong"`` (np.concatenate): a Python number stays itself (NEP 50's weak scalar)."""
    from ..ops.from_data import numbers_dtype
    from .variables.containers import ListVariable, TupleVariable

    def runtime_floats(v: VariableTracker) -> bool:
        if isinstance(v, SymScalarVariable):
            return getattr(numbers_dtype([v.example]), "kind", "") == "f" and (
                array_items == "all" or isinstance(v.example, np.generic))
        if not isinstance(v, TupleVariable) or not any(isinstance(i, SymScalarVariable) for i in v.item_list):
            return False
        examples = [i.example if isinstance(i, SymScalarVariable) else
                    i.value if isinstance(i, ConstantVariable) else None for i in v.item_list]
        return getattr(numbers_dtype(examples), "kind", "") == "f"
    if not isinstance(items, TupleVariable) or not any(map(runtime_floats, items.item_list)):
        return items
    made = [call_op(tx, np.asarray, [v], {}, "numpy.asarray") if runtime_floats(v) else v
            for v in items.item_list]
    return ListVariable(made) if isinstance(items, ListVariable) else TupleVariable(made)


def _holds_array(v: VariableTracker) -> bool:
    from .variables.containers import TupleVariable
    return any(isinstance(i, (ArrayVariable, MaskedSelectionVariable))
               or isinstance(i, TupleVariable) and _holds_array(i) for i in v.item_list)


def _specialize_shared_objects(tx, scalars: dict) -> None:
    """A composite's own small ints and bools (the 0 of ``greater(x, 0)`` in np.nan_to_num,
    a ``range`` index) are found by identity like run-time scalars, and CPython shares
    those objects: a run-time ``nan=0`` would take the place of every 0 in the composite.
    Such scalars are specialized (guarded by value) before a composite runs, unless it
    promises to pass them straight to its ops (``Composite.passes_scalars``)."""
    for ident, syms in list(scalars.items()):
        ex = syms[0].example
        if isinstance(ex, (bool, np.bool_)) or (type(ex) is int and -5 <= ex <= 256):
            for sym in scalars.pop(ident):
                sym.as_constant(tx)


def _weak_values(tx, args: list, kwargs: dict, op: Any) -> tuple:
    """A Python float or int the graph read from data (``np.random.normal()``, a
    PyValueVariable) or computed in a loop (``n += 1`` counted in a loop node, then
    ``total / n``) as an elementwise operand: its 0-d array where the other operands'
    dtypes give NumPy's result dtype either way (``x * np.random.random()`` of float64 x),
    or the other operands' dtype where NumPy converts a computed int into it (``x + i``
    of a float32 ``x``: python_numbers.narrowed_int); otherwise it stays, and passing it
    breaks the graph."""
    from .loops import ScalarValueVariable
    values = list(args) + list(kwargs.values())
    computed = [v for v in values if isinstance(v, ScalarValueVariable)
                and type(v.example) in SAME_AS_WEAK and tx.output.loop_trace is None]
    weak = [v for v in values if isinstance(v, PyValueVariable) and v.kind in SAME_AS_WEAK]
    if not weak and not computed:
        return args, kwargs
    # (a NumPy scalar or array constant, ``np.float32(0.5)``, is strong like an array)
    others = [str(v.meta.dtype) for v in values if isinstance(v, ArrayVariable)] \
        + [str(v.value.dtype) for v in values
           if isinstance(v, ConstantVariable) and isinstance(v.value, (np.generic, np.ndarray))]
    kinds = [w.kind for w in weak] + [type(c.example) for c in computed]
    if not all(d in SAME_AS_WEAK[k] for k in kinds for d in others):
        into = None if weak else narrowed_int(op, args, kwargs, computed, others)
        if into is None:
            return args, kwargs
        from .loops import apply_scalar

        def narrowed(a):
            if not any(a is c for c in computed):
                return a
            through_double = into == "np.float32" and type(a.example) is int
            return apply_scalar(tx, into, [apply_scalar(tx, "np.float64", [a]) if through_double else a])
        return [narrowed(a) for a in args], kwargs
    # NumPy converts a weak Python int to float64 next to float64 operands: exactly, for
    # ints beyond int64 too
    floating = all(d in ("float64", "complex128") for d in others)
    # beside NumPy scalars alone, a Python float is their scalar math's operand, as an
    # np.float64 is (``math.exp(v) >= z`` of a complex128 ``z``: complex scalar math, which
    # never warns; as a 0-d array it was np.greater_equal's, "invalid value encountered")
    scalars_only = any(isinstance(v, ArrayVariable) for v in values) and all(
        v.scalar and not v.tensor for v in values if isinstance(v, ArrayVariable))

    def strong(v):
        if isinstance(v, PyValueVariable) and v.kind is float and scalars_only:
            scalar = ArrayVariable(v.array.node, ())
            scalar.scalar = True
            return scalar
        if isinstance(v, PyValueVariable) and v.kind in SAME_AS_WEAK:
            return v.array
        if any(v is c for c in computed):
            from .loops import apply_scalar
            return apply_scalar(tx, "np.float64" if floating or type(v.example) is float
                                else "np.int64", [v])
        return v
    return [strong(a) for a in args], {k: strong(v) for k, v in kwargs.items()}


# the errors NumPy raises for a call it refuses (AxisError and LinAlgError are ValueErrors)
NUMPY_ERRORS = (ValueError, TypeError, IndexError, ArithmeticError)

_ONE_CALLS = itertools.count()   # Composite.one_call: each such call's nodes share a number


def _composite(tx, text: str, c: Composite, scalars: dict, used: set) -> VariableTracker:
    """Run a composite spelling's function on ArrayArgs: each ``F`` call in it is captured
    like a NumPy call of its own (ArrayArg.__kiln_op__); the result is their tracker(s)."""
    if c.attribute is not None and c.inputs and isinstance(c.inputs[0], ArrayArg):
        used.add(id(c.inputs[0]))
        return c.inputs[0].var.getattr(tx, c.attribute)
    if c.type_only:   # (a run-time number's type is guarded: its value is not read)
        used.update(id(v) for v in flatten(c.inputs) if id(v) in scalars)
    _COMPOSING.append((tx, text, scalars, used, c.relative_sizes))
    before = len(tx.output.graph.nodes)
    try:
        with ambient_hook(_composed_op, lambda value: id(value) in scalars):
            result = c.fn(*c.inputs, **c.params)
    except KilnError as e:
        tx.unsupported("unsupported_call", f"{text}: {e}")
    except NUMPY_ERRORS as e:
        # the user's own mistake, as at bind: a spelling raises NumPy's error (np.select's
        # TypeError, np.nonzero of a 0-d array, a reduction's AxisError), and NumPy would
        # raise it too, after the writes before it (other exceptions are kiln's: internal)
        tx.user_error(e)
    finally:
        _COMPOSING.pop()
    # The composite's own steps, not its results: one it computed and left unused (a
    # mean it replaced) is no call of NumPy's, whose warnings would count (ir/passes.py)
    results = {id(v.var.node) for v in flatten((result,)) if isinstance(v, ArrayArg)}
    group = next(_ONE_CALLS)
    for node in tx.output.graph.nodes[before:]:
        if node.kind == "call" and id(node) not in results:
            node.meta["inner"] = True
        if node.kind == "call" and c.quiet:   # NumPy's call warns of no floating-point error
            node.meta["quiet"] = True
        if node.kind == "call" and c.one_call:   # the nodes of one NumPy call, as its first
            node.meta["one_call"] = group
    writes = [n for n in tx.output.graph.nodes[before:] if n.kind == "call" and n.target.mutates]
    if c.out_write and writes:   # (NumPy's call writes before its cast's error: Composite)
        writes[-1].meta["out_write"] = True
    if not c.relative_sizes and any(type(v) is int for v in flatten((result,))):
        # A Python int out of a spelling may be a size of its inputs: the example's number
        # holds only for the example's sizes (guarded; a dynamic dim becomes a fixed one).
        for value in flatten(c.inputs):
            if isinstance(value, ArrayArg):
                value.var.specialize_dims(tx)
    if c.ufunc is not None:
        # each result's node is computed by that ufunc's call: it warns as that call
        for i, value in enumerate(result):
            if isinstance(value, ArrayArg) and getattr(value.var.node, "kind", None) == "call":
                value.var.node.meta["ufunc"] = (c.ufunc, i)
    var = _tracker_of(tx, result, used, text)
    if c.python is not None and isinstance(var, ArrayVariable):
        var = PyValueVariable(var, c.python)
    for value in flatten(c.inputs):
        if isinstance(value, ArrayArg) and value.var.tensor and value.var is var:
            # np.asarray(t) of a Tensor is its data, not the Tensor: Python decides.
            tx.unsupported("unsupported_call", f"{text} of a kiln.Tensor gives its NumPy data")
    if c.out is not None:
        used.add(id(c.out))
        if not isinstance(var, ArrayVariable):
            tx.unsupported("unsupported_value", f"{text}: out= for several results")
        return write_out(tx, text, c.out, var, c.out_broadcasts)
    return var


def _tracker_of(tx, value: Any, used: set, text: str = "") -> VariableTracker:
    from .variables.containers import ListVariable, NamedTupleVariable, TupleVariable
    if isinstance(value, ArrayArg):
        used.add(id(value))   # an input handed back as it is (np.asarray(x) is x)
        return value.var
    if isinstance(value, tuple) and hasattr(type(value), "_fields"):   # SVDResult, ...
        return NamedTupleVariable(type(value), [_tracker_of(tx, v, used, text) for v in value])
    if isinstance(value, tuple):
        return TupleVariable([_tracker_of(tx, v, used, text) for v in value])
    if isinstance(value, list):
        return ListVariable([_tracker_of(tx, v, used, text) for v in value])
    if isinstance(value, np.ndarray):
        # computed from constants alone (np.indices((3, 4))): a copy of the graph's
        # constant on every call, so no two calls share (and can overwrite) one result
        copied = _emit(tx, text, Bound(REGISTRY["copy"], (ArrayArg(tx.output.constant_array(value)),), {}),
                       {}, set())
        if value.flags.writeable:
            return copied
        # a read-only one (np.frombuffer of bytes) stays so: a view that refuses writes
        # (a write runs as Python, where NumPy raises; the caller gets a read-only array)
        return _emit(tx, text, Bound(REGISTRY["broadcast_to"], (ArrayArg(copied),), {"shape": value.shape}),
                     {}, set())
    return ConstantVariable(value)


def _composed_op(op: Any, inputs: tuple, params: dict) -> Any:
    """An ``F`` call inside a composite spelling, on ArrayArgs: a node of its own."""
    tx, text, scalars, used, _ = _COMPOSING[-1]
    if tx.output.device_type is not None and _makes_array(op, inputs):
        # an array made from Python values alone (np.diff's append=0.0 broadcast): NumPy's
        # kernel would make it on the host, where a GPU graph's operations refuse it
        if any(id(v) in scalars for v in flatten(inputs)):
            tx.unsupported("unsupported_call", f"{text} makes an array from a run-time scalar "
                           f"for arrays on a GPU", "it runs as Python, where the array library "
                           "makes it on the device")
        value = op.impl(*inputs, **params)
        if isinstance(value, np.ndarray):
            # a graph constant (copied to the device once), copied per call like any array
            # computed from constants
            return ArrayArg(_tracker_of(tx, value, used, text))
    # (a composite's ops see arrays only: a selection in it is taken, not deferred)
    var = _emit(tx, text, Bound(op, inputs, params), scalars, used, defer=False)
    return ArrayArg(var) if isinstance(var, ArrayVariable) else var


def _makes_array(op: Any, inputs: tuple) -> bool:
    """Does ``op`` make an array from Python values alone (no array input), which capture
    may run once (not a draw, nothing that raises or writes)?"""
    if op.category not in (Category.CREATION, Category.VIEW, Category.POINTWISE, Category.JOIN) \
            or op.may_raise or op.mutates or op.data_dependent:
        return False
    return not any(isinstance(v, (ArrayArg, TensorMeta)) for v in flatten(inputs))


ArrayArg.__kiln_op__ = staticmethod(_composed_op)


# The writes (their module imports selections too) and the layer above this one (x[mask]
# not taken yet): both import this module's core; so does the node recording (opcall_emit
# imports both), imported last
from .array_writes import check_c_order_out, write_out  # noqa: E402
from . import selections  # noqa: E402
from .loop_lists import StackedListVariable, stacking_call  # noqa: E402
from .opcall_emit import _COMPOSING, InOrder, _emit  # noqa: E402
