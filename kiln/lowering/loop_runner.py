"""A loop node's C++ function and how Python calls it (kiln/lowering/loops.py prints the
body).

``prepare_loops(graph)`` renders every loop node's body (:func:`render_body`: a fast and a
checked variant and the entry that picks one), builds them in one module and gives each
body its ``native`` runner.

The exported ABI: ``int64_t f(int64_t start, int64_t stop, int64_t step, int64_t inplace,
int64_t l0, ..., char* b0, ..., <scalar> p0, ..., f_out* out)``: each array's dims then
byte strides, the arrays' data pointers in placeholder order, scalars by value in their
C types, and the carried scalars' final values into ``*out`` (a struct, one field per
carried scalar). Its packed twin, ``int64_t f_packed(kiln_slot* a)``, takes the same
arguments one 8-byte slot each (no ``out``) and writes the results over the first
slots: runtime/launch.c's Launcher calls it straight from the generated ``native`` and
hands back ``(code, result, ...)`` (0.2 us where cffi's call, its out struct and its
buffer conversions cost ~3 us a loop). Without the extension, the cffi call does the same.
"""
from __future__ import annotations

import hashlib
import re
from typing import Any

import numpy as np

from ..ops.loops import LoopBody, echo_warnings
from ..ops.meta import fresh_copy
from .loop_bounds import Bounds
from .loop_ir import BufferValue, Scalar
from .loop_prelude import PRELUDE
from .loop_scalars import FP_RAISED, Unnative, _is_array, _kind_of
from .loops import _Printer

# A carried scalar's C type -> the code the Launcher reads it back with (launch.c).
_RESULT_CODES = {"double": "d", "float": "f", "bool": "?", "uint64_t": "Q"}
# A scalar argument's C type -> the Launcher's argument code and the slot member it is in.
_ARG_CODES = {"double": ("d", "d"), "float": ("f", "f"), "bool": ("B", "i"), "int8_t": ("b", "i"),
              "uint8_t": ("B", "i"), "int16_t": ("h", "i"), "uint16_t": ("H", "i"),
              "int32_t": ("i", "i"), "uint32_t": ("I", "i"), "int64_t": ("q", "i"),
              "uint64_t": ("Q", "u")}


def render_body(body: LoopBody, step: int | None = None) -> tuple:
    """``(C++ source after PRELUDE, function name, its cdef, in place, argument codes, result
    codes)`` of a top-level loop body: a
    fast and a checked variant and the entry that picks one. ``in place``: the fast
    variant cannot fail once its entry test passed (an ``inplace`` call runs it or
    nothing)."""
    bounds = Bounds(body, step if type(step) is int and body.cont is None else None)
    fast = _Printer(body, "kiln_loop_fast", step, fast=True, bounds=bounds)
    checked = _Printer(body, "kiln_loop_checked", step)
    text = fast.function() + "\n" + checked.function() + "\n"
    if fast.warnings != checked.warnings:   # (the same ops in the same order: never)
        raise Unnative("the variants' warnings differ")
    body.warnings = tuple(fast.warnings)
    body.fp_flags = fast.fp_flags | fast.int_flags
    # a run whose flags may be a warning runs again as the reference: for its warnings
    # alone (``echo``, the native result stands, so it may have written in place) where
    # the body reads none of the arrays it writes, else from the start, on the inputs,
    # where it wrote copies of them (one that wrote in place, a stencil sweeping its own
    # array, gives no such warning: a copy for each call would cost more than the loop)
    body.fp_echo = bool(body.fp_flags) and not _reads_written(body)
    entry, cdef, codes, results = _entry(body, fast.fp_flags)
    text += entry
    fname = "kiln_loop_" + hashlib.sha256(text.encode()).hexdigest()[:12]
    text = text.replace("kiln_loop_", f"{fname}_").replace("KILN_ENTRY", fname)
    return (f"// loop at {body.where}\n" + text, fname, cdef.replace("KILN_ENTRY", fname),
            fast.residual == 0, codes, results)


def _reads_written(body: LoopBody) -> bool:
    """Does ``body`` use an array it writes other than as the target of its element
    stores (a load, a view, an inner loop's operand)?"""
    for p in body.graph.placeholders[1:1 + body.n_carried]:
        if _is_array(p) and any(
                u.kind == "call" and not (u.target.name == "store_elem" and p not in u.args[1:]
                                          or u.target.name == "store_elem_if" and p not in u.args[2:]
                                          and p is u.args[1]) for u in p.users):
            return True
    return False


