"""Run a generated program without kiln and through each backend, and compare.

The comparison is test_programs.py's (DESIGN.md §4): values, dtypes, shapes and types of
the results, exception type and message, the final state of every argument, and which
outputs share memory with which arguments. Two additions for generated programs:

- what the program printed at its graph breaks (to its module's ``SINK``) must read the
  same, numbers compared with the value tolerances;
- float values that differ beyond the tolerances are accepted only within the slack of a
  different summation order: ``2 * n * eps * scale``, with ``scale`` the largest finite
  magnitude among the arguments and results of the call, ``n`` the largest argument or
  result size (the most terms one reduction can add) and ``eps`` that of the least precise
  float dtype in the call; everything else (types, dtypes, shapes, signs of zeros) exact.

A program that runs past ``KILN_FUZZ_TIME_LIMIT`` seconds (all backends, all calls) is a
finding too (:class:`ProgramTimeout`, with its reproducer), not a hung run: SIGALRM stops
it wherever the interpreter runs (a Python loop, a wait for g++); a hang inside a compiled
kernel never returns to the interpreter, so a watchdog thread writes the reproducer to
stderr and to a file and ends the process (:func:`_time_limit`).
"""
from __future__ import annotations

import contextlib
import io
import math
import os
import re
import signal
import sys
import tempfile
import threading
import warnings
from typing import Any

import numpy as np

import kiln

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from test_programs import _alias_pattern, _check_no_fallback, _check_same, _leaves, _run  # noqa: E402

from .programs import Program  # noqa: E402

BACKENDS = ("eager", "aot_eager", "cpp")
TIME_LIMIT = float(os.environ.get("KILN_FUZZ_TIME_LIMIT") or 120)


class Mismatch(AssertionError):
    """kiln and NumPy disagree on a generated program."""


class ProgramTimeout(BaseException):
    """A generated program ran past the fuzzer's time limit. A BaseException, so that
    neither the oracle's ``except Exception`` (a user exception is a result) nor kiln's
    fallbacks take it for the program's own error; hypothesis reports it without shrinking."""


@contextlib.contextmanager
def _time_limit(program: Program, seconds: float):
    """Raise ProgramTimeout in the main thread after ``seconds``; if the program still has not
    come back to the interpreter ``seconds`` later (a loop inside a kernel), report it and
    end the process with status 3."""
    if seconds <= 0 or threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum, frame):
        raise ProgramTimeout(f"the program ran past the time limit of {seconds:g} s "
                             f"(KILN_FUZZ_TIME_LIMIT)\n\n--- reproducer ---\n{program.reproducer()}")

    def hard_stop():
        text = (f"kiln fuzz: a program ran past twice the time limit of {seconds:g} s inside "
                f"native code; the process ends. Reproducer:\n{program.reproducer()}")
        fd, path = tempfile.mkstemp(prefix="kiln-fuzz-hang-", suffix=".py")
        with os.fdopen(fd, "w") as f:
            f.write(program.reproducer())
        os.write(2, f"{text}\n(written to {path})\n".encode())
        os._exit(3)

    watchdog = threading.Timer(2 * seconds, hard_stop)
    watchdog.daemon = True
    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    watchdog.start()
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        watchdog.cancel()


def _floats(obj):
    """Every float array and float number in ``obj`` (nested lists, tuples, dict values)."""
    if isinstance(obj, (list, tuple)):
        for o in obj:
            yield from _floats(o)
    elif isinstance(obj, dict):
        for o in obj.values():
            yield from _floats(o)
    elif isinstance(obj, np.ndarray):
        if obj.dtype.kind == "f":
            yield obj
        elif obj.dtype.kind == "c":
            yield obj.real
            yield obj.imag
    elif isinstance(obj, (float, np.floating)):
        yield np.asarray(obj)
    elif isinstance(obj, np.complexfloating):
        yield np.asarray(obj.real)
        yield np.asarray(obj.imag)


