"""The C++ text every loop module starts with: integer traits, the overflow-checked
Python int arithmetic, NumPy's scalar rules that C lacks (floor division, remainder, power),
the floating-point flag probes, NumPy's pairwise summation, and the C library's own math
functions under kiln's names. kiln/lowering/loop_scalars.py prints expressions that call
these; loop_runner.py puts this text before the loop functions of one module.
"""
from __future__ import annotations

from pathlib import Path

from ..ops.loops import LIBM_MATH

# kiln_fmod: NumPy's inline fprem, as the kernels' prelude has it (the file's own comment)
_FMOD = (Path(__file__).parent.parent / "codegen_templates" / "cpp_fmod.h").read_text()

PRELUDE = r"""
// No libstdc++ headers (<cmath>, <limits>, <type_traits> took ~1 s of every build): the
// few math functions and integer traits the bodies use are GCC builtins and templates here.
#include <stdint.h>
#include <fenv.h>
#define KILN_FP_RAISED 16
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
// Loop bodies are mostly chains that carry a value from one iteration to the next
// (`s -= L[i, j] * x[j]` kept in order, as NumPy's reference does): with AVX-512, GCC
// vectorizes the loads and multiplies in 512-bit registers and then takes the lanes out
// one by one for the ordered chain, 1.6x slower on forward substitution than 256-bit
// (benchmarks/loops.py). Elementwise kernels keep the flags' vector width.
#pragma GCC target("prefer-vector-width=256")
#endif
#define KILN_FAIL(code) do { return (code); } while (0)
#define KILN_MATH1(name) \
  static inline double kiln_##name(double x) { return __builtin_##name(x); } \
  static inline float kiln_##name(float x) { return __builtin_##name##f(x); }
#define KILN_MATH2(name) \
  static inline double kiln_##name(double x, double y) { return __builtin_##name(x, y); } \
  static inline float kiln_##name(float x, float y) { return __builtin_##name##f(x, y); }
KILN_MATH1(fabs) KILN_MATH1(sqrt) KILN_MATH1(floor) KILN_MATH1(ceil) KILN_MATH1(trunc)
KILN_MATH2(pow) KILN_MATH2(fmax) KILN_MATH2(fmin) KILN_MATH2(copysign)
""" + _FMOD + r"""template <typename T> struct kiln_unsigned;
template <> struct kiln_unsigned<int8_t> { typedef uint8_t type; };
template <> struct kiln_unsigned<uint8_t> { typedef uint8_t type; };
template <> struct kiln_unsigned<int16_t> { typedef uint16_t type; };
template <> struct kiln_unsigned<uint16_t> { typedef uint16_t type; };
template <> struct kiln_unsigned<int32_t> { typedef uint32_t type; };
template <> struct kiln_unsigned<uint32_t> { typedef uint32_t type; };
template <> struct kiln_unsigned<int64_t> { typedef uint64_t type; };
template <> struct kiln_unsigned<uint64_t> { typedef uint64_t type; };
template <typename T> struct kiln_limits {   // integer types (bool: 0 and 1)
  typedef typename kiln_unsigned<T>::type U;
  static constexpr bool is_signed = (T)-1 < (T)0;
  static constexpr T max() { return is_signed ? (T)((U)~(U)0 >> 1) : (T)~(U)0; }
  static constexpr T lowest() { return is_signed ? (T)(-max() - 1) : (T)0; }
};
template <> struct kiln_limits<bool> {
  static constexpr bool is_signed = false;
  static constexpr bool max() { return true; }
  static constexpr bool lowest() { return false; }
};
// Float // and % as CPython's float_floor_div / float_rem (fmod from libm where fprem gives
// NaN: -nan % nan is -nan) and as NumPy's scalar math (npy_divmod, whose fmod keeps fprem's
// NaN: np.float64(-nan) % np.float64(nan) is +nan): ``Numpy`` picks the fmod (cpp_fmod.h)
template <bool Numpy, typename T> static inline T kiln_floordiv_t(T a, T b) {
  T mod = Numpy ? kiln_fmod_divmod(a, b) : kiln_fmod(a, b);
  if (!b) return a / b;
  T div = (a - mod) / b;
  if (mod) { if ((b < 0) != (mod < 0)) { mod += b; div -= (T)1; } }
  T fl;
  if (div) { fl = kiln_floor(div); if (div - fl > (T)0.5) fl += (T)1; }
  else { fl = kiln_copysign((T)0, a / b); }
  return fl;
}
template <bool Numpy, typename T> static inline T kiln_mod_t(T a, T b) {
  T mod = Numpy ? kiln_fmod_divmod(a, b) : kiln_fmod(a, b);
  if (!b) return mod;
  if (mod) { if ((b < 0) != (mod < 0)) mod += b; }
  else { mod = kiln_copysign((T)0, b); }
  return mod;
}
static inline double kiln_floordiv_f64(double a, double b) { return kiln_floordiv_t<false>(a, b); }
static inline double kiln_mod_f64(double a, double b) { return kiln_mod_t<false>(a, b); }
static inline double kiln_floordiv_npf64(double a, double b) { return kiln_floordiv_t<true>(a, b); }
static inline double kiln_mod_npf64(double a, double b) { return kiln_mod_t<true>(a, b); }
static inline float kiln_floordiv_f32(float a, float b) { return kiln_floordiv_t<true>(a, b); }
static inline float kiln_mod_f32(float a, float b) { return kiln_mod_t<true>(a, b); }
template <typename T> static inline T kiln_ifloordiv(T a, T b) {
  if (b == 0) return 0;
  if ((T)-1 < 0 && b == (T)-1) return (T)(0 - (typename kiln_unsigned<T>::type)a);
  T q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) q -= 1;
  return q;
}
template <typename T> static inline T kiln_imod(T a, T b) {
  if (b == 0) return 0;
  if ((T)-1 < 0 && b == (T)-1) return 0;
  T r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}
template <typename T> static inline T kiln_wrap_neg(T a) {
  typedef typename kiln_unsigned<T>::type U; return (T)(0 - (U)a); }
// NumPy's scalar math checks what the wrapping ones do not (``kiln_iflags``: the body's
// flag word, ops/fp_errors.py's bits, 1 divide by zero, 2 overflow), and the loop
// returns KILN_FP_RAISED | the word, as a float body's entry returns the floating-point
// flags it raised (the launcher runs the reference for the warnings). ``f = o ? f | 2 :
// f``: GCC 12 tests the add's own flag, a jo to a cold block that sets the bit (edit
// distance 1.25x the unchecked loop; ``f |= 2 * o`` took a seto, a zeroing and an or an
// op, 1.75x; a cmovo in asm 1.3x; a failure code per op, the reference run, 2-3x).
template <typename T> static inline T kiln_over_add(T a, T b, unsigned& f) {
  T r; const bool o = __builtin_add_overflow(a, b, &r); f = o ? f | 2u : f; return r; }
template <typename T> static inline T kiln_over_sub(T a, T b, unsigned& f) {
  T r; const bool o = __builtin_sub_overflow(a, b, &r); f = o ? f | 2u : f; return r; }
template <typename T> static inline T kiln_over_mul(T a, T b, unsigned& f) {
  T r; const bool o = __builtin_mul_overflow(a, b, &r); f = o ? f | 2u : f; return r; }
template <typename T> static inline T kiln_over_neg(T a, unsigned& f) {
  return kiln_over_sub<T>((T)0, a, f); }
template <typename T> static inline T kiln_over_abs(T a, unsigned& f) {
  return a < 0 ? kiln_over_neg<T>(a, f) : a; }
template <typename T> static inline T kiln_over_floordiv(T a, T b, unsigned& f) {
  f = b == 0 ? f | 1u : (T)-1 < 0 && b == (T)-1 && a == kiln_limits<T>::lowest() ? f | 2u : f;
  return kiln_ifloordiv<T>(a, b); }
template <typename T> static inline T kiln_over_mod(T a, T b, unsigned& f) {
  f = b == 0 ? f | 1u : f; return kiln_imod<T>(a, b); }
template <typename T> static inline T kiln_ipow(T a, T b) {
  typedef typename kiln_unsigned<T>::type U; U r = 1, x = (U)a;
  while (b > 0) { if (b & 1) r *= x; x *= x; b >>= 1; } return (T)r; }
template <typename T> static inline T kiln_lshift(T a, T b) {
  typedef typename kiln_unsigned<T>::type U;
  return ((uint64_t)(int64_t)b < sizeof(T) * 8) ? (T)((U)a << b) : (T)0; }
template <typename T> static inline T kiln_rshift(T a, T b) {
  return ((uint64_t)(int64_t)b < sizeof(T) * 8) ? (T)(a >> b) : (T)(a < 0 ? -1 : 0); }
template <typename T> static inline bool kiln_fits(double v) {
  return v == v && v >= -9.3e18 && v <= 1.8e19 &&
         (double)kiln_limits<T>::lowest() <= kiln_trunc(v) &&
         kiln_trunc(v) <= (double)kiln_limits<T>::max(); }
union kiln_slot { void* p; int64_t i; uint64_t u; double d; float f; };   // packed entries (launch.c)
#ifdef __AVX__   // each entry clears another library's upper vector state (cpp_prelude.h)
#define KILN_CLEAN_UPPER() __builtin_ia32_vzeroupper()
#else
#define KILN_CLEAN_UPPER() ((void)0)
#endif
// (cpp_prelude.h: in-order float sums GCC must not vectorize, GCC bug 110381)
#if defined(__x86_64__) || defined(__i386__)
#define KILN_OPAQUE(v) __asm__("" : "+x"(v))
#elif defined(__aarch64__)
#define KILN_OPAQUE(v) __asm__("" : "+w"(v))
#else
#define KILN_OPAQUE(v) __asm__("" : "+m"(v))
#endif
// (an integer min's operands ready early, before the one the last iteration made: loop_bounds.py)
#define KILN_SETTLED(v) __asm__("" : "+r"(v))
struct kiln_scratch {   // a buffer freed on every return (vector stores over overlapping memory)
  void* p;
  explicit kiln_scratch(unsigned long n) : p(__builtin_malloc(n ? n : 1)) {}
  ~kiln_scratch() { __builtin_free(p); }
};
// The floating-point flags a body raised of ``kinds`` (1 divide by zero, 2 overflow, 4
// invalid: ops/fp_errors.py), as FP_RAISED | those (0: none): NumPy's scalar math would
// have warned, perhaps (loop_runner.py).
static inline int64_t kiln_body_fp_raised(int kinds) {
  int c = fetestexcept(FE_DIVBYZERO | FE_OVERFLOW | FE_INVALID);
  int64_t f = ((c & FE_DIVBYZERO) ? 1 : 0) | ((c & FE_OVERFLOW) ? 2 : 0) | ((c & FE_INVALID) ? 4 : 0);
  return (f & kinds) ? (KILN_FP_RAISED | (f & kinds)) : 0;
}
// NumPy's pairwise summation (pairwise_sum in numpy/_core/src/umath/loops_utils.h.src;
// cpp_pairwise.h for the kernels, whose templates need its own prelude): a vector's
// a.sum() in a loop body adds in NumPy's order, in the sum's type. Under 8 terms in order
// from 0; up to 128 into 8 partial sums, ((r0+r1)+(r2+r3))+((r4+r5)+(r6+r7)), the rest
// in order; longer runs split at n/2 rounded down to a multiple of 8 (the tree not
// inlined into itself: g++ time).
template <typename T, typename F> static inline T kiln_pairwise_leaf(const F& f, int64_t lo, int64_t n) {
  T res = 0;
  if (n < 8) { for (int64_t j = 0; j < n; j++) res += f(lo + j); return res; }
  T r0 = f(lo), r1 = f(lo + 1), r2 = f(lo + 2), r3 = f(lo + 3);
  T r4 = f(lo + 4), r5 = f(lo + 5), r6 = f(lo + 6), r7 = f(lo + 7);
  int64_t i = 8;
  for (const int64_t end = n - (n % 8); i < end; i += 8) {
    r0 += f(lo + i); r1 += f(lo + i + 1); r2 += f(lo + i + 2); r3 += f(lo + i + 3);
    r4 += f(lo + i + 4); r5 += f(lo + i + 5); r6 += f(lo + i + 6); r7 += f(lo + i + 7);
  }
  res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7));
  for (; i < n; i++) res += f(lo + i);
  return res;
}
template <typename T, typename F> __attribute__((noinline)) static T kiln_pairwise_split(const F& f, int64_t lo, int64_t n) {
  if (n <= 128) return kiln_pairwise_leaf<T>(f, lo, n);
  int64_t half = n / 2;
  half -= half % 8;
  return kiln_pairwise_split<T>(f, lo, half) + kiln_pairwise_split<T>(f, lo + half, n - half);
}
template <typename T, typename F> static inline T kiln_pairwise_sum(const F& f, int64_t n) {
  return (T)0 + (n <= 128 ? kiln_pairwise_leaf<T>(f, 0, n) : kiln_pairwise_split<T>(f, 0, n));
}
template <typename T> static inline bool kiln_uint_fits(uint64_t v) {
  return v <= (uint64_t)kiln_limits<T>::max(); }
template <typename T> static inline bool kiln_int_fits(int64_t v) {
  return (kiln_limits<T>::is_signed || v >= 0) &&
         (__int128)v >= (__int128)kiln_limits<T>::lowest() &&
         (__int128)v <= (__int128)kiln_limits<T>::max(); }
"""
# math.<fn> (ops/loops.py LIBM_MATH): the C library's own function, the one CPython's math
# module calls, declared under another name with the symbol as its assembler name: GCC
# neither folds it (its constants are correctly rounded, glibc's results not always) nor
# swaps in a vector version.
PRELUDE += "".join(f'extern "C" double kiln_libm_{fn[5:]}(double) noexcept __asm__("{fn[5:]}");\n'
                   for fn in LIBM_MATH)