def _entry(body: LoopBody, floats: int) -> tuple[str, str, str, str]:
    """The exported function (see the module doc) and its packed twin: ``(C++ text, cdef,
    argument codes, result codes)``. The fast variant runs first, the checked one where
    its entry test fails (2), unless ``inplace`` (then 2 comes back: nothing was written).
    ``floats``: the kinds of the body's float scalar math, read from the floating-point
    flags (its integer math returns FP_RAISED | its kinds itself)."""
    phs = body.graph.placeholders[1:]
    arrays = [p for p in phs if _is_array(p)]
    scalars = [p for p in phs if not _is_array(p)]
    outs = [_kind_of(p).ctype for p in phs[:body.n_carried] if not _is_array(p)]
    n_layout = sum(2 * len(p.val.shape) for p in arrays)
    params = ["int64_t start", "int64_t stop", "int64_t step", "int64_t inplace"]
    params += [f"int64_t l{k}" for k in range(n_layout)]
    params += [f"char* b{k}" for k in range(len(arrays))]
    params += [f"{_kind_of(p).ctype} p{k}" for k, p in enumerate(scalars)]
    typedef = ""
    if outs:
        typedef = "typedef struct { " + " ".join(f"{t} c{k};" for k, t in enumerate(outs)) \
            + " } KILN_ENTRY_out;\n"
        params.append("KILN_ENTRY_out* out")
    lines = ["  KILN_CLEAN_UPPER();   // (see the prelude: dirty upper state)",
             f"  const int64_t layout[{max(n_layout, 1)}] = "
             f"{{{', '.join(f'l{k}' for k in range(n_layout)) or '0'}}};",
             f"  char* bufs[{max(len(arrays), 1)}] = {{{', '.join(f'b{k}' for k in range(len(arrays))) or '0'}}};",
             f"  int64_t slots[{max(len(scalars), 1)}] = {{0}};"]
    lines += [f"  __builtin_memcpy(&slots[{k}], &p{k}, sizeof(p{k}));" for k in range(len(scalars))]
    if floats:   # (the flags raised before: not the body's)
        lines.append("  feclearexcept(FE_DIVBYZERO | FE_OVERFLOW | FE_INVALID);")
    lines += ["  int64_t rc = kiln_loop_fast(start, stop, step, bufs, layout, slots);",
              "  if (rc == 2 && !inplace) rc = kiln_loop_checked(start, stop, step, bufs, layout, slots);"]
    if floats:   # FP_RAISED | the kinds (ops/fp_errors.py bits) NumPy's scalar math may warn of
        lines.append(f"  if (rc == 0 || rc >= {FP_RAISED}) rc |= kiln_body_fp_raised({floats});")
    if outs:
        lines.append(f"  if (rc == 0 || rc >= {FP_RAISED}) {{")
        lines += [f"    __builtin_memcpy(&out->c{k}, &slots[{k}], sizeof(out->c{k}));" for k in range(len(outs))]
        lines.append("  }")
    lines.append("  return rc;")
    sig = f"int64_t KILN_ENTRY({', '.join(params)})"
    text = typedef + f'extern "C" {sig} {{\n' + "\n".join(lines) + "\n}\n"
    # the packed twin: one slot per argument, the results written over the first slots
    codes = "q" * (4 + n_layout) + "p" * len(arrays)
    args = [f"a[{k}].i" for k in range(4 + n_layout)]
    args += [f"(char*)a[{4 + n_layout + k}].p" for k in range(len(arrays))]
    for k, p in enumerate(scalars):
        ctype = _kind_of(p).ctype
        code, member = _ARG_CODES[ctype]
        codes += code
        args.append(f"({ctype})a[{len(args)}].{member}")
    packed = ["  int64_t rc;"]
    if outs:
        packed += ["  KILN_ENTRY_out o;", f"  rc = KILN_ENTRY({', '.join(args + ['&o'])});"]
        for k, t in enumerate(outs):
            member = {"d": "d", "f": "f", "Q": "u"}.get(_RESULT_CODES.get(t, "q"), "i")
            packed.append(f"  a[{k}].{member} = o.c{k};")
    else:
        packed.append(f"  rc = KILN_ENTRY({', '.join(args)});")
    packed.append("  return rc;")
    text += ('extern "C" int64_t KILN_ENTRY_packed(kiln_slot* a) {\n' + "\n".join(packed) + "\n}\n")
    results = "".join(_RESULT_CODES.get(t, "q") for t in outs)
    return text, typedef + sig + ";\nint64_t KILN_ENTRY_packed(void*);", codes, results


