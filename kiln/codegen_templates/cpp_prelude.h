// kiln C++ prelude: pasted at the top of every generated source (no libstdc++ headers:
// they would triple compile time). Math functions are declared here, not taken from
// <math.h>, so that the SIMD declarations below make GCC call glibc's vector math
// (libmvec) without -ffast-math; the build passes -fno-builtin-<name> for each of them.
#include <stdint.h>
#include <omp.h>

#define KILN_SIMD __attribute__((const, nothrow, simd("notinbranch")))
#define KILN_PURE __attribute__((const, nothrow))
extern "C" {
{% for name in vector_math %}KILN_SIMD float {{ name }}f(float); KILN_SIMD double {{ name }}(double);
{% endfor %}{% for name in vector_math2 %}KILN_SIMD float {{ name }}f(float, float); KILN_SIMD double {{ name }}(double, double);
{% endfor %}{% for name in scalar_math2 %}KILN_PURE float {{ name }}f(float, float); KILN_PURE double {{ name }}(double, double);
{% endfor %}}

// NumPy's float floor division and remainder (npy_divmod): the result takes the sign of
// the divisor, and division by zero gives inf/nan rather than trapping.
template <typename T> static inline T kiln_floor_divide(T a, T b) {
    if (b == 0) return a / b;
    T mod = fmod(a, b);
    T div = (a - mod) / b;
    if (mod != 0 && ((b < 0) != (mod < 0))) div -= 1;
    if (div == 0) return __builtin_copysign((T)0, a / b);  // -0.0 // 1.0 is -0.0
    T fl = __builtin_floor(div);
    if (div - fl > (T)0.5) fl += 1;
    return fl;
}
template <typename T> static inline T kiln_remainder(T a, T b) {
    if (b == 0) return fmod(a, b);
    T mod = fmod(a, b);
    if (mod != 0) { if ((b < 0) != (mod < 0)) mod += b; }
    else mod = __builtin_copysign((T)0, b);
    return mod;
}
// Integer division by zero gives 0 in NumPy (with a warning we do not emit); MIN / -1
// wraps to MIN. Neither may trap here.
template <typename T> static inline T kiln_floor_divide_int(T a, T b) {
    if (b == 0) return 0;
    if (b == -1) return (T)(0 - (uint64_t)a);
    T q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) q -= 1;
    return q;
}
template <typename T> static inline T kiln_remainder_int(T a, T b) {
    if (b == 0 || b == -1) return 0;
    T r = a % b;
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
}
template <typename T> static inline T kiln_lshift(T a, T b) {
    return (b < 0 || b >= (T)(8 * sizeof(T))) ? (T)0 : (T)(a << b);
}
template <typename T> static inline T kiln_rshift(T a, T b) {
    if (b < 0 || b >= (T)(8 * sizeof(T))) return a < 0 ? (T)-1 : (T)0;
    return (T)(a >> b);
}
template <typename T> static inline T kiln_logaddexp(T x, T y) {
    if (x == y) return x + (T)0.693147180559945309417232121458176568;  // log(2)
    T d = x - y;
    if (d > 0) return x + log1p(exp(-d));
    if (d <= 0) return y + log1p(exp(d));
    return d;  // nan
}
static inline float log1p(float x) { return log1pf(x); }
static inline float exp(float x) { return expf(x); }
static inline float fmod(float a, float b) { return fmodf(a, b); }
// np.clip with array bounds: minimum(maximum(x, lo), hi), NaN-propagating; a tie takes the bound, as
// NumPy's (a > b ? a : b) does (clip(-0.0, zeros, ...) and clip(-0.0, 0, None) are +0.0; 0-d
// bounds keep x on a tie: see clip's lowering in kiln/ops/pointwise.py).
template <typename T> static inline T kiln_clip(T x, T lo, T hi) {
    T m = (x > lo || x != x) ? x : lo;
    return (m < hi || m != m) ? m : hi;
}
template <typename T> static inline T kiln_clip_int(T x, T lo, T hi) {
    T m = x >= lo ? x : lo;
    return m <= hi ? m : hi;
}
