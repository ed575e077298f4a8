"""NumPy's floating-point RuntimeWarnings from compiled kernels.

A kernel's launch (runtime/launch.c) reads the divide-by-zero, overflow and invalid flags
its threads raised; only when one is set does it call the kernel's handler made here,
which warns as NumPy's ufunc would have: "divide by zero encountered in log", a
RuntimeWarning attributed to the user's line that called the op (ops/value_warnings.py ``warn_at``: ``warn_explicit`` with
that module's ``__warningregistry__``, so the default filter shows it once per line, as
NumPy's). Each kind follows NumPy's error mode (``np.errstate(divide='ignore')`` silences
that kind alone; modes that raise or call never get here: fpmode.py runs those graphs
as NumPy).

A flag is attributed only where that is certain (lowering/fp_flags.py builds the table):

- the kernel computes exactly one op (one message) that may raise that kind, and no op
  whose flags NumPy would not report (a masked ``where=`` op, a derivative rule, an op the
  table does not know) may have raised it;
- for "invalid": kernels compare with signalling instructions (GCC under
  -fno-trapping-math), so a NaN the kernel reads sets the flag with no invalid operation;
  the flag counts only when no float the kernel reads (arrays it does not overwrite,
  scalars, literals) is a NaN.

Where several ops may raise a kind (or its op's kernel code raises flags NumPy's does
not: glibc's vector math), the kernel tells them apart itself: it computes each op's
predicate for that kind (ops/fp_errors.py ``raises_where``, lowering/cpp_fp.py) and keeps
a word of those that held; the handler warns for each op whose bit is set (``slots``,
``owned``), in the ops' order. A kernel that overwrites an input computes the word
itself (for each block of points that raised a told kind, or on every launch:
lowering/cpp_fp.py) and raises the kind only if a predicate held; one that does not raises its
plain flag, and the handler runs the body with the predicates (``rerun``) only when NumPy's
error mode warns of that kind and the warnings filters would show one of the warnings the
predicates tell (under ``warnings.simplefilter("ignore")`` no second run), and not every
one of them was shown at its line already (the default filter's once per location,
ops/value_warnings.py ``shown_at``: a flag raised on every call costs one second run,
not one a call). Otherwise that kind stays silent (never a warning NumPy would not give).

A kernel that raises a flag on every call (x // y with a zero divisor) calls the handler
on every call: where the filters drop every warning it could give (kept per filter list,
as fpmode.py's), it returns after that one look, and otherwise works out once per
(flags, word) which warnings fire (under ``simplefilter("ignore")`` such a call had
cost 1.3-1.5x NumPy's).
"""
from __future__ import annotations

import ctypes
import warnings
from typing import Any, Callable

import numpy as np

from ..ops.fp_errors import ALL, INVALID, KINDS, NUMPY_TELLS, OVER, exact_kinds
from ..ops.value_warnings import filters_token, ignored_at, shown_at, warn_at
from .fpmode import warned_kinds


def _has_nan(value: Any) -> bool:
    if isinstance(value, np.ndarray):
        if value.dtype.kind == "c":
            return bool(np.isnan(value).any())
        if value.dtype.kind != "f":
            return False
        if value.size <= 32:   # a few values: Python's sum costs less than a reduction
            values = value.ravel().tolist()
            total = sum(values)   # (NaN also for inf - inf: then each value is looked at)
            return total != total and any(v != v for v in values)
        # a NaN anywhere makes the minimum NaN: one pass
        return bool(np.isnan(np.minimum.reduce(value, axis=None)))
    return isinstance(value, (float, np.floating, complex, np.complexfloating)) and value != value


# second runs of kernels' bodies with their predicates; runs of NumPy's op for an op it
# tells (``numpy``) (tests)
stats = {"reruns": 0, "numpy_runs": 0}


class SecondBody:
    """A kernel's second body, with its ops' predicates (lowering/cpp_fp.py), as a call
    returning their word: its own library, built (runtime/build.py, the on-disk cache) and
    loaded on the first call. Most kernels never raise a kind their predicates tell, so
    their builds leave it out (a -O1 copy of the body: ~20% of such a module's g++ time).
    ``source()``: the kernel's ``told_source``; ``cdef``: its declarations; ``codes``:
    the kernel's launch codes (runtime/launch.py)."""

    def __init__(self, name: str, source: Callable[[], str], cdef: str, codes: str) -> None:
        self.name, self._source, self._cdef, self._codes = name, source, cdef, codes
        self._run: Callable | None = None
        self._owned: Callable | None = None

    def __call__(self, *args: Any) -> int:
        if self._run is None:
            from ..lowering.cpp import told_module
            from ..lowering.cpp_text import support_sources
            from .build import build
            from .launch import bind
            from .loader import load_library
            told = self._source()
            lib, ffi = load_library(build(told_module(self.name, told), support=support_sources([told])),
                                    self._cdef)
            self._owned = ctypes.CFUNCTYPE(ctypes.c_uint)(lib.address("kiln_fp_owned"))
            self._run = bind(lib, ffi, self.name + "_told_run", self._codes)
        self._run(*args)
        return self._owned()


