"""Binding call arguments to a code object's parameters, for inlined calls."""
from __future__ import annotations

import types

from . import bytecode_facts as bc
from .variables.base import VariableTracker
from .variables.containers import DictVariable, TupleVariable


def bind_arguments(tx, code: types.CodeType, defaults: list, kwdefaults: dict, args: list,
                   kwargs: dict, name: str) -> dict:
    """Bind trackers to a code object's parameters, as Python does (TypeErrors included)."""
    positional, kwonly, varargs, varkw = bc.parameter_layout(code)
    bound: dict[str, VariableTracker] = {}
    if len(args) > len(positional) and not varargs:
        tx.user_error(TypeError(f"{name}() takes {len(positional)} positional arguments but "
                                f"{len(args)} were given"))
    for pname, value in zip(positional, args):
        bound[pname] = value
    if varargs:
        bound[varargs] = TupleVariable(list(args[len(positional):]))
    extra = {}
    posonly = set(positional[:code.co_posonlyargcount])
    for key, value in kwargs.items():
        if key in bound and key not in posonly or key in (varargs,):
            tx.user_error(TypeError(f"{name}() got multiple values for argument '{key}'"))
        if (key in positional and key not in posonly) or key in kwonly:
            bound[key] = value
        elif varkw:
            extra[key] = value
        else:
            tx.user_error(TypeError(f"{name}() got an unexpected keyword argument '{key}'"))
    first_default = len(positional) - len(defaults)
    for i, pname in enumerate(positional):
        if pname not in bound:
            if i >= first_default:
                bound[pname] = defaults[i - first_default]
            else:
                tx.user_error(TypeError(f"{name}() missing required argument: '{pname}'"))
    for pname in kwonly:
        if pname not in bound:
            if pname in kwdefaults:
                bound[pname] = kwdefaults[pname]
            else:
                tx.user_error(TypeError(f"{name}() missing required keyword-only argument: '{pname}'"))
    if varkw:
        bound[varkw] = DictVariable(extra)
    return bound
