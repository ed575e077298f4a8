"""The opcodes of names beyond the frame's locals: globals and builtins, imports, cells
and closures (``LOAD_GLOBAL``, ``IMPORT_NAME``, ``LOAD_DEREF``, ...). A mixin of
:class:`~kiln.capture.translator.InstructionTranslator`, one handler per opcode; where
versions differ in an argument's shape the handler asks ``bytecode_facts``."""
from __future__ import annotations

import builtins
import sys
import types

from ..ops import polyfills
from . import bytecode_facts as bc
from .breaks import HINTS
from .sources import ClosureSource, GlobalSource, ModuleGlobalSource
from .variables.base import (NULL, CellVariable, LazyVariable, RealCellVariable, VariableTracker,
                             stores_itself)
from .variables.builder import wrap
from .variables.builtins import BuiltinVariable


class NameOpcodes:
    def load_cell(self, name: str) -> VariableTracker:
        cell = self.cells[name]
        if isinstance(cell, RealCellVariable):
            fn_closure = self.output.ns.closure
            try:
                value = fn_closure[name].cell_contents
            except ValueError:
                self.user_error(NameError(f"cannot access free variable '{name}'"))
            return wrap(self, value, ClosureSource(name))
        if cell.contents is None:
            self.user_error(NameError(f"cannot access free variable '{name}' where it is not "
                                      "associated with a value in enclosing scope"))
        if isinstance(cell.contents, LazyVariable):
            cell.contents = wrap(self, cell.contents.value, cell.contents.source)
        return cell.contents

    def LOAD_GLOBAL(self, inst):
        push_null, name = bc.load_global_arg(inst.arg)
        value = self.load_global(name)
        if push_null:
            self.stack.extend(bc.with_null(value, NULL))
        else:
            self.push(value)

    def load_global(self, name: str) -> VariableTracker:
        root_globals = self.fn_globals is self.output.ns.values["_kiln_G"]
        if name in self.fn_globals:
            source = GlobalSource(name) if root_globals else None if self.fn_globals is vars(polyfills) \
                else ModuleGlobalSource(self.fn_globals, name)   # (kiln's polyfills: no guards)
            return wrap(self, self.fn_globals[name], source)
        builtin = getattr(builtins, name, None)
        if builtin is None and name not in dir(builtins):
            self.user_error(NameError(f"name '{name}' is not defined"))
        if root_globals:
            self.guards.add_not_shadowed(name)
        if isinstance(builtin, types.BuiltinFunctionType) or hasattr(BuiltinVariable, f"call_{name}"):
            return BuiltinVariable(builtin)
        return wrap(self, builtin, None)

    def IMPORT_NAME(self, inst):
        fromlist = self.pop().as_constant(self)
        level = self.pop().as_constant(self)
        module = sys.modules.get(inst.arg)
        if level or module is None:
            self.unsupported("unsupported_call", f"importing {inst.arg} inside the compiled function",
                             "import it at module level")
        if not fromlist and "." in inst.arg:
            module = sys.modules[inst.arg.split(".")[0]]
        self.push(wrap(self, module, None))

    def IMPORT_FROM(self, inst):
        self.push(self.stack[-1].getattr(self, inst.arg))

    def STORE_GLOBAL(self, inst):
        value = self.pop()
        if self.fn_globals is self.output.ns.values["_kiln_G"] and \
                stores_itself(value, GlobalSource(inst.arg)):
            return  # `global buf; buf += 1` updated the array in place
        self.unsupported("mutation", f"assigning the global '{inst.arg}'", HINTS["mutation"])

    def MAKE_CELL(self, inst):
        name = bc.cell_name(inst.arg)
        # 3.12+: an inlined comprehension whose variable a closure in it captures makes a
        # cell of its own in the slot it saved (LOAD_FAST_AND_CLEAR): a cell again
        self.shadowed_cells.discard(name)
        self.cells[name] = CellVariable(self.locals.get(name), name)

    def COPY_FREE_VARS(self, inst):
        pass  # cells of inlined functions are bound at call time; the root's are real

    def LOAD_CLOSURE(self, inst):
        self.push(self.cells[bc.cell_name(inst.arg)])

    def LOAD_DEREF(self, inst):
        self.push(self.load_cell(bc.cell_name(inst.arg)))

    def STORE_DEREF(self, inst):
        name = bc.cell_name(inst.arg)
        cell = self.cells[name]
        if isinstance(cell, RealCellVariable) or getattr(cell, "outside", False):
            if stores_itself(self.stack[-1], ClosureSource(name)):
                self.pop()
                return  # `nonlocal buf; buf += 1` updated the array in place
            self.unsupported("mutation", f"assigning the closure variable '{name}' (nonlocal)",
                             HINTS["mutation"])
        cell.contents = self.pop()
