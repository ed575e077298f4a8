"""The opcodes that build and take apart values: tuples, lists, dicts, sets, slices,
strings, and unpacking. A mixin of :class:`~kiln.capture.translator.InstructionTranslator`
(one handler per opcode, as everywhere in the translator)."""
from __future__ import annotations

from . import bytecode_facts as bc
from .variables.arrays import ArrayVariable
from .variables.base import ConstantVariable
from .variables.containers import DictVariable, ListVariable, SliceVariable, TupleVariable
from .variables.sequence_items import key_value


class BuildOpcodes:
    def BUILD_TUPLE(self, inst):
        self.push(TupleVariable(self.popn(inst.arg)))

    def BUILD_LIST(self, inst):
        self.push(ListVariable(self.popn(inst.arg)))

    def BUILD_MAP(self, inst):
        items = self.popn(2 * inst.arg)
        self.push(DictVariable({key_value(self, k): v for k, v in zip(items[::2], items[1::2])}))

    def BUILD_CONST_KEY_MAP(self, inst):
        keys = self.pop().as_constant(self)
        self.push(DictVariable(dict(zip(keys, self.popn(inst.arg)))))

    def BUILD_SET(self, inst):
        items = self.popn(inst.arg)
        self.push(ConstantVariable(self.fold(set, [key_value(self, i) for i in items])))

    # A set display or comprehension's set lives on the stack alone: each update makes a new
    # one, so a capture attempt given up (a loop tried as a graph loop, then unrolled) leaves
    # no items in the set the state it goes back to holds.
    def SET_UPDATE(self, inst):
        items = self.pop().items(self)
        held = self.stack[-inst.arg]
        self.stack[-inst.arg] = ConstantVariable(held.value | {key_value(self, i) for i in items})

    def SET_ADD(self, inst):
        item = key_value(self, self.pop())   # (popped first: the set is below it)
        held = self.stack[-inst.arg]
        self.stack[-inst.arg] = ConstantVariable(held.value | {item})

    def BUILD_SLICE(self, inst):
        parts = self.popn(inst.arg)
        if len(parts) == 2:
            parts.append(ConstantVariable(None))
        self.push(SliceVariable(*parts))

    def BUILD_STRING(self, inst):
        parts = self.popn(inst.arg)
        self.push(ConstantVariable("".join(p.as_constant(self) for p in parts)))

    def FORMAT_VALUE(self, inst):
        spec = self.pop() if inst.arg & bc.FORMAT_VALUE_SPEC else ConstantVariable("")
        self.format(self.pop(), bc.CONVERSIONS.get(inst.arg & 0x03), spec)

    def format(self, value, conv, spec) -> None:
        """``format(conv(value), spec)`` on constants (f-strings)."""
        if isinstance(value, ArrayVariable):
            self.unsupported("data_dependent", "formatting an array as text reads its data")
        v = value.as_constant(self)
        self.push(ConstantVariable(self.fold(format, conv(v) if conv else v,
                                             spec.as_constant(self))))

    # 3.13 splits FORMAT_VALUE into a conversion and a format with or without a spec.
    def CONVERT_VALUE(self, inst):
        value = self.pop()
        if isinstance(value, ArrayVariable):
            self.unsupported("data_dependent", "formatting an array as text reads its data")
        self.push(ConstantVariable(self.fold(bc.CONVERSIONS[int(inst.arg)], value.as_constant(self))))

    def FORMAT_SIMPLE(self, inst):
        self.format(self.pop(), None, ConstantVariable(""))

    def FORMAT_WITH_SPEC(self, inst):
        spec = self.pop()
        self.format(self.pop(), None, spec)

    # The container being built may have come from outside the capture (a resume function's
    # stack value: [*a, f(x), *b] broken at f): its own methods record the update, replayed
    # on the real object, as for any list or dict passed in.
    def LIST_APPEND(self, inst):
        item = self.pop()
        self.stack[-inst.arg].call_method(self, "append", [item], {})

    def LIST_EXTEND(self, inst):
        items = self.pop().items(self)
        self.stack[-inst.arg].call_method(self, "extend", [ListVariable(items)], {})

    def LIST_TO_TUPLE(self, inst):
        self.push(TupleVariable(self.pop().item_list))

    def MAP_ADD(self, inst):
        value = self.pop()
        key = self.pop()
        self.stack[-inst.arg].setitem(self, key, value)

    def DICT_UPDATE(self, inst):
        other = self.pop()
        if not isinstance(other, DictVariable):
            self.unsupported("unsupported_value", f"** of {other.describe()}")
        self.stack[-inst.arg].call_method(self, "update", [other], {})

    def DICT_MERGE(self, inst):
        # f(**a, **b) with a key in both: CPython's TypeError names the callee; Python raises it
        other, target = self.stack[-1], self.stack[-inst.arg - 1]
        if isinstance(other, DictVariable) and isinstance(target, DictVariable) \
                and set(other.entries) & set(target.entries):
            self.unsupported("unsupported_value", "a keyword given twice in a call's ** arguments")
        self.DICT_UPDATE(inst)

    def UNPACK_SEQUENCE(self, inst):
        items = self.pop().items(self)
        if len(items) != inst.arg:
            self.user_error(ValueError(f"expected {inst.arg} values to unpack, got {len(items)}"))
        self.stack.extend(reversed(items))

    def UNPACK_EX(self, inst):
        before, after = inst.arg & 0xFF, inst.arg >> 8
        items = self.pop().items(self)
        if len(items) < before + after:
            self.user_error(ValueError("not enough values to unpack"))
        middle = ListVariable(items[before:len(items) - after])
        values = items[:before] + [middle] + items[len(items) - after:]
        self.stack.extend(reversed(values))

    def DELETE_SUBSCR(self, inst):
        """``del l[i]``, ``del l[a:b]``, ``del d[k]`` (the container's ``delitem``)."""
        index = self.pop()
        self.pop().delitem(self, index)