def _reduction_slack(got, exp, eager_args, eps_floor: float = 0.0) -> bool:
    """Whether ``got`` equals ``exp`` in every respect but float values, and those are within
    summation-order slack: ``2 * n * eps * scale``, eps of the least precise float dtype in
    the call (a float32 sum converted to a Python float keeps float32's error) or that the
    program computes in (``eps_floor``: a float32 variance added into a float64 argument),
    signs of zeros still exact."""
    everything = [got, exp, eager_args]
    arrays = [np.asarray(a, dtype=np.float64) for a in [*_floats(got), *_floats(exp), *_floats(eager_args)]]
    finite = [np.abs(a[np.isfinite(a)]) for a in arrays]
    scale = max([f.max() for f in finite if f.size] + [1.0])
    n = max([a.size for a in _leaves(everything)] + [1])
    # (NumPy scalar arguments count: np.arctan2(1.5, s1) of a float32 s1 is float32 math)
    eps = max([np.finfo(a.dtype).eps for a in _floats(everything)] +
              [np.finfo(np.float64).eps, eps_floor])

    def close(g, e, signs: bool = True) -> bool:
        if np.iscomplexobj(e):       # (the oracle leaves complex zeros' signs alone)
            return np.iscomplexobj(g) and close(np.real(g), np.real(e), False) and close(np.imag(g), np.imag(e), False)
        g, e = np.asarray(g, dtype=np.float64), np.asarray(e, dtype=np.float64)
        if g.shape != e.shape:
            return False
        with np.errstate(invalid="ignore"):
            near = (g == e) | (np.abs(g - e) <= 2 * n * eps * scale) | (np.isnan(g) & np.isnan(e))
        zeros = (g == 0) & (e == 0)
        return bool(near.all() and (not signs or (np.signbit(g) == np.signbit(e))[zeros].all()))

    def walk(g, e) -> bool:
        if type(g) is not type(e):
            return False
        if isinstance(e, (list, tuple)):
            return len(g) == len(e) and all(walk(x, y) for x, y in zip(g, e))
        if isinstance(e, dict):
            return list(g) == list(e) and all(walk(g[k], e[k]) for k in e)
        if isinstance(e, (np.ndarray, np.generic)):
            if g.dtype != e.dtype or g.shape != e.shape:
                return False
            if e.dtype.kind in "fc":
                return close(g, e)
        elif isinstance(e, float):
            return close(g, e)
        try:
            _check_same(g, e, "")
        except AssertionError:
            return False
        return True
    return walk(got, exp)


# Results' strides are compared too (NumPy's memory layout); KILN_FUZZ_LAYOUT=0 leaves them
LAYOUT = os.environ.get("KILN_FUZZ_LAYOUT", "1") == "1"


def _same(got, exp, where, eager_args, eps_floor: float = 0.0):
    try:
        _check_same(got, exp, where, LAYOUT)
    except AssertionError:
        if not _reduction_slack(got, exp, eager_args, eps_floor):
            raise


_FLOAT_NAMES = {"float16": np.float16, "float32": np.float32, "complex64": np.float32}


def _program_eps(program: Program) -> float:
    """eps of the least precise float dtype the program's source names (its intermediates
    may be computed in it even where its arguments and results are float64)."""
    text = program.source()
    return max([float(np.finfo(t).eps) for name, t in _FLOAT_NAMES.items() if name in text] + [0.0])


_NUMBER = re.compile(r"-?(?:\d+\.?\d*(?:e[+-]?\d+)?|nan|inf)")