def native_runners(items: list, rendered: list | None = None, graph_name: str = "loops") -> list:
    """Build ``(body, step)`` items in one module (one g++ run); returns their runners in
    order (see :func:`_runner`). ``rendered``: the items' :func:`render_body` results, when
    the caller has them already. The module and its launchers go to ``output_code`` and
    ``KILN_DEBUG_DIR`` (kiln/runtime/backend.py ``report_loops``)."""
    import time
    from ..runtime.backend import report_loops
    from ..runtime.build import build
    from ..runtime.build import stats as build_stats
    from ..runtime.loader import load_library
    if rendered is None:
        rendered = [render_body(body, step) for body, step in items]
    unique = {r[1]: (r[0], r[2]) for r in rendered}
    source = PRELUDE + "\n" + "\n".join(text for text, _ in unique.values())
    started, builds = time.perf_counter(), build_stats["builds"]
    so = build(source, "loop")
    lib, ffi = load_library(so, "\n".join(cdef for _, cdef in unique.values()))
    runners = [_runner(body, lib, ffi, ok, fname, codes, results)
               for (body, _), (_, fname, _, ok, codes, results) in zip(items, rendered)]
    report_loops(graph_name, source, so, [r.source for r in runners],
                 build_stats["builds"] > builds, time.perf_counter() - started)
    return runners