def kernel_warnings(entries: tuple, reads: tuple = (), opaque: bool = False,
                    slots: tuple = (), owned: Callable | int | None = None,
                    rerun: Callable | None = None, once: dict | None = None,
                    warned: set | None = None, numpy: tuple = ()) -> Callable:
    """The handler launch_fp.c calls as ``handler(flags, *kernel_args)``. ``entries``: the
    kernel's (lowering/fp_flags.py); ``reads``: the positions of the arguments the kernel
    reads and does not overwrite; ``opaque``: it also reads something no check can see
    (a NaN literal, an array it overwrites in place), so its invalid flag means nothing.
    ``slots``: ``(bit, entry index, kind)`` per op whose predicate the kernel computes
    for a kind several of its ops may raise; ``owned()`` the word of those predicates
    that held in the calling thread's last launch (bit ``bit`` for that slot): the
    kernel's flag of such a kind is raised only when one held (cpp_prelude.h
    ``kiln_fp_own``), and each of them warns; a slot of bit -1 is the one op of its kind
    without a predicate, beside ops whose code raises it only where NumPy's does
    (lowering/fp_flags.py ``fp_table``): it warns where the kind was raised and none of
    theirs held (a body that reruns alone has them). (``owned`` may be the address of the
    library's ``kiln_fp_owned``: called through ctypes, so no cffi declarations are
    parsed for it.) ``rerun(*kernel_args)``: where the kernel writes none of its inputs,
    the body that computes the word (a :class:`SecondBody`; it returns the word), run here
    only when a told kind is raised and NumPy's error mode warns of it (under
    ``np.errstate(...='ignore')``, or filters that ignore every warning it could tell
    (ops/value_warnings.py ``ignored_at``), a launch that raises it costs no second run:
    ``stats["reruns"]`` counts them). ``once``: entry index -> graph node name of the
    entries other kernels of the graph compute too (the scheduler recomputes a cheap
    producer in each consumer's kernel); NumPy evaluates that op once, so it warns of each
    kind once per call: ``warned`` holds the (kind, node) warned in this call (the wrapper
    empties it as a call starts: lowering/cpp.py ``call_prelude``). ``numpy``: ``(entry
    index, argument position, op name, kwargs)`` of the ops whose warnings NumPy's op
    tells (lowering/fp_flags.py ``numpy_tells``: var's four steps): a launch that raises
    a kind NumPy's error mode warns of runs that op on the argument and warns as it did
    (on the value :func:`recomputed` makes of the arguments, where the position is a
    recipe: ``np.var(2 * x)``)."""
    if isinstance(owned, int):
        owned = ctypes.CFUNCTYPE(ctypes.c_uint)(owned)

    told = 0
    fired_at: dict[tuple, int] = {}
    of_kind: dict[int, int] = {}   # kind -> the word's bits of its predicates
    for position, i, bit in slots:
        told |= bit
        fired_at[(i, bit)] = position
        of_kind[bit] = of_kind.get(bit, 0) | (1 << position if position >= 0 else 0)
    # Each other kind that can be attributed, to its one op (decided once, here): launch.c
    # calls the handler only for these flags, so a kernel whose flags mean nothing certain
    # (NaN through a comparison beside no invalid-capable op) costs nothing more.
    owner: dict[int, tuple] = {}
    for bit, _key, _text in KINDS:
        candidates = [e for e in entries if e[0] & bit]
        if not bit & told and candidates and all(exact_kinds(e) & bit for e in candidates) \
                and len({e[1] for e in candidates}) == 1:
            owner[bit] = candidates[0]
    if opaque:
        owner.pop(INVALID, None)
    # NumPy's order: op by op, each op's kinds in npy_fpe's order; the word's bit of an op
    # a predicate tells (None: the kind's one op)
    once = once or {}
    tells = {t[0]: t[1:] for t in numpy}
    # (bit 0: the op's NumPy run, at its place in the order)
    order = [(bit, text, e, fired_at.get((i, bit)), once.get(i)) if bit else (0, tells[i], e, None, None)
             for i, e in enumerate(entries)
             for bit, _key, text in ((0, None, None),) * (i in tells) + KINDS
             if not bit or owner.get(bit) is e or (i, bit) in fired_at]

    def handler(flags: int, *args: Any) -> None:
        flags &= warned_kinds()
        if not flags or _all_ignored():
            return  # NumPy's mode or the filters silence every warning it could give
        if _nothing_computed(args):
            return  # no element computed (a flag raised before the loops: a zero divisor)
        if flags & INVALID & ~told and any(_has_nan(args[i]) for i in reads):
            flags &= ~INVALID
        if flags & told and rerun is not None and not _told_ignored() and not _told_shown(flags):
            stats["reruns"] += 1
            word = rerun(*args)
        else:
            word = owned() if flags & told and owned is not None else 0
        said = set()   # (np.divmod's two nodes: one ufunc call, each warning once)
        for bit, site, entry, node, call in _fired(flags, word):
            if not bit:
                _numpy_warns(flags, site, args, entry)
                continue
            if node is not None and warned is not None:
                if (bit, node) in warned:
                    continue   # another kernel of this call warned for this op already
                warned.add((bit, node))
            if call is None or call not in said:
                said.add(call)
                warn_at(*site)

    fired: dict[tuple, list] = {}

    def _fired(flags: int, word: int) -> list:
        """The rows of ``order`` that ``flags`` and the predicates' ``word`` fire, each as
        ``(bit, (message, filename, lineno), entry, node, call)`` (a NumPy run's: ``(0,
        told, entry, None, None)``), worked out once per (flags, word)."""
        key = (flags, word)
        if key not in fired:
            fired[key] = [
                (bit, (f"{text} encountered in {entry[1]}", entry[2], entry[3]), entry, node,
                 (bit, entry[5]) if len(entry) > 5 else None) if bit else (0, text, entry, None, None)
                for bit, text, entry, position, node in order
                if (flags & ALL if not bit else flags & bit and (
                    position is None or (word >> position & 1 if position >= 0 else not word & of_kind[bit])))]
        return fired[key]

    # Every warning the handler may give, at its line: when the filters drop all of them
    # (``warnings.simplefilter("ignore")``), a launch that raised a flag costs no more
    # Python than this look (NumPy's ufunc would still pay warn's call for each).
    sites = [(f"{text} encountered in {entry[1]}", entry[2], entry[3])
             for bit, text, entry, _position, _node in order if bit] + \
            [(f"{text} encountered in {step}", entry[2], entry[3])
             for bit, told_op, entry, _position, _node in order if not bit
             for _bit, _key, text in KINDS for step in NUMPY_TELLS[told_op[1]]]
    ignored_seen: list = [None, -1, None, False]

    def _all_ignored() -> bool:
        return _filters_drop(ignored_seen, sites)

    seen: list = [None, -1, None, False]
    told_at = [(f"{text} encountered in {entry[1]}", entry[2], entry[3])
               for _bit, text, entry, position, _node in order if position is not None]
    told_kinds = [bit for bit, _text, _entry, position, _node in order if position is not None]

    def _told_ignored() -> bool:
        """Do the filters drop every warning the predicates tell (then no second run)?"""
        return _filters_drop(seen, told_at)

    def _told_shown(flags: int) -> bool:
        """Was every warning the predicates may tell of the kinds in ``flags`` shown at its
        line already, under the filters of now (the default filter's once per location:
        then warn_explicit shows none of them again, and NumPy's call would not either)?
        A flag raised on every call (the square root of a negative sum of squares) then
        costs no second run after the first."""
        return all(shown_at(*at) for at, bit in zip(told_at, told_kinds) if flags & bit)

    mask = told | (ALL if tells else 0)
    for bit in owner:
        mask |= bit
    handler.mask = mask   # launch_fp.c calls it only for these flags  # type: ignore[attr-defined]
    # launch_fp.c screens "invalid" alone against NaNs in these arguments itself (data with
    # NaNs raises it through comparisons on every call: no Python call for that); a
    # kind the predicates tell is raised by them alone
    handler.nan_reads = tuple(reads) if mask & INVALID & ~told else None  # type: ignore[attr-defined]
    return handler