def _same_text(got: str, exp: str, where: str) -> None:
    """Printed text: the same words, numbers within 1e-5 (prints round to ~8 digits)."""
    if got == exp:
        return
    # (NumPy pads printed columns to the widest number: spacing follows the digits)
    gw, ew = [" ".join(w.split()) for w in _NUMBER.split(got)], [" ".join(w.split()) for w in _NUMBER.split(exp)]
    gn, en = _NUMBER.findall(got), _NUMBER.findall(exp)
    ok = gw == ew and len(gn) == len(en) and all(
        a == b or (a not in ("nan", "inf", "-inf") and b not in ("nan", "inf", "-inf")
                   and math.isclose(float(a), float(b), rel_tol=1e-5, abs_tol=1e-6))
        for a, b in zip(gn, en))
    if not ok:
        raise Mismatch(f"{where}: printed\n{got!r}\nwhere NumPy printed\n{exp!r}")


# KILN_FUZZ_WARNINGS=1: kiln's RuntimeWarnings (and ComplexWarnings) of each call must be
# among NumPy's, as a set of (category, message) (NumPy warns once per ufunc call; a loop
# kiln runs as one kernel may warn once for all its passes): kiln warns only where its
# kernel's flags say for certain which op raised them (docs/lowering.md), and leaves out
# the rest (a floor division beside a log: neither). KILN_FUZZ_WARNINGS=2: the same sets.
# Off by default (docs/fuzzing.md).
WARNINGS = os.environ.get("KILN_FUZZ_WARNINGS", "0")
WARNINGS = WARNINGS if WARNINGS in ("1", "2") else ""


def _warning_set(caught) -> set:
    return {(w.category.__name__, str(w.message)) for w in caught
            if issubclass(w.category, (RuntimeWarning, np.exceptions.ComplexWarning))
            and "build failed" not in str(w.message) and "kiln" not in str(w.message).lower()}


def _same_warnings(caught, expected, where: str) -> None:
    got, exp = _warning_set(caught), _warning_set(expected)
    if not (got <= exp if WARNINGS == "1" else got == exp):
        raise Mismatch(f"{where}: warnings {sorted(got)} where NumPy warned {sorted(exp)}")


# KILN_FUZZ_DEBUG_CHECKS=1 (the default): kiln's own errors raise (``config.debug_checks``)
# where a user's run would break the graph at them ("internal_error") and run the function
# as Python, which the oracle cannot tell from a right answer; 0: as kiln's config says.
DEBUG_CHECKS = os.environ.get("KILN_FUZZ_DEBUG_CHECKS", "1") != "0"


@contextlib.contextmanager
def debug_checks(on: bool = True):
    """``kiln.config.debug_checks`` on inside (where ``on``), as it was after."""
    from kiln.config import config
    before = config.debug_checks
    config.debug_checks = before or on
    try:
        yield
    finally:
        config.debug_checks = before


_last_failed: list = []      # the backend that failed last runs first (shrinking is faster)


def check(program: Program, backends=BACKENDS, time_limit: float = TIME_LIMIT,
          check_backend: Any = None) -> None:
    """Raise Mismatch naming the backend, call and difference, with the program's reproducer
    (ProgramTimeout when the program runs past ``time_limit`` seconds, all backends together).
    ``check_backend(program, backend)`` compares one backend's runs with the plain ones,
    raising AssertionError (default: this module's, for array programs; lang.py's for its
    own)."""
    order = sorted(backends, key=lambda b: b not in _last_failed)
    with _time_limit(program, time_limit), debug_checks(DEBUG_CHECKS):
        for backend in order:
            _check_one(program, backend, check_backend or _check_backend)


def _check_one(program: Any, backend: str, check_backend: Any) -> None:
    try:
        check_backend(program, backend)
    except AssertionError as err:
        _last_failed[:] = [backend]
        raise Mismatch(f"[backend={backend}] {err}\n\n--- reproducer ---\n{program.reproducer()}") from None