def _runner(body: LoopBody, lib: Any, ffi: Any, inplace_ok: bool, fname: str, codes: str,
            results: str) -> Any:
    """``native(start, stop, step, carried, operands, inplace)`` over the built function,
    giving the final carried values, or None when the reference must run (a check failed,
    arrays the build cannot address; with ``inplace``, also: the fast variant's entry test
    failed, nothing written). ``native.inplace``: ``inplace`` calls are allowed.

    ``native`` is generated straight-line Python for this body's signature (its source
    is ``native.source``): a type test per value, then the arrays' dims and strides, the
    arrays and the scalars as they are to ``run`` — the Launcher over the packed entry, or
    (no extension, more arguments than it takes) ``slow``, the cffi call — which gives
    ``(code, carried scalar, ...)``; no per-call work that loops over the values."""
    from ..runtime.launch import module
    phs = body.graph.placeholders[1:]
    n_carried = body.n_carried
    n_arrays = sum(1 for p in phs if _is_array(p))
    n_layout = sum(2 * len(p.val.shape) for p in phs if _is_array(p))
    n_out = len(results)
    # per result: (NumPy scalar type, struct code) where the runner gives a NumPy scalar
    # (the Launcher makes it in C: np.uint32(v) from Python costs 0.2-0.4 us), else None
    # (a Python int, float or bool: a NumPy bool is made below, NumPy's two singletons)
    makes = tuple(None if kind.py or kind.is_bool else
                  (np.dtype(kind.name).type, _ARG_CODES[kind.ctype][0])
                  for kind in (_kind_of(p) for p in phs[:n_carried] if not _is_array(p)))

    # the carried arrays, written in place: 'w', a writable ndarray (launch.c), else the
    # call gives (4, None, ...) and the caller takes the long way round
    array_phs = [k for k, p in enumerate(phs) if _is_array(p)]
    written = [j for j, k in enumerate(array_phs) if k < n_carried]
    at = 4 + n_layout
    codes = codes[:at] + "".join("w" if j in written else "p" for j in range(n_arrays)) \
        + codes[at + n_arrays:]

    def made(r: tuple) -> tuple:
        return r[:1] + tuple(v if m is None else m[0](v) for m, v in zip(makes, r[1:]))

    def slow(*args: Any) -> tuple:
        # (cffi only here, looked up at the call: the Launcher runs every call where the
        # extension is built, and cffi's import and parse cost ~65-115 ms of a process's
        # first loop function)
        fn, fb, cast = getattr(lib, fname), ffi.from_buffer, ffi.cast
        head = args[:4 + n_layout]
        if any(not args[at + j].flags.writeable for j in written):
            return (4,) + (None,) * n_out
        arrays = [fb(a) if a.flags.c_contiguous else cast("char*", a.ctypes.data)
                  for a in args[4 + n_layout:4 + n_layout + n_arrays]]
        rest = list(args[4 + n_layout + n_arrays:])
        if not n_out:
            return (fn(*head, *arrays, *rest),)
        out = ffi.new(f"{fname}_out *")
        rc = fn(*head, *arrays, *rest, out)
        return made((rc,) + tuple(getattr(out, f"c{k}") for k in range(n_out)))

    run = slow
    m = module()
    if m is not None:
        address = lib.address(fname + "_packed")
        try:
            run = m.Launcher(address, codes, np.ndarray, slow, lib, results, False, None, 7, None,
                             makes)
        except ValueError:   # more arguments than it takes, or scalars it cannot make
            try:
                plain = m.Launcher(address, codes, np.ndarray, slow, lib, results)
                run = lambda *args: made(plain(*args))   # noqa: E731
            except ValueError:
                run = slow
    from ..ops.loops import _run_loop, stats
    env: dict[str, Any] = {"run": run, "ndarray": np.ndarray, "as_scalar": _as_scalar,
                           "body": body, "reference": _run_loop, "stats": stats}
    if body.fp_flags:
        from ..runtime.fpwarn import loop_flags_heard
        heard = loop_flags_heard(body.warnings)

        def loud(code: int) -> bool:   # (a run the reference redoes for its warnings: no miss)
            body.heard = heard(code)
            return body.heard

        def echo(code: int, start: Any, stop: Any, step: Any, carried: tuple, operands: tuple) -> bool:
            return heard(code) and echo_warnings(body, start, stop, step, carried, operands)
        env["heard"] = loud
        env["echo"] = echo
    lines = []
    names = [f"v{k}" for k in range(len(phs))]
    carried_names, operand_names = names[:n_carried], names[n_carried:]
    if carried_names:
        lines.append(f"    {', '.join(carried_names)}, = carried")
    if operand_names:
        lines.append(f"    {', '.join(operand_names)}, = operands")
    layout, arrays, scalars, out = [], [], [], []
    slots: list = []   # per placeholder, for a wrapper's own call (:class:`Straight`)
    for k, (p, v) in enumerate(zip(phs, names)):
        if _is_array(p):
            slots.append((np.dtype(p.val.dtype), len(p.val.shape)))
            env[f"dt{k}"] = np.dtype(p.val.dtype)
            # (``is`` first: an array of a built-in dtype holds NumPy's own dtype object,
            # and ``!=`` of two dtypes costs ~0.1 us a call)
            lines.append(f"    if type({v}) is not ndarray or {v}.dtype is not dt{k} and {v}.dtype != dt{k}: FAIL")
            if k < n_carried:
                lines.append(f"    COPY {v}")   # (a copy first: the layout is the copy's)
            ndim = len(p.val.shape)
            if ndim:
                lines.append(f"    {v}_sh = {v}.shape; {v}_st = {v}.strides")
                layout += [f"{v}_sh[{j}]" for j in range(ndim)] + [f"{v}_st[{j}]" for j in range(ndim)]
            arrays.append(v)
            if k < n_carried:
                out.append(v)
            continue
        kind = _kind_of(p)
        # (a NumPy bool goes through as_scalar: the launcher converts Python bools only,
        # and handed anything else to the cffi call, ~5 us more a call)
        env[f"ok{k}"] = ((int, np.integer) if kind.is_int else (float, np.floating)
                         if kind.is_float else (bool,))
        slots.append(env[f"ok{k}"])
        lines.append(f"    if not isinstance({v}, ok{k}):")
        lines.append(f"        {v} = as_scalar({v}, ok{k})")
        lines.append(f"        if {v} is None: FAIL")
        scalars.append(v)
        if k < n_carried:
            field = f"r[{1 + sum(1 for q in phs[:k] if not _is_array(q))}]"
            if kind.is_bool and not kind.py:
                env[f"np{k}"] = np.bool_
                out.append(f"np{k}({field})")
            else:
                out.append(field)
    call = ["start", "stop", "step", "INPLACE"] + layout + arrays + scalars
    lines += ["    try:",
              f"        r = run({', '.join(call)})",
              "    except (OverflowError, TypeError):",
              "        FAIL",
              "    if r[0]" + _fp_test(body) + ": FAIL",
              "    COUNT",
              f"    return ({''.join(x + ', ' for x in out)})"]
    text = "\n".join(lines) + "\n"
    template = re.sub(r"    COPY (\w+)\n", "", text)          # (its caller copied them)
    copying = re.sub(r"    COPY (\w+)\n", r"    \1 = copy(\1)\n", text)
    # native: the runner _run_loop calls (None: the reference must run)
    source = ("def native(start, stop, step, carried, operands, inplace=False):\n"
              + template.replace("FAIL", "return None").replace("INPLACE", "inplace")
              .replace("    COUNT\n", ""))
    # A wrapper's straight calls (LoopBody.call, call_owned): the same, counted as
    # _run_loop counts them, with _run_loop itself on anything but success (it tries
    # again, then copies or runs the reference). No array needs a copy first where none
    # is carried, or this runner cannot fail once started and the caller gives up its
    # arrays (call_owned) or every carried array is one the graph donates (loop_donate.py:
    # written in place when it is a writable ndarray, as _run_loop does); else ``call``
    # copies the carried arrays first, as _run_loop does (their originals stay as they
    # were for its second try).
    fail = "return reference(start, stop, step, carried, operands, body, {})"
    head = "def {}(start, stop, step, carried, operands):\n    if body.misses" + \
        (" or body.trapped()" if body.warnings else "") + ": " + fail + "\n"
    donated = bool(body.arrays) and inplace_ok and set(body.arrays) <= body.donate
    straight = {"call": not body.writes_back,
                "call_owned": not body.writes_back and inplace_ok}
    env["copy"] = fresh_copy
    for name, owned in (("call", False), ("call_owned", True)):
        if straight[name]:
            inplace = owned or donated
            count = 'stats["native"] += 1' + ('; stats["inplace"] += 1' if inplace else "")
            # (a donated array the caller gave read-only: the launcher's 'w' test sends
            # the call to _run_loop, which copies it)
            text = template if inplace else copying
            source += "\n\n" + head.format(name, owned) + (
                text.replace("FAIL", fail.format(owned)).replace("INPLACE", str(inplace))
                .replace("COUNT", count))
    exec(compile(source, f"<kiln {fname} launcher>", "exec"), env)
    native = env["native"]
    native.inplace = inplace_ok
    native.echo, native.heard = env.get("echo"), env.get("heard")
    native.source = source
    native.calls = {name: env[name] for name in straight if straight[name]}
    # a wrapper's call of the runner itself (no carried array: nothing to copy first)
    native.straight = Straight(run, slots, out, body, {"call": donated, "call_owned": inplace_ok}) \
        if straight["call"] else None
    if straight["call"] and not inplace_ok:
        # A runner that may fail once started copies the arrays a caller gives up too
        # (_run_loop does the same for owned=True as for owned=False): the copying
        # ``call`` serves both, without _run_loop's Python on the way (~0.6 us a loop:
        # merge's three while loops, ray_walk's one)
        native.calls["call_owned"] = env["call"]
    return native