def _nothing_computed(args: tuple) -> bool:
    """Are all the kernel's array arguments empty (and is there one)?"""
    empty = False
    for a in args:
        if isinstance(a, np.ndarray):
            if a.size:
                return False
            empty = True
    return empty


def _filters_drop(seen: list, sites: list) -> bool:
    """Do the warnings filters drop every ``(message, filename, lineno)`` of ``sites``?
    ``seen``: the filters the last answer was for (the list object, its length and first
    entry: as fpmode.py's, catch_warnings installs a new list, simplefilter and
    filterwarnings insert at the front or append), then the answer."""
    filters = warnings.filters
    if filters is not seen[0] or len(filters) != seen[1] or (filters[0] if filters else None) is not seen[2]:
        seen[:] = [filters, len(filters), filters[0] if filters else None,
                   all(ignored_at(*at) for at in sites)]
    return seen[3]


def _numpy_warns(flags: int, told: tuple, args: tuple, entry: tuple) -> None:
    """Run NumPy's op ``told`` (``(argument position, op name, kwargs)``) on the kernel's
    argument, under NumPy's error mode for the kinds in ``flags`` (the others ignored),
    and give its floating-point warnings at the entry's line."""
    from ..ops import REGISTRY
    position, name, kwargs = told
    if all(ignored_at(f"{text} encountered in {step}", entry[2], entry[3])
           for bit, _key, text in KINDS if flags & bit for step in NUMPY_TELLS[name]):
        return
    stats["numpy_runs"] += 1
    if isinstance(position, int):
        value = args[position]
    else:   # a value the kernel computed (np.var(2 * x)): its own ops' warnings are theirs
        with np.errstate(all="ignore"):
            value = recomputed(position, args)
    modes = {key: "warn" if flags & bit else "ignore" for bit, key, _text in KINDS}
    with warnings.catch_warnings(record=True) as got, np.errstate(under="ignore", **modes):
        warnings.simplefilter("always")
        REGISTRY[name].impl(value, **kwargs)
    for w in got:
        text = str(w.message)
        if w.category is RuntimeWarning and " encountered in " in text:
            warn_at(text, entry[2], entry[3])


