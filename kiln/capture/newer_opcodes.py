"""The opcodes CPython 3.12 and 3.13 added (PEP 709's inlined comprehensions, slices as
one instruction, 3.13's ``TO_BOOL``, ``CALL_KW`` and fused local loads/stores). A mixin of
:class:`~kiln.capture.translator.InstructionTranslator`, one handler per opcode; each is
written in terms of the handlers every version has (``LOAD_FAST``, ``CALL``, ...)."""
from __future__ import annotations

import dataclasses

import bytecode

from . import bytecode_facts as bc
from .breaks import HINTS
from .variables.base import NULL, ConstantVariable
from .variables.containers import SliceVariable


class NewerOpcodes:
    # -- 3.12 opcodes ------------------------------------------------------------------------
    def LOAD_SUPER_ATTR(self, inst):
        """``super().name`` / ``super(C, obj).name``: the compiler pushes ``super``, the
        class (the ``__class__`` cell for the zero-argument form) and the object."""
        from .variables.super_object import make_super
        method, name = bc.load_super_attr_arg(inst.arg)
        obj, cls, _ = self.pop(), self.pop(), self.pop()
        attr = make_super(self, [cls, obj]).getattr(self, name)
        if method:
            self.stack.extend(bc.with_null(attr, NULL))
        else:
            self.push(attr)

    def LOAD_FAST_CHECK(self, inst):
        self.LOAD_FAST(inst)

    def LOAD_FAST_AND_CLEAR(self, inst):
        """An inlined comprehension (PEP 709) saves the variable it shadows (NULL when
        unbound); the STORE_FAST after the loop puts it back. A cell variable's slot holds
        its cell, which the comprehension's own loads and stores leave alone."""
        if isinstance(inst.arg, str) and bc.is_cell(inst.arg, self.code) and inst.arg in self.cells:
            self.shadowed_cells.add(inst.arg)
            self.push(self.cells[inst.arg])
            return
        var = self.locals.pop(inst.arg, NULL)
        self.push(var)

    def STORE_FAST_MAYBE_NULL(self, inst):
        self.STORE_FAST(inst)

    def RETURN_CONST(self, inst):
        self.result = ConstantVariable(inst.arg)

    def BINARY_SLICE(self, inst):
        stop = self.pop()
        start = self.pop()
        obj = self.pop()
        self.push(obj.getitem(self, SliceVariable(start, stop, ConstantVariable(None))))

    def STORE_SLICE(self, inst):
        stop = self.pop()
        start = self.pop()
        obj = self.pop()
        value = self.pop()
        obj.setitem(self, SliceVariable(start, stop, ConstantVariable(None)), value)

    def CALL_INTRINSIC_1(self, inst):
        as_op = bc.INTRINSIC_AS.get(getattr(inst.arg, "name", ""))
        if as_op is None:
            self.unsupported("unsupported_opcode", f"CALL_INTRINSIC_1 {inst.arg!r} is not "
                             "supported", HINTS["opcode"])
        # the 3.11 handler, given the 3.11 instruction (UNARY_POSITIVE reads its opname)
        getattr(self, as_op)(dataclasses.replace(inst, opname=as_op, arg=bytecode.UNSET))

    # -- 3.13 opcodes ------------------------------------------------------------------------
    def TO_BOOL(self, inst):
        pass   # the jump (or UNARY_NOT) after it takes the value's truth

    def CALL_KW(self, inst):
        self.kw_names = tuple(self.pop().as_constant(self))
        self.CALL(inst)

    def SET_FUNCTION_ATTRIBUTE(self, inst):
        fn = self.pop()
        self.set_function_attribute(fn, inst.arg, self.pop())
        self.push(fn)

    def LOAD_FAST_LOAD_FAST(self, inst):
        first, second = inst.arg
        self.push(self.load_local(first))
        self.push(self.load_local(second))

    def STORE_FAST_STORE_FAST(self, inst):
        first, second = inst.arg
        self.store_local(first, self.pop())
        self.store_local(second, self.pop())

    def STORE_FAST_LOAD_FAST(self, inst):
        store, load = inst.arg
        self.store_local(store, self.pop())
        self.push(self.load_local(load))