class Straight:
    """A loop's runner called by the generated wrapper itself, not through the launcher's
    ``call``: a wrapper frame less, and no test of a value whose type the wrapper knows
    (a literal, an input array its layout check and guards pinned) — ~0.4 us of a ~1 us
    compiled call of a short loop (bsearch, oob: 1.2-1.9x NumPy's time). For bodies that
    carry no array, or whose arrays the call may write in place (``inplace``, by the
    launcher method: the caller gave them up, or the graph donates them, and the runner
    cannot fail once started; a read-only one gives code 4). Anything but success (a
    check failed, a value of another type, floating-point flags, earlier misses) takes the
    launcher's method as before, which runs the loop again from the same values: nothing
    was written."""

    _TYPES = {int: "int", float: "float", bool: "bool", np.integer: "np.integer",
              np.floating: "np.floating"}
    _KINDS = {int: "iu", float: "f", bool: "b"}   # the dtype kinds a slot's .item() takes

    def __init__(self, run: Any, slots: list, out: list, body: LoopBody, inplace: dict) -> None:
        self.run = run
        self.slots = slots   # per placeholder: (dtype, ndim) of an array, or the scalar types
        self.out = out       # the launcher's results: ``r[...]`` (np<k>: a NumPy bool), v<k> an array
        self.trapped = bool(body.warnings)
        self.inplace = inplace   # launcher method -> its carried arrays written in place
        self.n_carried = body.n_carried
        self.fp_flags, self.fp_echo = body.fp_flags, body.fp_echo

    def lines(self, holder: str, method: str, bounds: list, values: list, fallback: str,
              result: str) -> list[str] | None:
        """Wrapper lines setting ``result`` to the loop's carried values: ``holder`` names
        the body, ``method`` the launcher's method the wrapper would call (``plain``: its text of
        the value), ``bounds`` the
        range's texts, ``values`` per carried value then operand ``(text, known, plain)``:
        ``known`` a constant, ``("array", buffer, layout)`` for an array (its layout's
        texts), ``("item", dtype)`` for a 0-d array's ``.item()``, or None (tested at run
        time); ``fallback``: the launcher's call. None: the wrapper calls the launcher."""
        layout, arrays, scalars, tests = [], [], [], [f"not {holder}.misses"]
        if self.trapped:
            tests.append(f"not {holder}.trapped()")
        inplace = self.inplace.get(method, False)
        for k, (slot, (text, known, _)) in enumerate(zip(self.slots, values)):
            if isinstance(slot, tuple) and isinstance(slot[0], np.dtype):
                if not (isinstance(known, tuple) and known[0] == "array"
                        and known[1].dtype == slot[0] and len(known[1].shape) == slot[1]) \
                        or k < self.n_carried and not inplace:
                    return None
                layout += known[2]
                arrays.append(text)
            elif isinstance(known, tuple) and known[0] == "item":   # a 0-d array's .item()
                if known[1].kind not in self._KINDS.get(slot[0], ""):
                    return None
                scalars.append(text)
            elif known is None:
                tests.append(f"isinstance({text}, ({''.join(self._TYPES[t] + ', ' for t in slot)}))")
                scalars.append(text)
            elif isinstance(known, tuple) or not isinstance(known, slot):
                return None
            else:
                scalars.append(text)
        run = f"{holder}.straight_run"
        fields = []
        for x in self.out:   # "r[1]", "np0(r[1])" a NumPy bool (made without a call), "v3" an array
            if x.startswith("v"):
                fields.append(values[int(x[1:])][2])
                continue
            field = "_" + x[x.index("r["):].rstrip(")")
            fields.append(f"(np.True_ if {field} else np.False_)" if x.startswith("np") else field)
        count = "_loop_stats['native'] += 1" + ("; _loop_stats['inplace'] += 1" if inplace else "")
        failed = "_r[0]"
        if self.fp_flags:   # flags a warning may hear: the launcher's test (_fp_test)
            failed = f"_r[0] and (_r[0] < {FP_RAISED}"
            if self.fp_echo:   # (the reference again for the warnings alone)
                carried = "".join(v[2] + ", " for v in values[:self.n_carried])
                operands = "".join(v[2] + ", " for v in values[self.n_carried:])
                failed += f" or {holder}.straight_echo(_r[0], {', '.join(bounds)}, ({carried}), ({operands}))"
            elif not inplace:   # (written in place: the result stands)
                failed += f" or {holder}.straight_heard(_r[0])"
            failed += ")"
        return ["try:",
                f"    _r = {run}({', '.join(bounds + [str(int(inplace))] + layout + arrays + scalars)}) "
                f"if {' and '.join(tests)} else _loop_missed",
                "except (OverflowError, TypeError):",
                "    _r = _loop_missed",
                f"if {failed}:",
                f"    {result} = {fallback}",
                "else:",
                f"    {count}",
                f"    {result} = ({''.join(x + ', ' for x in fields)})"]


