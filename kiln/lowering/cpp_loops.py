"""The loop nests of the C++ renderer's stages (kiln/lowering/cpp_stages.py) and their
pragmas: a plain nest (parallel, SIMD or unrolled innermost), the blocked loop of any/all
reductions that stops once decided, and the independent lanes of max/min along one run.
"""
from __future__ import annotations

import re
from typing import Any

from .cpp_ops import VECTOR_MATH, VECTOR_MATH2
from .cpp_sums import constant_trip

# A kernel runs on several threads when elements x statements-per-element reaches this
# (a libm call counts cpp_ops.LIBM_CALL_COST statements). A parallel region costs
# ~10-30 us on a quiet 2-core machine, but next to BLAS calls (whose threads still spin)
# or under load from other processes it often waits ~0.5 ms for its second thread: W6's
# backward relu-mask kernel (131k elements x 17 statements, 30-60 us on one thread) cost
# 0.6 ms more per step on two.
PARALLEL_GRAIN = 1 << 22


def below_grain(work: Any, cost: int) -> bool:
    """Whether ``work`` (a kernel's elements, a C expression) is a number whose work falls
    below PARALLEL_GRAIN: such a kernel never takes threads, and its code names no parallel
    region (GCC outlines one before it can see that it never runs)."""
    trip = constant_trip(work)
    return trip is not None and trip * cost < PARALLEL_GRAIN


def loop_nest(loops: list, body: list[str], clauses: list[str], parallel: bool,
              block: str | None = None, simd: bool = True) -> list[str]:
    out = []
    for depth, (v, n) in enumerate(loops):
        if parallel and depth == 0:
            out += region_start("") + ["#pragma omp for" + (" simd" if len(loops) == 1 else "")
                                       + "".join(" " + c for c in clauses)]
        elif depth == len(loops) - 1 and short_loop(n):
            # A short fixed trip count (softmax over 10 classes): SIMD lanes would mostly
            # be prologue and remainder; unrolled, the row is straight-line code.
            out.append(f"#pragma GCC unroll {SHORT_LOOP}")
        elif depth == len(loops) - 1 and simd:
            out.append("#pragma omp simd" + "".join(" " + c for c in clauses))
        if v == block:  # the blocked outer points, innermost
            out.append("  " * depth + f"for (int64_t {v} = {v}_b; {v} < {v}_e; ++{v}) {{")
            continue
        out.append("  " * depth + f"for (int64_t {v} = 0; {v} < {n}; ++{v}) {{")
    out += ["  " * len(loops) + line for line in body]
    out += ["  " * d + "}" for d in reversed(range(len(loops)))]
    return out + REGION_END if parallel else out


def region_start(clauses: str) -> list[str]:
    """The opening lines of a stage's parallel region on ``nthreads`` (``clauses``: the
    region's own), closed by REGION_END. Each thread notes when it started (cpp_prelude.h,
    busy cores) and hands the floating-point flags it raises to the calling thread, which
    raises them after the region with its own from before it (as the kernel entry's and
    cpp_pairwise.h's regions do): a helper thread's flags stay in that thread, where the
    kernel's launch never reads them (np.log's "divide by zero" of a zero in the
    second thread's half was lost beside a max over the same loop)."""
    return ["{", "const int64_t launched = kiln_now_us();",
            "unsigned fp_threads = kiln_fp_take();   // (the calling thread's so far, then its threads')",
            "#pragma omp parallel num_threads(nthreads) reduction(|:fp_threads)" + clauses, "{",
            "kiln_arrived(launched);", "kiln_fp_take();"]


REGION_END = ["fp_threads |= kiln_fp_take();", "}", "kiln_fp_put(fp_threads);", "}"]


# Points per block of an any/all reduction that stops once its value is decided.
DECIDED_BLOCK = 1 << 14


