"""What NumPy leaves unspecified, on the second pass through a loop or a helper.

The generator checks each candidate's operands (``exprs.zero_tie``, ``mixed_zeros``,
``has_nan``) on the values the statement sees when it is drawn: a loop body's first
iteration, a helper's first call. A later iteration can hand the same statement other
values (seed 19519: ``np.true_divide(x2.max(axis=-2, keepdims=True), ..., out=x2)`` in
a loop wrote -0.0 and +0.0 into the column the second pass took the max of).

So the generator's probe runs an instrumented copy of the program: the first line of
every loop body and every helper calls ``__repeat__(k, locals())``. Once some block runs
a second time, each such call checks block ``k``'s text against the values its names
have then, conservatively (any +0.0 and any -0.0 among them, not only a tie between two
operands), and a program that would meet an unspecified result is rejected. A power in
such a block is checked the same way for an ill-conditioned chain (``exprs.POWER_CONDITION``:
``v2 **= x0`` in a loop grows its values pass by pass, seed 35504): any float32 value
among its names as the base, any as the exponent.
"""
from __future__ import annotations

import re

import numpy as np

# A float32 power ``x ** y`` multiplies a relative difference in ``y`` by |y ln x| and
# one in ``x`` by |y|; NumPy's float32 power (SIMD) and the C library's ``powf`` differ
# in the last bit on about a fifth of inputs (stop 35), so a chain of powers, or a power
# whose result feeds another, may drift past float32's tolerance (seed 35504). The
# generator draws no power amplifying more than this (exprs.ill_conditioned_power).
POWER_CONDITION = 16.0

_HEAD = re.compile(r"^(\s*)(for |while |def (?!prog\())")
_MIN_MAX = re.compile(r"\b(maximum|minimum|fmax|fmin|max|min|amax|amin|clip|nanmax|nanmin|nanargmax|nanargmin|"
                      r"nanmedian|ptp|sort|partition|argpartition|unique|searchsorted|median)\(")
_NAME = re.compile(r"[A-Za-z_]\w*")
_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d*)?(?![\w.])")
_NEG_ZERO = re.compile(r"(?<![\w.])-0\.0\b")
_POS_ZERO = re.compile(r"(?<![\w.\-])(0(\.0*)?|False)(?![\w.])")


def instrument(lines: list[str]) -> tuple[list[str], list[str]]:
    """``lines`` with a ``__repeat__`` call opening each loop body and helper, and the
    text of each such block (a helper's calls inside it pull in the helper's text)."""
    out, heads, bodies = [], [], []
    for i, line in enumerate(lines):
        out.append(line)
        m = _HEAD.match(line)
        if not m or not line.rstrip().endswith(":"):
            continue
        indent = len(m.group(1))
        body = []
        for later in lines[i + 1:]:
            if later.strip() and len(later) - len(later.lstrip()) <= indent:
                break
            body.append(later)
        out.append(" " * (indent + 4) + f"__repeat__({len(bodies)}, locals())")
        heads.append(line)
        bodies.append("\n".join(body))
    helpers = {m.group(1): text for line, text in zip(heads, bodies)
               if (m := re.match(r"\s*def (\w+)\(", line))}
    for k, text in enumerate(bodies):
        bodies[k] = text + "".join("\n" + helpers[h] for h in helpers if re.search(rf"\b{h}\(", text))
    return out, bodies


def _values(v, depth: int = 0):
    if isinstance(v, (list, tuple)) and depth < 2:
        for x in v:
            yield from _values(x, depth + 1)
    elif isinstance(v, dict) and depth < 2:
        for x in v.values():
            yield from _values(x, depth + 1)
    elif isinstance(v, (np.ndarray, np.generic, int, float, bool)):
        a = np.asarray(v)
        if a.dtype.kind == "c":
            yield a.real
            yield a.imag
        elif a.dtype.kind in "biuf":
            yield a if a.dtype.kind == "f" else a.astype(np.float64)


def unspecified(text: str, ns: dict) -> bool:
    """Whether ``text`` (a block) may meet a result NumPy leaves unspecified with the
    values ``ns`` gives its names: a min/max-style op with both signs of zero around, or
    ``np.copysign`` with a NaN around (docs/fuzzing.md, "Unspecified by NumPy")."""
    minmax, copysign, power = _MIN_MAX.search(text), "copysign" in text, "**" in text
    if not (minmax or copysign or power):
        return False
    vals = [a for name in set(_NAME.findall(text)) if name in ns for a in _values(ns[name])]
    if power and _ill_conditioned_power(vals + [np.array(float(k)) for k in _NUMBER.findall(text)]):
        return True
    if copysign and any(np.isnan(a).any() for a in vals):
        return True
    if not minmax:
        return False
    neg = bool(_NEG_ZERO.search(text)) or any(((a == 0) & np.signbit(a)).any() for a in vals)
    pos = bool(_POS_ZERO.search(text)) or any(((a == 0) & ~np.signbit(a)).any() for a in vals)
    return neg and pos


def _ill_conditioned_power(vals: list) -> bool:
    """Could a power of any two of these values (float32 or float16 among them) amplify a
    last-bit difference past POWER_CONDITION? The largest exponent against the base
    with the largest |log|."""
    narrow = [a for a in vals if a.dtype.itemsize < 8]
    if not narrow:
        return False
    finite = np.concatenate([np.abs(a[np.isfinite(a)]).ravel().astype(np.float64) for a in vals])
    finite = finite[finite != 0]
    if not finite.size:
        return False
    logs = np.abs(np.log([finite.min(), finite.max()]))
    return finite.max() * max(1.0, logs.max()) > POWER_CONDITION


class Repeats:
    """The ``__repeat__`` of one probe call: counts each block's passes and remembers
    whether a pass after some block's first met an unspecified result."""

    def __init__(self, bodies: list[str]):
        self.bodies, self.counts, self.hit = bodies, [0] * len(bodies), False

    def __call__(self, k: int, ns: dict) -> None:
        self.counts[k] += 1
        if not self.hit and max(self.counts) > 1:
            self.hit = unspecified(self.bodies[k], ns)
