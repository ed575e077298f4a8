"""The symbolic interpreter: one handler per CPython opcode (3.11-3.13), named after it.

Handlers are grouped by the version that introduced their opcode; where versions differ
only in a fact (the NULL's side of a callable, MAKE_FUNCTION's flags) the handler asks
``bytecode_facts``, which holds every per-version fact.

An :class:`InstructionTranslator` runs a code object over trackers instead of values:
a symbolic stack, symbolic locals and cells. Array operations become graph nodes; loops
over known iterables are unrolled (``FOR_ITER`` pops the next known item); calls into
Python functions start a child translator sharing the same output (inlining). Anything
it cannot handle raises :class:`BreakGraph` with a record pointing at the user's line.
"""
from __future__ import annotations

import inspect
import operator
import types
import warnings
from typing import Any

import numpy as np

from ..config import config
from ..ops.mutation import one_element_work
from .loop_branches import merge_returns
from .loop_types import type_free_operands
from . import bytecode_facts as bc
from .decode import Inst, decode
from .generator_uses import drained_where_made
from .binding import bind_arguments
from .build_opcodes import BuildOpcodes
from .control_opcodes import ControlOpcodes
from .newer_opcodes import NewerOpcodes
from .name_opcodes import NameOpcodes
from .breaks import HINTS, BreakGraph, GraphBreak, StopCapture
from .opcall import call_op
from .output import OutputGraph
from .resume import in_open_with
from .sources import AttrSource
from .variables.arrays import ArrayVariable, MaskedSelectionVariable, PyValueVariable, SymScalarVariable
from .variables.base import (NULL, CellVariable, ConstantVariable, LazyVariable, RealCellVariable,
                             VariableTracker, stores_itself)
from .variables.builder import wrap
from .variables.containers import ContainerMethodVariable, DictVariable, ListVariable, TupleVariable
from .variables.iterators import IteratorVariable
from .variables.errstate import ErrstateVariable
from .variables.functions import ModuleVariable, NestedFunctionVariable, UserObjectVariable
from .variables.sequence_items import key_value
from .variables.user_classes import NewObjectVariable

MAX_INLINE_DEPTH = 32
MAX_STEPS = 200_000
# Steps of a loop unrolled before asking whether it only does one-element work.
SCALAR_LOOP_PROBE = 32
# Past this many operations an unrolled loop's graph costs more to lower and build than
# compiling can win back (its steps differ: growing slices); under the cost model the
# function runs as Python. Loops captured as loop nodes are not unrolled.
MAX_UNROLLED_OPS = 2000
# Steps adding no graph op (Python work on constants, folded): ~1000x Python's time to follow.
MAX_FOLDED_LOOP_STEPS = 20_000


def plain_context_manager(cls: Any) -> bool:
    """A user class whose ``__enter__``/``__exit__`` are Python functions: entering and
    exiting it run as Python, its with body compiles. ``np.errstate`` too: entered as
    Python it sets NumPy's error mode, and a compiled call checks that mode as it starts
    (``runtime/fpmode.py``: a mode that raises or calls runs the graph with NumPy), so the
    body behaves exactly as NumPy's. Other NumPy and kiln context managers stay whole
    statements run as Python."""
    if not isinstance(cls, type):
        return False
    root = (getattr(cls, "__module__", "") or "").split(".")[0]
    return (root not in ("numpy", "kiln") or cls is np.errstate) and all(
        isinstance(inspect.getattr_static(cls, m, None), types.FunctionType)
        for m in ("__enter__", "__exit__"))


