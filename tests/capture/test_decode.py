"""kiln/capture/decode.py reads instructions straight from ``co_code`` (``_raw_instructions``);
the rest of capture reads their arguments as the ``bytecode`` package's abstract bytecode
has them. Every code object of kiln's own modules and of the program corpora, and code
written to reach the rare paths (EXTENDED_ARG jumps and names, cells and free variables,
f-string conversions, try/with tables), decodes exactly as through the package."""
import importlib
import pkgutil
import types

import pytest

import kiln
from kiln.capture import decode as dec

pytestmark = pytest.mark.skipif(not dec._FAST, reason="the package decodes this Python")


def _indexed(raw):
    """Rows with starts and jump targets as instruction indices (the two decoders count
    them in different units; decode() only ever maps them to indices)."""
    index_at = {start: k for k, (_, _, _, start, _, _) in enumerate(raw)}
    return [(name, type(arg), arg, line, unit, None if target is None else index_at[target])
            for name, arg, line, _, unit, target in raw]


def _codes(obj, seen):
    if isinstance(obj, types.CodeType):
        if id(obj) not in seen:
            seen[id(obj)] = obj
            for c in obj.co_consts:
                _codes(c, seen)
    elif isinstance(obj, types.FunctionType):
        _codes(obj.__code__, seen)
    elif isinstance(obj, type):
        for v in vars(obj).values():
            if isinstance(v, (staticmethod, classmethod)):
                v = v.__func__
            if isinstance(v, property):
                v = v.fget
            if isinstance(v, types.FunctionType) and v.__module__ == obj.__module__:
                _codes(v, seen)


def _module_codes(names):
    seen = {}
    for name in names:
        mod = importlib.import_module(name)
        for v in vars(mod).values():
            if getattr(v, "__module__", None) == name:
                _codes(getattr(v, "__wrapped__", v), seen)
    return list(seen.values())


def _same(code):
    fast, package = dec._raw_instructions(code), dec._package_instructions(code)
    assert len(fast) == len(package), code
    for a, b in zip(_indexed(fast), _indexed(package)):
        assert a[:2] == b[:2] and (a[2] is b[2] or a[2] == b[2]) and a[3:] == b[3:], (code, a, b)


KILN = [m.name for m in pkgutil.walk_packages(kiln.__path__, "kiln.")
        if "_native" not in m.name and m.name != "kiln.__main__"]
CORPORA = ["tests.test_programs", "tests.test_programs_real6", "tests.test_programs_real23",
           "tests.test_programs_language", "tests.test_programs_loop_idioms",
           "tests.capture.test_with_blocks", "tests.capture.test_everyday_breaks"]


@pytest.mark.parametrize("modules", [KILN, CORPORA], ids=["kiln", "corpora"])
def test_decodes_as_the_package(modules):
    codes = _module_codes(modules)
    assert len(codes) > 500
    for code in codes:
        _same(code)


def test_rare_paths_decode_as_the_package():
    # 300 names and constants (EXTENDED_ARG before loads, stores and jumps over them)
    body = "\n".join(f"    v{i} = x + {i}.5\n    if v{i} > {i}:\n        x = v{i}" for i in range(300))
    src = f"""
def big(x):
{body}
    return x

def closures(a, b=2):
    c = a + b
    def inner(d):
        nonlocal c
        c += d
        return lambda e: (a, c, e, [c * k for k in range(e)])
    return inner

def texts(x, width=3):
    return f"{{x!r:>{{width}}}} {{x!s}} {{x!a}} {{x:.2f}} {{x}}"

def tables(xs):
    total = 0
    for x in xs:
        try:
            with open(x) as f:
                total += len(f.read())
        except (OSError, ValueError) as e:
            total -= 1
            continue
        finally:
            total *= 2
    while total > 10 and not (total < 3 or total == 7):
        total //= 3
    return total, {{k: v for k, v in zip(xs, xs)}}, {{x is None for x in xs}}
"""
    ns = {}
    exec(compile(src, "<decode test>", "exec"), ns)
    seen = {}
    for name in ("big", "closures", "texts", "tables"):
        _codes(ns[name], seen)
    codes = list(seen.values())
    assert any(ins.opname == "EXTENDED_ARG" for c in codes for ins in __import__("dis").get_instructions(c))
    for code in codes:
        _same(code)
    # and decode() itself: the same instruction records through either decoder
    for code in codes:
        dec._decode_cache.pop(dec.code_key(code), None)
        fast = dec.decode(code)
        dec._decode_cache.pop(dec.code_key(code), None)
        try:
            dec._FAST = False
            slow = dec.decode(code)
        finally:
            dec._FAST = True
        assert fast.instructions == slow.instructions and fast.entries == slow.entries
