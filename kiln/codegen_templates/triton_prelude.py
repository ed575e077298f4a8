# kiln Triton prelude: pasted at the top of every generated kernel module, so a module is
# self-contained and its helpers are decorated in the same mode (compiled or interpreted)
# as its kernels. Only Triton builtins are called here (tl.where, tl.reduce ...): the
# @triton.jit functions of triton.language (tl.max, tl.sum, tl.zeros) are decorated once,
# when triton is imported, and cannot run in the interpreter of a compiled-mode process.
import triton
import triton.language as tl
from triton.language.extra import libdevice


@triton.jit
def kiln_add(a, b):
    return a + b


@triton.jit
def kiln_mul(a, b):
    return a * b


@triton.jit
def kiln_or(a, b):
    return a | b


@triton.jit
def kiln_and(a, b):
    return a & b


@triton.jit
def kiln_max(a, b):
    # NumPy's maximum: NaN wins (tl.maximum and tl.max drop it)
    return tl.where((a > b) | (a != a), a, b)


@triton.jit
def kiln_min(a, b):
    return tl.where((a < b) | (a != a), a, b)


@triton.jit
def kiln_argmax(a, ai, b, bi):
    # the larger value, a NaN before any number, and on ties the lower index (NumPy's rule)
    a_nan = a != a
    b_nan = b != b
    tie = (a == b) | (a_nan & b_nan)
    take_a = ((a > b) & ~b_nan) | (a_nan & ~b_nan) | (tie & (ai < bi))
    return tl.where(take_a, a, b), tl.where(take_a, ai, bi)


@triton.jit
def kiln_argmin(a, ai, b, bi):
    a_nan = a != a
    b_nan = b != b
    tie = (a == b) | (a_nan & b_nan)
    take_a = ((a < b) & ~b_nan) | (a_nan & ~b_nan) | (tie & (ai < bi))
    return tl.where(take_a, a, b), tl.where(take_a, ai, bi)


@triton.jit
def kiln_floor_divide(a, b):
    # NumPy's float floor division (npy_divmod): the sign follows the divisor. Its
    # divisions are kiln_div's: Triton's float32 `/` is within 2 ulp, which moves a
    # quotient past 2**24 (1e30 // 3) to another integer than NumPy's.
    mod = libdevice.fmod(a, b)
    q = kiln_div(a, b)
    div = kiln_div(a - mod, b)
    div = tl.where((mod != 0) & ((b < 0) != (mod < 0)), div - 1, div)
    fl = libdevice.floor(div)
    fl = tl.where(div - fl > 0.5, fl + 1, fl)
    fl = tl.where(div == 0, libdevice.copysign(div * 0, q), fl)
    return tl.where(b == 0, q, fl)


@triton.jit
def kiln_remainder(a, b):
    mod = libdevice.fmod(a, b)
    mod = tl.where((mod != 0) & ((b < 0) != (mod < 0)), mod + b, mod)
    return tl.where(mod == 0, libdevice.copysign(mod * 0, b), mod)


@triton.jit
def kiln_floor_divide_int(a, b):
    # NumPy: division by zero gives 0, MIN // -1 wraps; neither may trap or be undefined here
    safe = tl.where((b == 0) | (b == -1), 1, b)
    q = a // safe
    q = tl.where(((a % safe) != 0) & ((a < 0) != (safe < 0)), q - 1, q)
    q = tl.where(b == -1, 0 - a, q)
    return tl.where(b == 0, 0, q)


@triton.jit
def kiln_remainder_int(a, b):
    safe = tl.where((b == 0) | (b == -1), 1, b)
    r = a % safe
    r = tl.where((r != 0) & ((r < 0) != (safe < 0)), r + safe, r)
    return tl.where((b == 0) | (b == -1), 0, r)


@triton.jit
def kiln_logaddexp(x, y):
    d = x - y
    big = tl.where(d > 0, x, y)
    out = big + libdevice.log1p(libdevice.exp(-tl.abs(d)))
    out = tl.where(d != d, d, out)
    return tl.where(x == y, x + tl.full([], 0.6931471805599453, x.dtype), out)


@triton.jit
def kiln_clip(x, lo, hi):
    # minimum(maximum(x, lo), hi), NaN-propagating; a tie takes the bound, as NumPy's does
    m = tl.where(x != x, x, tl.where(x > lo, x, lo))
    return tl.where(m != m, m, tl.where(m < hi, m, hi))


@triton.jit
def kiln_clip_int(x, lo, hi):
    m = tl.where(x >= lo, x, lo)
    return tl.where(m <= hi, m, hi)


@triton.jit
def kiln_div(a, b):
    # IEEE division: Triton's float32 `/` is approximate (float64's is exact)
    if a.dtype == tl.float32:
        return tl.math.div_rn(a, b)
    else:
        return a / b


@triton.jit
def kiln_sqrt(x):
    if x.dtype == tl.float32:
        return tl.math.sqrt_rn(x)
    else:
        return tl.sqrt(x)


@triton.jit
def kiln_divide_uint(a, b):
    return tl.where(b == 0, 0, a // tl.where(b == 0, 1, b))


@triton.jit
def kiln_remainder_uint(a, b):
    return tl.where(b == 0, 0, a % tl.where(b == 0, 1, b))


@triton.jit
def kiln_fmod_int(a, b):
    # C's remainder (the sign of a); by zero (and MIN % -1) 0, as NumPy gives
    bad = (b == 0) | (b == -1)
    return tl.where(bad, 0, a % tl.where(bad, 1, b))


@triton.jit
def kiln_lshift(a, b):
    # NumPy: shifting by the width or more (or a negative count) gives 0
    bits: tl.constexpr = a.dtype.primitive_bitwidth
    ok = (b >= 0) & (b < bits)
    return tl.where(ok, a << tl.where(ok, b, 0), 0)


@triton.jit
def kiln_rshift(a, b):
    bits: tl.constexpr = a.dtype.primitive_bitwidth
    ok = (b >= 0) & (b < bits)
    zero = a ^ a
    return tl.where(ok, a >> tl.where(ok, b, 0), tl.where(a < 0, zero - 1, zero))   # sign fill