def decided_loop(loop: tuple, body: list[str], clauses: list[str], logical: list, work: Any,
                 cost: int, split: bool) -> list[str]:
    """The loop of a stage of any/all reductions alone, in blocks of DECIDED_BLOCK points,
    which stops after the block that decides every one (a False for all, a True for any),
    as NumPy's logical_and/or reduction of a bool array stops at the first (memchr): on
    threads (``split``, enough work) the calling thread runs the first block alone, then
    each thread skips the blocks left once one decided."""
    v, n = loop
    b = DECIDED_BLOCK
    decided = " && ".join(f"{acc} == 0" if combine == "all" else f"{acc} != 0" for acc, combine in logical)
    inner = [f"const int64_t {v}_e = {v}_b + {b} < {n} ? {v}_b + {b} : {n};",
             "#pragma omp simd" + "".join(" " + c for c in clauses),
             f"for (int64_t {v} = {v}_b; {v} < {v}_e; ++{v}) {{"] + ["  " + line for line in body] + ["}"]
    serial = [f"for (int64_t {v}_b = 0; {v}_b < {n}; {v}_b += {b}) {{"] + ["  " + line for line in inner] + \
        [f"  if ({decided}) break;", "}"]
    if not split:
        return serial
    # (the first block on the calling thread: where it decides, no thread is woken)
    return [f"if (nthreads > 1 && (int64_t){work} * {cost} >= {PARALLEL_GRAIN}) {{",
            f"int {v}_stop = 0;   // (a block decided: the others are skipped)",
            "{", f"const int64_t {v}_b = 0;"] + inner + [f"if ({decided}) {v}_stop = 1;", "}",
            f"if (!{v}_stop) "] + region_start("".join(" " + c for c in clauses)) + [
            "#pragma omp for schedule(dynamic, 1)",
            f"for (int64_t {v}_c = 1; {v}_c < ({n} + {b - 1}) / {b}; ++{v}_c) {{",
            f"  if (__atomic_load_n(&{v}_stop, __ATOMIC_RELAXED)) continue;",
            f"  const int64_t {v}_b = {v}_c * {b};"] + ["  " + line for line in inner] + \
        [f"  if ({decided}) __atomic_store_n(&{v}_stop, 1, __ATOMIC_RELAXED);", "}"] + REGION_END + ["} else {"] + \
        serial + ["}"]


# Independent accumulators a max/min along one run keeps (extrema_lanes): 32 float64 are
# 8 ymm registers; 64 spilled (AVX-512 Rocket Lake, GCC 12: a C loop over 1e5 in L2
# took 9.0 us at 32, 12.6 at 64; float32 4.9 and 5.2).
EXTREMA_LANES = 32
EXTREMA_LANES_ROW = 4096


def extrema_lanes(inner: list, body: list[str], clauses: list[str], extrema: list,
                  whole: bool) -> list[str]:
    """One inner loop of max/min reductions (and their NaN flags) run on blocks of
    EXTREMA_LANES elements, element j of a block into accumulator j, the lanes combined
    after the blocks and the remainder run as before. Under ``omp simd reduction(max:...)``
    GCC keeps one vector accumulator and each vmaxpd waits for the one before (4
    cycles): ``x.max()`` of 1e5 float64 in cache ran at 0.6x NumPy's speed, float32 0.34x;
    the lanes are independent chains (GCC keeps them in registers when the block loop
    counts j from 0). Which value a max keeps among equal ones (-0.0 and 0.0) already
    depended on SIMD lanes, as in NumPy. ``whole``: the kernel's one point (``x.max()``);
    per row of a row reduction the lanes' start and combine cost ~100 cycles, so rows
    take them from EXTREMA_LANES_ROW elements (2000x100 float64 rows: 38 -> 93 us).
    An argmax/argmin's entry (accumulator, C type, start, combine, position's accumulator,
    is float) keeps NumPy's answer: each lane takes its first extreme (or first NaN) in
    order, the lanes combine by value then smallest position, the first NaN's position
    winning outright, and the remainder (later positions) runs in order after them
    (np.abs(Z - z).argmin() of 2e5 float64: one chain of selects took 1.7x NumPy's time).
    Their in-order loop costs more than the lanes' start and combine from 2 *
    EXTREMA_LANES elements of a row too ((X * 2).argmin(axis=1) of 400x500: 152 -> 63 us)."""
    k = EXTREMA_LANES
    trip = constant_trip(inner[-1][1])
    ordered = any(len(e) > 4 for e in extrema)   # (argmax/argmin: no SIMD across their loop)
    if len(inner) != 1 or (trip is None and not whole) \
            or trip is not None and trip < (2 * k if whole or ordered else EXTREMA_LANES_ROW):
        return loop_nest(inner, body, clauses, parallel=False, simd=not ordered)
    (v, n), = inner
    lane = {name: f"{name}_l[{v}_j]" for e in extrema for name in (e[0], *e[4:5])}
    words = re.compile(r"\b(" + "|".join(re.escape(a) for a in lane) + r")\b")
    out = ["{", f"const int64_t {v}_m = ({n}) / {k} * {k};"]
    for acc, c_type, init, *arg in extrema:
        for name, tp, start in ((acc, c_type, init),) + (((arg[1], "int64_t", "0"),) if arg[1:] else ()):
            out.append(f"{tp} {name}_l[{k}];")
            out.append(f"for (int {v}_j = 0; {v}_j < {k}; ++{v}_j) {name}_l[{v}_j] = {start};")
    out += [f"for (int64_t {v}_b = 0; {v}_b < {v}_m; {v}_b += {k}) {{", "#pragma omp simd",
            f"  for (int64_t {v}_j = 0; {v}_j < {k}; ++{v}_j) {{", f"    const int64_t {v} = {v}_b + {v}_j;"]
    out += ["    " + words.sub(lambda m: lane[m.group(1)], line) for line in body]
    simd = [] if ordered else ["#pragma omp simd" + "".join(" " + c for c in clauses)]
    out += ["  }", "}"]
    args = [(acc, arg[0], combine, arg[1]) for acc, _, _, combine, *arg in extrema if arg]
    if args:   # (a tree: one lane folded in at a time made a chain, 32 steps a row)
        out += [f"for (int {v}_h = {k // 2}; {v}_h > 0; {v}_h /= 2) {{", "#pragma omp simd",
                f"  for (int {v}_j = 0; {v}_j < {v}_h; ++{v}_j) {{"]
        for acc, at, combine, floats in args:
            out += ["    " + line for line in _arg_combine(
                lane[acc], lane[acc].replace("_j]", f"_j + {v}_h]"), lane[at],
                lane[at].replace("_j]", f"_j + {v}_h]"), combine, floats)]
        out += ["  }", "}"]
        for acc, at, combine, floats in args:
            out += _arg_combine(acc, f"{acc}_l[0]", at, f"{at}_l[0]", combine, floats)
    if len(args) < len(extrema):
        out += simd + [f"for (int {v}_j = 0; {v}_j < {k}; ++{v}_j) {{"]
        for acc, _, _, combine, *arg in extrema:
            if not arg:
                mine = lane[acc]
                out.append(f"  {acc} |= {mine};" if combine == "|" else
                           f"  {acc} = {acc} {'>' if combine == 'max' else '<'} {mine} ? {acc} : {mine};")
        out += ["}"]
    out += simd + [f"for (int64_t {v} = {v}_m; {v} < {n}; ++{v}) {{"]
    return out + ["  " + line for line in body] + ["}", "}"]