class InstructionTranslator(BuildOpcodes, ControlOpcodes, NewerOpcodes, NameOpcodes):
    def __init__(self, output: OutputGraph, code: types.CodeType, fn_globals: dict,
                 symbolic_locals: dict, cells: dict, parent: "InstructionTranslator | None" = None,
                 name: str = "") -> None:
        self.output = output
        self.guards = output.guards
        self.decoded = decode(code)
        self.code = code
        self.fn_globals = fn_globals
        self.locals = symbolic_locals
        self.cells = cells
        # 3.12+: cell variables an inlined comprehension shadows (its LOAD_FAST_AND_CLEAR
        # took the cell out of the slot; until the STORE_FAST that puts it back, the name's
        # loads and stores are of a plain local)
        self.shadowed_cells: set = set()
        self.parent = parent
        self.open_errstates: list = []   # captured np.errstate withs open (variables/errstate.py)
        self.depth = parent.depth + 1 if parent else 0
        self.name = name or code.co_name
        self.stack: list[VariableTracker] = []
        self.kw_names: tuple = ()
        self.ip = 0
        self.inst: Inst | None = None
        self.result: VariableTracker | None = None
        self.generator = bc.is_generator_code(code)
        self.yielded: list[VariableTracker] = []
        self.steps = 0
        self.loop_stats: dict[int, list] = {}   # iterator -> [steps taken, nodes before]
        self.stop_at: int | None = None  # root only: stop before this instruction (partial graphs)

    # -- driving ----------------------------------------------------------------------
    def run(self) -> VariableTracker:
        from .loop_heads import note_head, while_heads
        instructions = self.decoded.instructions
        heads = while_heads(self)    # a while loop's head: its state, for a loop node later
        came_from = -1
        while self.result is None:
            if self.ip >= len(instructions):
                raise AssertionError(f"fell off the end of {self.code.co_name}")
            if self.ip in heads and self.output.loop_trace is None and note_head(self, came_from):
                came_from = -1
                continue      # the whole while loop is one loop node
            came_from = self.ip
            self.step(instructions[self.ip])
        return self.result

    def step(self, inst: Inst) -> None:
        """Run one instruction (the driver above; loop bodies traced by capture/loops.py)."""
        if inst.index == self.stop_at:
            raise StopCapture(self)
        self.inst = inst
        self.ip += 1
        self.steps += bc.STEP_COST.get(inst.opname, 1)
        if self.steps > MAX_STEPS:
            self.unsupported("unsupported_opcode", f"more than {MAX_STEPS} instructions "
                             "(a very long or endless loop)")
        if inst.in_try and not (self.parent is None and in_open_with(self.code, inst.index)):
            # A try body's normal path is captured like any code. An exception raised in it
            # at capture (a break, a user error) makes the whole statement run as Python
            # (flow.region); one its graph raises at run time reruns the function as Python
            # from its start, so the except clause runs as without kiln (entries.graph_call).
            self.output.catches = True
        handler = getattr(self, inst.opname, None)
        if handler is None:
            self.unsupported("unsupported_opcode", f"opcode {inst.opname} is not supported",
                             HINTS["opcode"])
        handler(inst)

    def location(self) -> tuple:
        lineno = self.inst.lineno if self.inst else self.code.co_firstlineno
        return (self.code.co_filename, lineno, self.decoded.source_line(lineno))

    def unsupported(self, kind: str, reason: str, hint: str = "", guards: tuple = (),
                    reads_frame: bool = False) -> None:
        """Break the graph here. ``reads_frame``: the call reads its caller's frame, so the
        whole function runs as Python (no partial graph; BreakGraph.reads_frame)."""
        filename, lineno, line = self.location()
        # (raised, not held in a local: the frame would hold its own traceback, a cycle that
        # kept the capture's arguments alive until the next gc run)
        raise BreakGraph(GraphBreak(kind, reason, filename, lineno, line, hint), depth=self.depth,
                         guards=guards, reads_frame=reads_frame)

    def user_error(self, exc: BaseException) -> None:
        filename, lineno, line = self.location()
        raise BreakGraph(GraphBreak("user_error", f"{type(exc).__name__}: {exc}", filename, lineno,
                                    line, "the function raises here; it runs as plain Python so "
                                    "the error comes from your code"), exc, depth=self.depth)

    def fold(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        """Run a pure Python operation on constants; its exceptions are the user's. NumPy
        scalar math that warns (``np.uint8(200) + np.uint8(100)`` overflows), or a NumPy
        scalar made with a warning (``np.float16(70000.0)``: "overflow encountered in
        cast"), is not folded: every call of the function warns, so it runs as Python."""
        try:
            if not any(isinstance(a, np.generic) for a in args) and not (
                    isinstance(fn, type) and issubclass(fn, np.generic)):
                return fn(*args, **kwargs)
            with warnings.catch_warnings(record=True) as seen, np.errstate(all="warn"):
                warnings.simplefilter("always")
                value = fn(*args, **kwargs)
            if seen:
                self.unsupported("numpy_warning", f"{getattr(fn, '__name__', fn)} of NumPy scalars "
                                 f"warns ('{seen[0].message}'); it runs as Python so the warning comes out")
            return value
        except BreakGraph:
            raise
        except Exception as e:
            self.user_error(e)

    def call_op(self, key: Any, args: list, kwargs: dict, what: str) -> VariableTracker:
        return call_op(self, key, args, kwargs, what)

    def push(self, var: VariableTracker) -> None:
        self.stack.append(var)

    def pop(self) -> VariableTracker:
        return self.stack.pop()

    def popn(self, n: int) -> list[VariableTracker]:
        if n == 0:
            return []
        items = self.stack[-n:]
        del self.stack[-n:]
        return items

    # -- shared operations ----------------------------------------------------------------
    def binary_op(self, op: Any, a: VariableTracker, b: VariableTracker) -> VariableTracker:
        inplace = op in bc.INPLACE_TO_PLAIN
        if getattr(a, "vector", False):   # a slice in a loop body (kiln/capture/loop_vectors.py)
            return a.binary(self, op, b, reverse=False)
        if inplace and (not isinstance(a, (ArrayVariable, ListVariable, MaskedSelectionVariable))
                        or isinstance(a, ArrayVariable) and a.scalar) \
                and not (isinstance(a, ConstantVariable) and type(a.value) is set):
            # NumPy scalars are immutable: ``s += 1`` rebinds s; a set's ``s |= t`` changes
            # it, as every name holding it sees (ConstantVariable.binary)
            op = bc.INPLACE_TO_PLAIN[op]
        if getattr(b, "vector", False):
            return b.binary(self, op, a, reverse=True)
        a, b = type_free_operands(a, b)   # ``v / max(s, 1e-12)``
        if isinstance(a, ArrayVariable):
            return a.binary(self, op, b, reverse=False)
        if isinstance(b, ArrayVariable):
            return b.binary(self, op, a, reverse=True)
        result = a.binary(self, op, b, reverse=False)
        if result is NotImplemented:
            result = b.binary(self, op, a, reverse=True)
        if result is NotImplemented:
            self.unsupported("unsupported_value",
                             f"operator {bc.OPERATOR_SYMBOLS.get(op, op.__name__)} on "
                             f"{a.describe()} and {b.describe()}")
        return result

    def call_function(self, fn: VariableTracker, args: list, kwargs: dict) -> VariableTracker:
        return fn.call(self, list(args), dict(kwargs))

    def inline_call(self, code: types.CodeType, fn_globals: dict, closure: list, defaults: list,
                    kwdefaults: dict, args: list, kwargs: dict, name: str) -> VariableTracker:
        if self.depth >= MAX_INLINE_DEPTH:
            self.unsupported("unsupported_call", f"calls nested deeper than {MAX_INLINE_DEPTH} (recursion?)")
        if bc.is_async_code(code):
            self.unsupported("unsupported_call", f"{name} is a coroutine")
        symbolic = bind_arguments(self, code, defaults, kwdefaults, args, kwargs, name)
        cells = {n: c for n, c in zip(code.co_freevars, closure)}
        child = InstructionTranslator(self.output, code, fn_globals, symbolic, cells, parent=self,
                                      name=name)
        child.steps = self.steps
        effects = len(self.output.side_effects)
        trace = self.output.loop_trace
        called_under = trace.active if trace is not None else None
        result = merge_returns(child, child.run(), called_under)   # (returns in a loop body's branches)
        self.steps = child.steps
        if child.generator:
            if len(self.output.side_effects) != effects:
                # Unrolled, the whole body ran when the generator was made: its side
                # effects would come before the caller's.
                self.unsupported("unsupported_call", f"generator {name} changes objects from "
                                 f"outside: it runs as Python")
            if not drained_where_made(self, child, list(symbolic.values())):
                # Kept under a name, passed to a function, read by a loop that writes:
                # what it walks may change before its last item (``g = (v for v in l);
                # l.append(x); list(g)`` sees x). Unrolled now, it would not.
                self.unsupported("unsupported_call", f"generator {name} is not drained "
                                 f"where it is made: it runs as Python")
            return IteratorVariable(child.yielded)
        return result

    def load_local(self, name: str) -> VariableTracker:
        try:
            var = self.locals[name]
        except KeyError:
            self.user_error(UnboundLocalError(
                f"cannot access local variable '{name}' where it is not associated with a value"))
        if isinstance(var, LazyVariable):
            var = wrap(self, var.value, var.source)
            self.locals[name] = var
        return var

    def array_identity(self, a: ArrayVariable, b: ArrayVariable) -> bool:
        if a.node is b.node and a.base is b.base:
            return a.source is b.source or a.source is None or b.source is None \
                or a.source.display() == b.source.display()
        if a.source is not None and b.source is not None:  # two arguments: guard aliasing
            ca, cb = a.source.code(self.output.ns), b.source.code(self.output.ns)
            same = self.output.leaf_value(a.source) is self.output.leaf_value(b.source)
            self.guards.add_truth(f"{ca} is {cb}", f"{a.source.display()} is {b.source.display()}",
                                  same, (a.source,))
            return same
        if (a.fresh and a.base is None and a.node.kind == "call") or \
                (b.fresh and b.base is None and b.node.kind == "call"):
            return False  # an array the graph made is a new object
        for made, given in ((a, b), (b, a)):   # np.ascontiguousarray(x) is x: x's layout says
            flag = getattr(made.node.target, "itself_when", None) if made.node.kind == "call" else None
            if flag is not None and given.source is not None and made.node.args[0] is given.node:
                code, shown = given.source.code(self.output.ns), given.source.display()
                same = bool(getattr(self.output.leaf_value(given.source).flags, flag))
                self.guards.add_truth(f"{code}.flags.{flag}", f"{shown}.flags.{flag}", same,
                                      (given.source,))
                return same
        self.unsupported("unsupported_value", "identity ('is') of two array values")

    # -- opcodes of every version: stack and locals -------------------------------------
    def NOP(self, inst): pass
    def RESUME(self, inst): pass
    def PRECALL(self, inst): pass
    def EXTENDED_ARG(self, inst): pass

    def POP_TOP(self, inst):
        self.pop()

    def PUSH_NULL(self, inst):
        self.push(NULL)

    def COPY(self, inst):
        self.push(self.stack[-inst.arg])

    def SWAP(self, inst):
        i = inst.arg
        self.stack[-1], self.stack[-i] = self.stack[-i], self.stack[-1]

    def LOAD_CONST(self, inst):
        self.push(ConstantVariable(inst.arg))

    def LOAD_FAST(self, inst):
        if bc.is_cell(inst.arg, self.code) and not self.shadows(inst.arg):
            # 3.13: closure cells for MAKE_FUNCTION (LOAD_CLOSURE)
            self.push(self.cells[getattr(inst.arg, "name", inst.arg)])
        else:
            self.push(self.load_local(inst.arg))

    def STORE_FAST(self, inst):
        self.store_local(inst.arg, self.pop())

    def shadows(self, arg) -> bool:
        """Is ``arg`` (a name; 3.13 spells a cell load's CellVar) a cell variable an inlined
        comprehension shadows now?"""
        return isinstance(arg, str) and arg in self.shadowed_cells

    def store_local(self, name: str, value: VariableTracker) -> None:
        if isinstance(value, (CellVariable, RealCellVariable)) and bc.is_cell(name, self.code):
            # a comprehension puts back the cell it saved (LOAD_FAST_AND_CLEAR), over a
            # plain local of its own or over its own cell (MAKE_CELL: a closure in it
            # captures its variable)
            self.cells[name] = value
            self.shadowed_cells.discard(name)
            self.locals.pop(name, None)
        elif value is NULL:   # restoring a comprehension variable that was unbound (3.12+)
            self.locals.pop(name, None)
        else:
            self.locals[name] = value

    def DELETE_FAST(self, inst):
        self.locals.pop(inst.arg, None)

    # -- attributes and items ---------------------------------------------------------------
    def LOAD_ATTR(self, inst):
        method, name = bc.load_attr_arg(inst.opname, inst.arg)
        obj = self.pop()
        if not method:
            self.push(obj.getattr(self, name))
        elif isinstance(obj, (ListVariable, DictVariable, TupleVariable)):
            self.stack.extend(bc.with_null(ContainerMethodVariable(obj, name), NULL))
        else:
            self.stack.extend(bc.with_null(obj.getattr(self, name), NULL))

    LOAD_METHOD = LOAD_ATTR

    def STORE_ATTR(self, inst):
        obj = self.pop()
        value = self.pop()
        self.store_attr(obj, inst.arg, value)

    def store_attr(self, obj: VariableTracker, name: str, value: VariableTracker) -> None:
        """``obj.name = value`` (and ``setattr(obj, "name", value)``)."""
        if isinstance(obj, UserObjectVariable) and obj.source is not None:
            if obj.stores_back(self, name, value):
                return  # `obj.w -= g`: the array was updated in place; storing it back changes nothing
        elif obj.source is not None and stores_itself(value, AttrSource(obj.source, name)):
            return
        if isinstance(obj, UserObjectVariable) and obj.source is not None:
            obj.store_attr(self, name, value)  # replayed after the graph, read back from here
            return
        if isinstance(obj, NewObjectVariable):
            obj.store_attr(self, name, value)  # made in the frame: rebuilt with it
            return
        if isinstance(obj, ArrayVariable) and obj.store_attr(self, name, value):
            return   # (a.shape = ..., z.real = ...)
        self.unsupported("mutation", f"setting attribute '{name}' of {obj.describe()}",
                         HINTS["mutation"])

    def BINARY_SUBSCR(self, inst):
        index = self.pop()
        obj = self.pop()
        self.push(obj.getitem(self, index))

    def STORE_SUBSCR(self, inst):
        index = self.pop()
        obj = self.pop()
        value = self.pop()
        obj.setitem(self, index, value)

    # -- operators --------------------------------------------------------------------------
    def BINARY_OP(self, inst):
        b = self.pop()
        a = self.pop()
        self.push(self.binary_op(bc.BINARY_OPS[inst.arg], a, b))

    def COMPARE_OP(self, inst):
        b = self.pop()
        a = self.pop()
        self.push(self.binary_op(bc.COMPARE_OPS[inst.arg], a, b))

    def IS_OP(self, inst):
        b = self.pop()
        a = self.pop()
        if a is b:
            same = True
        elif a.is_constant() and b.is_constant():
            same = key_value(self, a) is key_value(self, b)   # (a NaN read: that object)
        elif (a.is_constant() and a.value is None) or (b.is_constant() and b.value is None):
            same = False  # a tracked non-constant value is never None
        elif isinstance(a, ArrayVariable) and isinstance(b, ArrayVariable):
            same = self.array_identity(a, b)
        elif isinstance(a, ModuleVariable) and isinstance(b, ModuleVariable):
            # (each guarded by identity where it was read: array-api-compat's
            # ``xp is sys.modules.get("numpy")``)
            same = a.module is b.module
        elif isinstance(a, NewObjectVariable) or isinstance(b, NewObjectVariable):
            same = False   # an object made in the frame has one tracker, and it is not the other
        else:
            self.unsupported("unsupported_value", f"'is' between {a.describe()} and {b.describe()}")
        self.push(ConstantVariable(same != bool(inst.arg)))

    def CONTAINS_OP(self, inst):
        container = self.pop()
        item = self.pop()
        if isinstance(container, ArrayVariable) and not container.tensor:
            # ``v in a``: (a == v).any() computed in the graph, a Python bool where it leaves
            found = self.call_op(("method", "__contains__"), [container, item], {}, "operator in")
            if inst.arg and isinstance(found, PyValueVariable):
                found = PyValueVariable(self.call_op(np.logical_not, [found.array], {}, "operator not in"),
                                        bool)
            self.push(found if isinstance(found, PyValueVariable) else
                      ConstantVariable(bool(found.as_constant(self)) != bool(inst.arg)))
            return
        if not hasattr(container, "contains"):
            if container.is_constant() and isinstance(item, SymScalarVariable):
                item = ConstantVariable(key_value(self, item))   # ``axis in (0, None)``: guarded
            if container.is_constant() and item.is_constant():
                found = self.fold(operator.contains, container.value, key_value(self, item))
            else:
                self.unsupported("unsupported_value", f"'in' on {container.describe()}")
        else:
            found = container.contains(self, item)
        self.push(ConstantVariable(bool(found) != bool(inst.arg)))

    def _unary(self, inst):
        self.push(self.pop().unary(self, bc.UNARY_OPS[inst.opname]))

    UNARY_NEGATIVE = UNARY_POSITIVE = UNARY_INVERT = UNARY_NOT = _unary

    # -- calls and functions ----------------------------------------------------------------
    def KW_NAMES(self, inst):
        self.kw_names = tuple(inst.arg)

    def CALL(self, inst):
        args = self.popn(inst.arg)
        upper = self.pop()
        fn, bound_self = bc.split_callable(self.pop(), upper, NULL)
        if bound_self is not None:  # method form: the self slot is the first argument
            args = [bound_self] + args
        kwargs = {}
        if self.kw_names:
            n = len(self.kw_names)
            kwargs = dict(zip(self.kw_names, args[-n:]))
            args = args[:-n]
            self.kw_names = ()
        try:
            result = self.call_function(fn, args, kwargs)
        except BreakGraph as e:
            # ``with Timer(log):``: constructing it breaks; the break enters the with.
            e.open_with = self.next_is(inst, bc.WITH_ENTER) and self.can_enter_with(inst) and \
                isinstance(fn, ConstantVariable) and plain_context_manager(fn.value)
            raise
        self.push(result)

    def can_enter_with(self, inst) -> bool:
        """Can a break here enter a user's with statement, its body compiling? Not in a
        helper, nor inside a try body (the break runs the whole try statement: no resume
        function starts inside a try), except the body of a with open at entry."""
        return self.parent is None and (not inst.in_try or in_open_with(self.code, inst.index))

    def next_is(self, inst, opname: str) -> bool:
        nxt = inst.index + 1
        return nxt < len(self.decoded.instructions) and self.decoded.instructions[nxt].opname == opname

    def BEFORE_WITH(self, inst):
        cm = self.stack[-1]
        if isinstance(cm, ErrstateVariable):
            return cm.enter(self)
        if self.can_enter_with(inst) and isinstance(cm, UserObjectVariable) and \
                plain_context_manager(type(cm.obj)):
            try:
                self.unsupported("unsupported_opcode", f"entering the with statement of "
                                 f"{cm.describe()} runs as Python; its body is compiled")
            except BreakGraph as e:
                e.open_with = True
                raise
        self.unsupported("unsupported_opcode", f"opcode {inst.opname} is not supported",
                         HINTS["opcode"])

    def CALL_FUNCTION_EX(self, inst):
        kwargs = self.pop() if inst.arg & bc.CALL_FUNCTION_EX_KWARGS else DictVariable({})
        args = self.pop()
        upper = self.pop()
        fn, _ = bc.split_callable(self.pop(), upper, NULL)
        if not isinstance(kwargs, DictVariable):
            self.unsupported("unsupported_value", f"** of {kwargs.describe()}")
        self.push(self.call_function(fn, args.items(self), dict(kwargs.entries)))

    def MAKE_FUNCTION(self, inst):
        code = self.pop().as_constant(self)
        flags = bc.make_function_flags(inst.arg)
        closure = self.pop().items(self) if flags & bc.MAKE_FUNCTION_CLOSURE else []
        if flags & bc.MAKE_FUNCTION_ANNOTATIONS:
            self.pop()
        kwdefaults = self.pop().entries if flags & bc.MAKE_FUNCTION_KWDEFAULTS else {}
        defaults = self.pop().items(self) if flags & bc.MAKE_FUNCTION_DEFAULTS else []
        self.push(NestedFunctionVariable(code, self.fn_globals, defaults, kwdefaults, closure))

    def RETURN_VALUE(self, inst):
        self.result = self.pop()

    def set_function_attribute(self, fn: NestedFunctionVariable, flag: int,
                               value: VariableTracker) -> None:
        if flag == bc.MAKE_FUNCTION_CLOSURE:
            fn.closure = value.items(self)
        elif flag == bc.MAKE_FUNCTION_KWDEFAULTS:
            fn.kwdefaults = value.entries
        elif flag == bc.MAKE_FUNCTION_DEFAULTS:
            fn.defaults = value.items(self)

    def RETURN_GENERATOR(self, inst):
        self.push(ConstantVariable(None))

    def YIELD_VALUE(self, inst):
        self.yielded.append(self.pop())
        self.push(ConstantVariable(None))

    def LOAD_ASSERTION_ERROR(self, inst):
        self.push(ConstantVariable(AssertionError))

    def RAISE_VARARGS(self, inst):
        self.unsupported("user_error", "the function raises an exception here",
                         "it runs as plain Python so the exception comes from your code")

    def _check_scalar_loop(self, inst, iterator) -> None:
        """A long loop doing one-element work per step (``e[i] = a * x[i] + b * e[i-1]``)
        would unroll into thousands of tiny kernels: slower than the Python loop, and
        slow to build. After SCALAR_LOOP_PROBE steps with that much left, the function
        runs as Python."""
        stats = self.loop_stats.setdefault(id(iterator), [0, set(self.output.graph.nodes), self.steps,
                                                          len(self.output.graph.nodes)])
        stats[0] += 1
        if stats[0] >= 3 and iterator.pending:
            # Two whole iterations measured: a loop whose unrolling will pass MAX_STEPS
            # stops now rather than after capturing 200,000 instructions for nothing
            # (its body depends on the loop variable, or it would be a loop node).
            per_step = (self.steps - stats[2]) / (stats[0] - 1)
            ops = len(self.output.graph.nodes)
            ops_per_step = (ops - stats[3]) / (stats[0] - 1)
            if config.cost_model and ops + ops_per_step * len(iterator.pending) > MAX_UNROLLED_OPS:
                self.unsupported("long_loop", f"a loop of {stats[0] - 1 + len(iterator.pending)} "
                                 f"steps would unroll into about "
                                 f"{int(ops + ops_per_step * len(iterator.pending))} operations: the "
                                 f"function runs as Python (KILN_COST_MODEL=0 unrolls it)",
                                 "vectorize the loop body over the loop variable "
                                 "(broadcasting, np.einsum) to have it compiled")
            budget = MAX_STEPS if ops_per_step else MAX_FOLDED_LOOP_STEPS
            if self.steps + per_step * len(iterator.pending) > budget:
                self.unsupported("long_loop", f"a loop of {stats[0] - 1 + len(iterator.pending)} "
                                 f"steps would unroll past {budget} instructions: the function "
                                 "runs as Python", "vectorize the loop body over the loop variable "
                                 "(broadcasting, np.einsum) to have it compiled")
        if stats[0] != SCALAR_LOOP_PROBE or len(iterator.pending) < SCALAR_LOOP_PROBE:
            return
        new = [n for n in self.output.graph.nodes if n.kind == "call" and n not in stats[1]]
        if new and all(one_element_work(n) for n in new):
            self.unsupported("scalar_loop", f"a loop of {stats[0] + len(iterator.pending)} "
                             f"steps doing one-element work each: it runs as Python",
                             "vectorize the loop (np.cumsum, slicing) to have it compiled")