def recomputed(recipe: tuple, args: tuple) -> Any:
    """The value lowering/fp_flags.py ``_recipe`` describes, computed by NumPy's ops from
    the kernel's arguments ``args``."""
    from ..ops import REGISTRY
    if recipe[0] == "arg":
        return args[recipe[1]]
    if recipe[0] == "const":
        return recipe[1]
    _call, name, operands, kwargs = recipe
    return REGISTRY[name].impl(*(recomputed(r, args) for r in operands), **kwargs)


def cast_overflow(sites: tuple) -> None:
    """NumPy's "overflow encountered in cast" of a run-time Python float past a narrower
    float loop's largest value (NEP 50: ``float32_array + 1e150``), once per op that
    converts it (``sites``: their user's ``(filename, lineno)``), as NumPy's error mode
    says (the generated wrapper calls it before its kernels, which take the infinity)."""
    if warned_kinds() & OVER:
        for filename, lineno in sites:
            warn_at("overflow encountered in cast", filename, lineno)


def loop_flags_heard(warns: tuple) -> Callable[[int], bool]:
    """For a loop body whose native run reads the floating-point flags it raised
    (lowering/loop_runner.py: the code ``FP_RAISED | kinds``): ``heard(code)``, would
    running it as the reference (NumPy's scalar math, op by op) give a warning the user
    sees? ``warns``: the body's ``(message, filename, lineno)`` where NumPy may warn. Not
    where NumPy's error mode ignores every raised kind, nor where every message of those
    kinds is dropped by the filters or was shown at its line already (the default
    filter's once per location): then the native result stands, as NumPy's would have
    come with no warning shown. Else the caller runs the loop again as the reference,
    which warns as NumPy does (each time, under "always"; an error mode that raises never
    gets here: ``LoopBody.trapped``)."""
    sites = tuple((bit, at) for at in warns for bit, _key, text in KINDS if at[0].startswith(text))
    quiet: list = [None]   # (flags, filters token) of the last run that showed nothing

    def heard(code: int) -> bool:
        flags = code & warned_kinds()
        if not flags:
            return False
        # (a flag raised on every call, crc32's ``0 - x`` on uint32 after its warning was
        # shown: one look at the filters' version, not ignored_at and shown_at per site)
        token = filters_token()
        if token is not None and quiet[0] == (flags, token):
            return False
        loud = any(flags & bit and not (ignored_at(*at) or shown_at(*at)) for bit, at in sites)
        if not loud and token is not None:
            quiet[0] = (flags, token)
        return loud
    return heard