def straight_loop(code: Any, item: Any, body: LoopBody, method: str, target: str, fallback: str,
                  static: set) -> list[str] | None:
    """The wrapper's lines (``code``: lowering/wrapper.py's WrapperCode) running loop node
    ``item``'s compiled runner itself (:class:`Straight`), or None: it calls the launcher
    (``fallback``, on ``target``, the body). ``static``: the inputs whose shapes and
    strides the wrapper's layout check pinned (their layouts are literals here)."""
    straight = getattr(body.native, "straight", None)
    if straight is None:
        return None
    values = []
    for v in (*item.args[3], *item.args[4]):
        known: Any = None
        if isinstance(v, BufferValue):
            buf = v.buf
            name = code.buf_name(buf) if v.is_whole() else None
            if name is not None and buf.kind == "computed" and buf.shape == ():
                values.append((f"{name}.item()", ("item", buf.dtype), name))   # a kernel's 0-d result
                continue
            if name is None:   # a view: a NumPy scalar (a[0]) for a scalar slot, tested
                values.append((code.arg(v), None, code.arg(v)))
                continue
            dims = range(len(buf.shape))
            layout = [str(d) for d in buf.shape] + [str(s * buf.dtype.itemsize) for s in buf.strides] \
                if name in static else [f"{name}.shape[{j}]" for j in dims] + [f"{name}.strides[{j}]" for j in dims]
            known = ("array", buf, layout)
        elif isinstance(v, Scalar):
            known = None if v.arg else v.value if v.weak else np.dtype(v.dtype).type(v.value)
        elif type(v) in (bool, int, float) or isinstance(v, np.generic):
            known = v
        else:
            return None
        values.append((code.arg(v), known, code.arg(v)))
    lines = straight.lines(target, method, [code.arg(b) for b in item.args[:3]], values, fallback, item.name)
    code.uses_straight_loops = code.uses_straight_loops or lines is not None
    return lines