def _arg_combine(acc: str, mine: str, at: str, mine_at: str, combine: str, floats: bool) -> list[str]:
    """Fold one lane's (value, position) of an argmax/argmin into (acc, at): the better
    value, of equal ones the smaller position; of floats a NaN first, the smaller NaN
    position once acc is NaN (NumPy: the first NaN)."""
    earlier = f"({mine} == {acc} & {mine_at} < {at})"
    take = f"({mine} {'>' if combine == 'argmax' else '<'} {acc}) | {earlier}"
    if floats:
        take = f"({acc} != {acc} & {mine} != {mine} & {mine_at} < {at}) | ({acc} == {acc} & ({take} | ({mine} != {mine})))"
    return [f"{{ const bool kiln_take = {take};", f"  {acc} = kiln_take ? {mine} : {acc};",
            f"  {at} = kiln_take ? {mine_at} : {at}; }}"]


# Inner loops of at most this many iterations (known at compile time) are unrolled
# (fewer than one AVX-512 vector of floats, where SIMD is mostly remainder handling).
SHORT_LOOP = 12


def short_loop(n: Any) -> bool:
    trip = constant_trip(n)
    return trip is not None and trip <= SHORT_LOOP


# A kernel of at most SCALAR_WORK statements (elements x statements per element, known
# when it is built) compiles its body as scalar code (cpp_kernel.cpp.j2: no SIMD pragma,
# -O2 without the loop vectorizer): a 12-element x % 3 == 1 took g++ 0.30 s at -O3, the
# vectorizer's prologue, main loop and epilogue around a trip count the noipa body never
# sees (1,227 instructions), to run a few ns of a ~1 us launch. (The 360 modules of
# test_programs_real23/real6: g++ 50.5 -> 45.0 s. -O1 saved no more and ran such a body
# 1.5-2x slower, a 36-element one +50 ns; -O2 scalar ran it within ~10 ns of the SIMD
# loop.) Only where vectors cannot change a bit of the result: no vector math (libmvec
# and NumPy's SVML differ from the scalar functions in the last bits), no reduction the
# lanes would reassociate (float sums, a max choosing among equal -0.0/0.0); or and and
# reductions (flags, any/all) are exact either way.
SCALAR_WORK = 1 << 9
_SIMD_PRAGMA = re.compile(r"^\s*#pragma omp simd((?: reduction\([|&]:[^)]*\))*)\s*$")
_VECTOR_CALL = re.compile(r"\b(?:(?:%s)f?|kiln_np_\w+|kiln_exp|kiln_logaddexp\w*|kiln_hypot\w*|kiln_c(?:64|128)\w*)\s*\("
                          % "|".join(VECTOR_MATH + VECTOR_MATH2))


def scalar_body(work: Any, cost: int, body: list[str]) -> list[str] | None:
    """``body`` without its SIMD pragmas when the kernel compiles as scalar code
    (SCALAR_WORK), else None."""
    trip = constant_trip(work)
    if trip is None or trip * cost > SCALAR_WORK or any(_VECTOR_CALL.search(line) for line in body):
        return None
    pragmas = [line for line in body if "#pragma omp" in line and "simd" in line]
    if any(not _SIMD_PRAGMA.match(line) for line in pragmas):
        return None
    return [line for line in body if line not in pragmas]
