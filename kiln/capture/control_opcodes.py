"""The opcodes that move control: iteration and jumps (3.11's forward/backward forms,
3.12+'s ``POP_JUMP_IF_*``). A mixin of :class:`~kiln.capture.translator.InstructionTranslator`
(one handler per opcode, as everywhere in the translator). ``FOR_ITER``'s target is
normalised by ``decode.decode``: where the interpreter lands when the iterator is
exhausted, with it popped, on every version."""
from __future__ import annotations

from .graph_breaks import try_break_loop
from .graph_loop import try_graph_loop
from .loop_node import try_loop
from .loops import RangeIteratorVariable, range_iterator
from .variables.arrays import ArrayVariable
from .variables.base import ConstantVariable
from .variables.containers import DictVariable
from .variables.iterators import ArrayIteratorVariable, IteratorVariable, make_iterator


class ControlOpcodes:
    def jump_if(self, inst, value, when: bool) -> None:
        """A conditional jump taken when ``value``'s truth is ``when``: a while loop's test
        or a data-dependent branch in a loop body where capture has one, else decided
        now (by a guard when ``value`` is a run-time value)."""
        if self.__dict__.get("select_sides") and self.output.loop_trace is None:
            # a jump inside a side of a select (capture/graph_selects.py): only a nested select
            from .graph_selects import try_select
            if isinstance(value, ConstantVariable) or not try_select(self, inst, value, when):
                if value.truth(self) == when:
                    self.ip = inst.target
            return
        chain = self.__dict__.get("while_tests")
        if chain is not None and self.output.loop_trace is None:
            # an ``if`` in the body of a graph loop being traced (``if t % 10 == 0: u = ...``
            # on its counter, ``if s > best: best = s``) whose sides are cheap and pure is a
            # select (a while test or ``if c: break`` is not: the select declines those)
            from .graph_selects import try_select
            if not isinstance(value, ConstantVariable) and inst.target > inst.index \
                    and try_select(self, inst, value, when):
                return
            if chain.take(self, inst, value, when):
                return   # a while loop's test, traced as a graph while loop (capture/graph_while.py)
        if self.output.loop_trace is not None and getattr(value, "loop_value", False):
            from .loop_branches import branch   # a data-dependent if/else in a loop body
            from .loop_heads import try_while   # or a while loop's test there: a nested node
            if not try_while(self, inst, value, when):
                branch(self, inst, value, when)
            return
        if self.output.loop_trace is None and (getattr(value, "loop_value", False) or (
                isinstance(value, ArrayVariable) and value.scalar and not value.tensor
                and value.node.kind == "call")):
            from .graph_while import try_jump
            from .loop_heads import try_while, try_while_head   # a while loop's test on computed values
            if try_while(self, inst, value, when) or try_while_head(self, inst, value) \
                    or try_jump(self, inst, value, when):
                return
        if not isinstance(value, ConstantVariable):
            from .loop_heads import try_first_test   # a while loop's first test: no guard
            if try_first_test(self, inst, value, when):
                return
            from .graph_selects import try_select   # both sides cheap and pure: a select
            if try_select(self, inst, value, when):
                return
            self.runtime_test = inst.index   # a while loop's first test? (loop_heads.note_head)
        if value.truth(self) == when:
            self.ip = inst.target

    def _or_pop_select(self, inst, when: bool) -> bool:
        """3.11's ``a or b`` / ``a and b`` on a value the graph computes, as a select
        (capture/graph_selects.py); False: decided by its truth as before."""
        value = self.stack[-1]
        if isinstance(value, ConstantVariable) or self.output.loop_trace is not None:
            return False
        from .graph_selects import try_select
        return try_select(self, inst, value, when, keep=True)

    # -- iteration -----------------------------------------------------------------------
    def GET_ITER(self, inst):
        obj = self.pop()
        if isinstance(obj, IteratorVariable):
            self.push(obj)
        elif range_iterator(self, obj) is not None:   # its first step may become a loop node
            self.push(range_iterator(self, obj))
        else:
            iterator = make_iterator(self, obj)
            if isinstance(iterator, ArrayIteratorVariable):
                iterator.anonymous = True   # ``for v in x``: no name holds it (FOR_ITER)
            self.push(iterator)

    def FOR_ITER(self, inst):
        iterator = self.stack[-1]
        if not isinstance(iterator, IteratorVariable):
            self.unsupported("unsupported_value", f"iterating over {iterator.describe()} (an "
                             "iterator kiln did not make): each step runs as Python")
        if isinstance(iterator, RangeIteratorVariable) and not iterator.tried:
            iterator.tried = True
            if try_loop(self, inst, iterator) or try_graph_loop(self, inst, iterator) \
                    or try_break_loop(self, inst, iterator):
                return
            from .vectorize import NODE_ONLY_CODES
            if self.code in NODE_ONLY_CODES and not iterator.short():   # unrolled: a body per element
                notes = self.output.loop_notes
                self.unsupported("unsupported_call", notes[-1].split(": ", 1)[-1] if notes
                                 else "the loop is not one loop node")
        if isinstance(iterator, ArrayIteratorVariable) and iterator.anonymous \
                and iterator.taken == 0 and not iterator.reverse and not iterator.tried \
                and not any(v is iterator for v in self.locals.values()) \
                and sum(v is iterator for v in self.stack) == 1:
            # ``for v in x`` over a 1-D array: the loop over its positions, each step
            # reading x[i] when it runs (as Python's iterator does), tried as one node.
            # Only an iterator nothing else holds (GET_ITER's of an array, enumerate(x)
            # not stored): where a node stopped is known when it has run, so ``it =
            # iter(x)`` read again after the loop unrolls as before.
            iterator.tried = True
            steps = RangeIteratorVariable(self, (ConstantVariable(0), ConstantVariable(
                len(iterator.pending)), ConstantVariable(1)))
            if len(iterator.array.meta.shape) == 1 and try_loop(self, inst, steps):
                return
        self._check_scalar_loop(inst, iterator)
        if iterator.changed():
            if isinstance(iterator.origin, DictVariable):  # Python raises RuntimeError here
                self.unsupported("scalar_loop", "a loop over a dict that changes size during "
                                 "the loop: the function runs as Python")
            self.unsupported("unsupported_value", "the list a loop walks changed during the "
                             "loop: the loop runs as Python")
        item = iterator.next(self)
        if item is None:
            self.pop()
            self.ip = inst.target
        else:
            self.push(item)

    def JUMP_FORWARD(self, inst):
        self.ip = inst.target

    JUMP_BACKWARD = JUMP_BACKWARD_NO_INTERRUPT = JUMP_FORWARD

    def POP_JUMP_FORWARD_IF_TRUE(self, inst):
        self.jump_if(inst, self.pop(), True)

    def POP_JUMP_FORWARD_IF_FALSE(self, inst):
        self.jump_if(inst, self.pop(), False)

    POP_JUMP_BACKWARD_IF_TRUE = POP_JUMP_FORWARD_IF_TRUE
    POP_JUMP_BACKWARD_IF_FALSE = POP_JUMP_FORWARD_IF_FALSE

    def POP_JUMP_FORWARD_IF_NONE(self, inst):
        value = self.pop()
        if value.is_constant() and value.value is None:
            self.ip = inst.target

    def POP_JUMP_FORWARD_IF_NOT_NONE(self, inst):
        value = self.pop()
        if not (value.is_constant() and value.value is None):
            self.ip = inst.target

    POP_JUMP_BACKWARD_IF_NONE = POP_JUMP_FORWARD_IF_NONE
    POP_JUMP_BACKWARD_IF_NOT_NONE = POP_JUMP_FORWARD_IF_NOT_NONE

    def JUMP_IF_TRUE_OR_POP(self, inst):
        if self._or_pop_select(inst, True):
            return
        if self.stack[-1].truth(self):
            self.ip = inst.target
        else:
            self.pop()

    def JUMP_IF_FALSE_OR_POP(self, inst):
        if self._or_pop_select(inst, False):
            return
        if not self.stack[-1].truth(self):
            self.ip = inst.target
        else:
            self.pop()

    # 3.12+: forward-only conditional jumps
    POP_JUMP_IF_TRUE = POP_JUMP_FORWARD_IF_TRUE
    POP_JUMP_IF_FALSE = POP_JUMP_FORWARD_IF_FALSE
    POP_JUMP_IF_NONE = POP_JUMP_FORWARD_IF_NONE
    POP_JUMP_IF_NOT_NONE = POP_JUMP_FORWARD_IF_NOT_NONE