def _fp_test(body: LoopBody) -> str:
    """The launcher's test of a run's code that raised ``FP_RAISED | kinds``: a failure
    (the reference runs) where NumPy would show a warning of those kinds, unless the
    reference runs for its warnings alone (``echo``)."""
    if not body.fp_flags:
        return ""
    if body.fp_echo:
        return f" and (r[0] < {FP_RAISED} or echo(r[0], start, stop, step, carried, operands))"
    return f" and (r[0] < {FP_RAISED} or not INPLACE and heard(r[0]))"


def _as_scalar(value: Any, ok: tuple) -> Any:
    """A value for a scalar slot: a 0-d array becomes the NumPy scalar it holds, a NumPy
    bool a Python bool; None for anything else of the wrong kind (the reference runs)."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if isinstance(value, np.bool_) and bool in ok:
        return bool(value)
    return value if isinstance(value, ok) else None


def prepare_loops(graph: Any) -> None:
    """Give every loop node of ``graph`` its C++ runner, all built in one module (bodies
    the printer cannot print, or a failed build, keep the reference interpreter)."""
    from ..runtime.build import BuildError, CompilerUnavailable
    items, rendered = [], {}
    for node in graph.nodes:
        body = node.kwargs.get("body") if node.kind == "call" else None
        if not isinstance(body, LoopBody) or body.native is not None:
            continue
        try:
            rendered[len(items)] = render_body(body, node.args[2])
        except Unnative:
            continue
        except Exception:   # a printer bug must not cost the user a result
            from ..config import config
            if config.debug_checks:
                raise
            continue
        items.append((body, node.args[2], len(items)))
    groups = [items] if items else []
    while groups:
        group = groups.pop()
        try:
            texts = [rendered[k] for _, _, k in group]
            pairs = [(body, step) for body, step, _ in group]
            for (body, _), native in zip(pairs, native_runners(pairs, texts, graph.name)):
                if body.warnings:   # NumPy raises, calls or logs: the reference runs
                    from ..runtime.fpmode import errors_trapped
                    body.trapped = errors_trapped
                body.native = native
                for name, fn in native.calls.items():
                    setattr(body, name, fn)   # a wrapper's straight calls
                if native.straight is not None:
                    body.straight_run = native.straight.run
                    body.straight_echo, body.straight_heard = native.echo, native.heard
        except (BuildError, CompilerUnavailable):
            if len(group) > 1:   # one body's build error must not cost the others
                groups += [[item] for item in group]
        except Exception:   # nor may a loader bug cost the user a result
            from ..config import config
            if config.debug_checks:
                raise