def _check_backend(program: Program, backend: str) -> None:
    ref, ref_sink = program.build()
    fn, sink = program.build()
    compiled = kiln.compile(fn, backend=backend)
    eps_floor = _program_eps(program)
    for n in range(len(program.calls)):
        eager_args, kiln_args = program.args(n), program.args(n)
        with warnings.catch_warnings(record=True) as expected, \
                (contextlib.nullcontext() if WARNINGS else np.errstate(all="ignore")):
            warnings.simplefilter("always" if WARNINGS else "ignore")
            exp = _run(ref, eager_args)
        stdout = io.StringIO()
        with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stdout(stdout):
            warnings.simplefilter("always")
            got = _run(compiled, kiln_args)
        where = f"call {n}"
        _check_no_fallback(caught, where)
        if WARNINGS:
            _same_warnings(caught, expected, where)
        assert stdout.getvalue() == "", f"{where}: kiln wrote to stdout: {stdout.getvalue()!r}"
        if exp[0] == "raise":
            assert got[0] == "raise", f"{where}: NumPy raised {exp[1]!r}, kiln returned {got[1]!r}"
            assert type(got[1]) is type(exp[1]) and str(got[1]) == str(exp[1]), \
                f"{where}: NumPy raised {exp[1]!r}, kiln raised {got[1]!r}"
        else:
            if got[0] == "raise":
                err = got[1]
                tb = "".join(__import__("traceback").format_exception(err)[-6:])
                raise AssertionError(f"{where}: kiln raised {err!r} where NumPy returned\n{tb}")
            _same(got[1], exp[1], f"{where} result", eager_args, eps_floor)
            assert _alias_pattern(got[1], kiln_args) == _alias_pattern(exp[1], eager_args), \
                f"{where}: outputs alias arguments differently"
        _same(list(kiln_args), list(eager_args), f"{where} args after call", eager_args, eps_floor)
        _same_text(sink.getvalue(), ref_sink.getvalue(), f"{where} SINK")


def fails(check_fn: Any, program: Any, backends: tuple) -> bool:
    """Whether ``check_fn(program, backends)`` raises a Mismatch: a minimizer's test (a
    reduced program that breaks otherwise is not the failure it keeps)."""
    try:
        check_fn(program, backends)
    except Mismatch:
        return True
    except Exception:          # noqa: BLE001 - a reduced program that breaks otherwise
        return False
    return False


def shrink(program: Any, variants: Any, fails: Any) -> Any:
    """A minimizer's loop: take the first of ``variants(program)`` that ``fails``, again,
    until none does."""
    changed = True
    while changed:
        changed = False
        for cand in variants(program):
            if fails(cand):
                program, changed = cand, True
                break
    return program


def long_run(name: str, check_seed, minimized, default_backends: str, every: int = 100) -> int:
    """A generator's long run (``python -m tests.fuzz.<name>``): KILN_FUZZ_<NAME>_SEED (first
    seed), KILN_FUZZ_<NAME>_PROGRAMS (how many), KILN_FUZZ_<NAME>_BACKENDS (comma list);
    ``check_seed(seed, backends)`` raises a Mismatch, ``minimized(seed, backends)`` is then
    printed (a reproducer), and the run goes on."""
    import traceback
    from kiln.config import config
    config.cost_model = os.environ.get("KILN_FUZZ_COST_MODEL") == "1"   # (as tests/fuzz/test_fuzz.py)
    env = f"KILN_FUZZ_{name.upper()}_"
    first = int(os.environ.get(env + "SEED") or 1)
    count = int(os.environ.get(env + "PROGRAMS") or 100)
    backends = tuple((os.environ.get(env + "BACKENDS") or default_backends).split(","))
    found = 0
    for seed in range(first, first + count):
        if (seed - first) % every == 0:
            print(f"... seed {seed}", flush=True)
        try:
            check_seed(seed, backends)
        except Mismatch as err:
            found += 1
            print(f"=== seed {seed}: {str(err).splitlines()[0][:300]}\n{minimized(seed, backends)}", flush=True)
        except Exception:          # noqa: BLE001 - the fuzzer's own error: report, go on
            found += 1
            print(f"=== seed {seed}: error in the fuzzer\n{traceback.format_exc()}", flush=True)
    print(f"{count} programs from seed {first}, {found} findings", flush=True)
    return 1 if found else 0
