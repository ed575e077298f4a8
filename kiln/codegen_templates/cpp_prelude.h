// kiln C++ prelude: pasted at the top of every generated source (no libstdc++ headers:
// they would triple compile time), with the helper sections its kernels name
// (kiln/lowering/cpp_text.py HELPERS: parsing them all is ~6 ms of a softmax's build). Math functions are declared here, not taken from
// <math.h>, so that the SIMD declarations below make GCC call glibc's vector math
// (libmvec) without -ffast-math; the build passes -fno-builtin-<name> for each of them.
#include <stdint.h>
#include <omp.h>
// The two functions of <stdlib.h> kernels call (scratch buffers), declared rather than
// included: its ~1,600 preprocessed lines were ~6 ms (7%) of a small module's compile.
typedef __SIZE_TYPE__ size_t;
extern "C" void* malloc(size_t) noexcept;
extern "C" void free(void*) noexcept;

// Fork and busy cores: the state and the functions that are compiled once per compiler and
// flags into kiln's support object (cpp_support.cpp), which every kernel module links
// (kiln/runtime/build.py support_object): emitting them in each module cost ~13 ms of a
// small module's ~60 ms compile. Declared here: one copy per library, hidden.
{% include "cpp_runtime_state.h" %}
// Dirty upper vector state. Another library's AVX code can return with the upper halves of
// the vector registers still in use (OpenBLAS's gemm kernels do: no vzeroupper), and the
// legacy-SSE code a kernel then calls (glibc's cexp, parts of libm) pays a state-transition
// penalty on every instruction: a complex exp kernel run right after a complex matmul took
// 56x as long as on a clean state. Every entry clears that state first (one instruction).
#ifdef __AVX__
#define KILN_CLEAN_UPPER() __builtin_ia32_vzeroupper()
#else
#define KILN_CLEAN_UPPER() ((void)0)
#endif

// In-order float sums GCC must not vectorize. GCC 12.2 (seemingly GCC bug 110381) vectorizes
// a loop adding several loads a step into one float accumulator in order (a "fold-left"
// reduction) and loses the loads' order when they are not consecutive: `s += x[i, 1];
// s += x[i, 0]` in a loop, or a reversed short row x[..., ::-1].sum(), read the wrong
// elements (GCC 12.2: 9120 for 8128). Such a sum gains little from vectors (its adds run
// one after another whatever the loads do), so after each update the accumulator goes
// through an empty asm the vectorizer cannot take, and the loop stays scalar.
#if defined(__x86_64__) || defined(__i386__)
#define KILN_OPAQUE(v) __asm__("" : "+x"(v))
#elif defined(__aarch64__)
#define KILN_OPAQUE(v) __asm__("" : "+w"(v))
#else
#define KILN_OPAQUE(v) __asm__("" : "+m"(v))
#endif

// One argument of a kernel's packed entry (called by kiln/runtime/launch.c).
union kiln_slot { void* p; int64_t i; uint64_t u; double d; float f; };

// Floating-point exception flags, as kiln/runtime/fpwarn.py reads them: 1 divide by zero,
// 2 overflow, 4 invalid (kiln/ops/fp_errors.py). launch.c takes the calling thread's before
// and after a kernel; a parallel region hands its threads' flags to the calling thread.
#if defined(__x86_64__) || defined(__i386__)
// MXCSR: invalid 0x01, divide 0x04, overflow 0x08 (exceptions stay masked)
static inline unsigned kiln_fp_take() {
    unsigned c = __builtin_ia32_stmxcsr();
    if (c & 0x0d) __builtin_ia32_ldmxcsr(c & ~0x3fu);
    return ((c >> 2) & 1) | ((c >> 2) & 2) | ((c & 1) << 2);
}
static inline void kiln_fp_put(unsigned f) {
    if (f) __builtin_ia32_ldmxcsr(__builtin_ia32_stmxcsr() | ((f & 1) << 2) | ((f & 2) << 2) | ((f >> 2) & 1));
}
#else
#include <fenv.h>
static inline unsigned kiln_fp_take() {
    int c = fetestexcept(FE_DIVBYZERO | FE_OVERFLOW | FE_INVALID);
    if (c) feclearexcept(FE_ALL_EXCEPT);
    return (c & FE_DIVBYZERO ? 1u : 0u) | (c & FE_OVERFLOW ? 2u : 0u) | (c & FE_INVALID ? 4u : 0u);
}
static inline void kiln_fp_put(unsigned f) {
    if (f) feraiseexcept((f & 1 ? FE_DIVBYZERO : 0) | (f & 2 ? FE_OVERFLOW : 0) | (f & 4 ? FE_INVALID : 0));
}
#endif

{% if 'fp_own' in helpers %}// A kernel whose ops' predicates tell which of them raised a kind (kiln/lowering/fp_flags.py):
// its entry keeps the body's word for kiln/runtime/fpwarn.py (kiln_fp_owned, the calling
// thread's last) and leaves the calling thread the flags raised before it, its other
// kinds' flags and, of the kinds the word tells (``told``), only those a predicate raised
// (a NaN compared, a libm function's own flags: not NumPy's).
__attribute__((weak, visibility("hidden"))) __thread unsigned kiln_owned_word = 0;
extern "C" __attribute__((weak)) unsigned kiln_fp_owned(void) { return kiln_owned_word; }
static inline void kiln_fp_own(unsigned before, unsigned fp, unsigned told, unsigned fired, unsigned owned) {
    kiln_owned_word = owned;
    kiln_fp_take();
    kiln_fp_put(before | (fp & ~told) | fired);
}
{% endif %}
{% if 'fp_spoils' in helpers %}// A reduction's term in a body telling which op raised a kind (kiln/lowering/cpp_stages.py):
// notes a term that makes the result non-finite itself (not finite: ``over``; a NaN:
// ``invalid``), stored, never combined, so lanes, threads and pairwise runs may all note it.
template <class T> static inline T kiln_fp_spoils(T v, int& over, int& invalid) {
    if (!(__builtin_fabs(v) < __builtin_inf())) __atomic_store_n(&over, 1, __ATOMIC_RELAXED);
    if (v != v) __atomic_store_n(&invalid, 1, __ATOMIC_RELAXED);
    return v;
}
{% endif %}#define KILN_SIMD __attribute__((const, nothrow, simd("notinbranch")))
#define KILN_PURE __attribute__((const, nothrow))
// Inlined always: a long fused body (50 Mandelbrot steps) would hit GCC's inline limits, and
// a call in the loop stops it vectorizing.
#define KILN_INLINE static inline __attribute__((always_inline))
extern "C" {
{% for name in vector_math %}KILN_SIMD float {{ name }}f(float); {{ "KILN_PURE" if name in scalar_f64 else "KILN_SIMD" }} double {{ name }}(double);
{% endfor %}{% for name in vector_math2 %}KILN_SIMD float {{ name }}f(float, float); KILN_SIMD double {{ name }}(double, double);
{% endfor %}{% for name in scalar_math2 %}KILN_PURE float {{ name }}f(float, float); KILN_PURE double {{ name }}(double, double);
{% endfor %}KILN_PURE double kiln_libm_pow(double, double) __asm__("pow");   // (np.float_power's: scalar)
}
{% if 'svml' in helpers %}// NumPy's SVML functions, where NumPy's loops call them (kiln/lowering/svml.py): their
// vector variants are in the support object (cpp_support.cpp), for AVX-512 builds; other
// builds, and NumPy's loops that are not SVML's, call glibc's.
#if {{ 1 if numpy_svml else 0 }} && defined(__AVX512F__)
extern "C" {
{% for name, (svml_name, n, fill, ctypes) in svml.items() %}{% if "float" in ctypes %}KILN_SIMD float kiln_np_{{ name }}f(float{{ ", float" if n == 2 else "" }}); {% endif %}KILN_SIMD double kiln_np_{{ name }}(double{{ ", double" if n == 2 else "" }});
{% endfor %}{% if numpy_explog_f32 %}KILN_SIMD float kiln_np_expf(float); KILN_SIMD float kiln_np_logf(float);   // (NumPy's own loops: below)
KILN_SIMD float kiln_np_sinf(float); KILN_SIMD float kiln_np_cosf(float);
{% endif %}}
#define KILN_NP_SVML 1
#elif {{ 1 if libm_scalar else 0 }}
// NumPy's loops of these are its generic ones, libm's scalar function per element (svml.py
// numpy_scalar_libm: no AVX512_SKX); glibc's vector ones are 1 ulp off them
extern "C" {
{% for name, (svml_name, n, fill, ctypes) in svml.items() %}{% if "float" in ctypes %}KILN_PURE float kiln_np_{{ name }}f(float{{ ", float" if n == 2 else "" }}) __asm__("{{ name }}f"); {% endif %}KILN_PURE double kiln_np_{{ name }}(double{{ ", double" if n == 2 else "" }}) __asm__("{{ name }}");
{% endfor %}}
#else
{% for name, (svml_name, n, fill, ctypes) in svml.items() %}{% if "float" in ctypes %}#define kiln_np_{{ name }}f {{ name }}f
{% endif %}#define kiln_np_{{ name }} {{ name }}
{% endfor %}#endif
{% if numpy_explog_f32 %}#ifndef KILN_NP_SVML   // (with AVX-512 and SVML bound: the support object's, NumPy's intrinsics)
// NumPy's float32 exp and log, where its loops are its own AVX512F/AVX2+FMA3 ones (svml.py
// numpy_own_f32_loops): a port of simd_exp_FLOAT and simd_log_FLOAT from NumPy's
// numpy/_core/src/umath/loops_exponent_log.dispatch.c.src (2.x; BSD-3-Clause, Copyright (c)
// 2005-2025, NumPy Developers), lane by lane: the same operations in the same order (the
// build keeps -ffp-contract=off; fmas are NumPy's), so the same bits; glibc's expf is 1
// ulp off it in ~30% of elements (up to 4), logf in ~8%. Every lane is computed alone, so
// a short vector's lanes (NumPy fills them with 0) and strided operands (NumPy's scalar
// loop calls the same code per element) change nothing. Compares are quiet ones, as
// NumPy's _CMP_*_OQ: a NaN raises no flag. The flags NumPy sets (exp's overflow for x >=
// xmax short of inf; log's invalid for x < 0, divide by zero for x == 0) come from the
// arithmetic of those lanes, written so that GCC (-fno-trapping-math: it computes both
// sides of a select in every lane) raises them in no other lane: no float operation here
// overflows, divides by zero or is invalid elsewhere.
KILN_INLINE uint32_t kiln_f32_bits(float f) { uint32_t i; __builtin_memcpy(&i, &f, 4); return i; }
KILN_INLINE float kiln_f32_from(uint32_t i) { float f; __builtin_memcpy(&f, &i, 4); return f; }
KILN_INLINE float kiln_np_expf(float x) {
    const float xmax = 88.72283935546875f, xmin = -103.97208404541015625f, magic = 0x1.800000p+23f;
    const bool nan = x != x, big = __builtin_isgreaterequal(x, xmax), small = __builtin_islessequal(x, xmin);
    const bool inf = x == __builtin_inff();
    // NumPy computes 0 in those lanes and then sets inf; here a finite x >= xmax computes
    // exp(100), whose 2^144 scaling overflows: NumPy's inf, with its overflow flag
    float y = nan || small || inf ? 0.0f : big ? 100.0f : x;
    float q = y * 1.442695040888963407359924681001892137f;   // NPY_LOG2Ef
    q = (q + magic) - magic;                                   // round to nearest
    y = __builtin_fmaf(q, -6.93145752e-1f, y);                 // Cody-Waite: ln 2 in two parts
    y = __builtin_fmaf(q, -1.42860677e-6f, y);
    y = __builtin_fmaf(q, 0.0f, y);
    float num = __builtin_fmaf(5.082762527590693718096e-04f, y, 6.757896990527504603057e-03f);
    num = __builtin_fmaf(num, y, 5.114512081637298353406e-02f);
    num = __builtin_fmaf(num, y, 2.473615434895520810817e-01f);
    num = __builtin_fmaf(num, y, 7.257664613233124478488e-01f);
    num = __builtin_fmaf(num, y, 9.999999999980870924916e-01f);
    float den = __builtin_fmaf(2.159509375685829852307e-02f, y, -2.742335390411667452936e-01f);
    den = __builtin_fmaf(den, y, 1.0f);
    // _mm512_scalef_ps(num / den, q): the quotient times 2^q, rounded once: times 2^(q - h)
    // (exact: the quotient is in [0.7, 1.5), q in [-150, 144]), then times 2^h
    const int32_t k = (int32_t)q, h = k >> 1;
    const float r = num / den * kiln_f32_from((uint32_t)(k - h + 127) << 23) * kiln_f32_from((uint32_t)(h + 127) << 23);
    return nan ? __builtin_nanf("") : small ? 0.0f : inf ? x : r;
}
KILN_INLINE float kiln_np_logf(float x) {
    const bool neg = __builtin_isless(x, 0.0f), nan = x != x;
    const uint32_t bx = neg ? 0u : kiln_f32_bits(x);   // (NumPy: 0 for x < 0)
    // exponent (getexp + 1) and mantissa in [0.5, 1) (getmant); a subnormal's through its
    // significand converted to float (exact: x 2^149), which raises nothing
    const bool sub = (bx & 0x7f800000u) == 0;
    const uint32_t b = sub ? kiln_f32_bits((float)(int32_t)(bx & 0x7fffffu)) : bx;
    float e = (float)((int32_t)((b >> 23) & 0xff) - (sub ? 275 : 126));
    float m = kiln_f32_from((b & 0x7fffffu) | (126u << 23));
    const bool low = __builtin_islessequal(m, 0.707106781186547524400844362104849039f);   // NPY_SQRT1_2f
    m = low ? m + m : m;
    e = low ? e - 1.0f : e;
    m = m - 1.0f;
    float num = __builtin_fmaf(2.589979117907922693523e-02f, m, 3.808837741388407920751e-01f);
    num = __builtin_fmaf(num, m, 1.480000633576506585156e+00f);
    num = __builtin_fmaf(num, m, 2.112677543073053063722e+00f);
    num = __builtin_fmaf(num, m, 9.999999999999998702752e-01f);
    num = __builtin_fmaf(num, m, 0.0f);
    float den = __builtin_fmaf(5.875095403124574342950e-03f, m, 1.546476374983906719538e-01f);
    den = __builtin_fmaf(den, m, 9.864942958519418960339e-01f);
    den = __builtin_fmaf(den, m, 2.453006071784736363091e+00f);
    den = __builtin_fmaf(den, m, 2.612677543073109236779e+00f);
    den = __builtin_fmaf(den, m, 1.0f);
    // x < 0: -NaN, raising invalid; x == 0: -inf, raising divide by zero: NumPy sets them
    // after its num / den, here that division gives them (0 / 0 and -1 / 0), each lane's
    // operands scaled by 1 or 0 and shifted by 0 or -1 with no select a compiler could
    // speculate: |x|'s bits as a number, at most 1 (0 only for zeros; x < 0 reads 0)
    const float ax = (float)(int32_t)(kiln_f32_bits(x) & 0x7fffffffu), ay = (float)(int32_t)(bx & 0x7fffffffu);
    const float nonzero = ax < 1.0f ? ax : 1.0f, defined = ay < 1.0f ? ay : 1.0f;   // (minps: no libm fminf)
    const float r = __builtin_fmaf(e, 0.693147180559945309417232121458176568f,
                                   (num - (1.0f - nonzero)) / (den * defined));   // NPY_LOGE2f
    return nan ? __builtin_nanf("") : neg ? __builtin_copysignf(r, -1.0f) : x == __builtin_inff() ? x : r;
}
#define kiln_np_sinf sinf   // (NumPy's own float32 sin and cos: ported for AVX-512 builds only)
#define kiln_np_cosf cosf
#endif
{% else %}#define kiln_np_sinf sinf
#define kiln_np_cosf cosf
#define kiln_np_expf expf
#define kiln_np_logf logf
{% endif %}
{% endif %}
{% if 'pairwise' in helpers %}{% include "cpp_pairwise.h" %}{% endif %}{% if 'fmod' in helpers or 'divide' in helpers or 'select' in helpers or 'ftoi' in helpers %}// c ? a : b written with bit masks, where GCC would branch (np.where below; remainder's signs; kiln_ftoi)
template <int N> struct kiln_bits;
template <> struct kiln_bits<4> { typedef uint32_t t; };
template <> struct kiln_bits<8> { typedef uint64_t t; };
template <typename T> static inline T kiln_blend(bool c, T a, T b) {
    typedef typename kiln_bits<sizeof(T)>::t U;
    const U k = -(U)c;
    return __builtin_bit_cast(T, (__builtin_bit_cast(U, a) & k) | (__builtin_bit_cast(U, b) & ~k));
}
{% endif %}{% if 'fmod' in helpers or 'divide' in helpers %}{% include "cpp_fmod.h" %}
{% endif %}{% if 'divide' in helpers %}// NumPy's float floor division and remainder (npy_divmod): the result takes the sign of
// the divisor, and division by zero gives inf/nan rather than trapping.
template <typename T> static inline T kiln_floor_divide(T a, T b) {
    T mod = kiln_fmod_once(a, b);   // (first, as npy_divmod: np.divmod's remainder shares it)
    if (b == 0) return a / b;
    T div = (a - mod) / b;
    div -= (T)((mod != 0) & ((b < 0) != (mod < 0)));   // (a mask: see kiln_remainder)
    if (div == 0) return __builtin_copysign((T)0, a / b);  // -0.0 // 1.0 is -0.0
    T fl = __builtin_floor(div);
    if (div - fl > (T)0.5) fl += 1;
    return fl;
}
// The sign fix-ups are masks, not branches: the sign of a random dividend (or divisor) is
// a branch mispredicted half the time, which flushes the fprem behind it (a C loop of
// % by random-signed float64 divisors: 20.7 -> 13.7 ns an element, CPU time). mod + 0 is
// mod where mod is not 0, and a zero then takes the divisor's sign.
template <typename T> static inline T kiln_remainder(T a, T b) {
    const T mod = kiln_fmod_once(a, b);
    if (b == 0) return mod;
    const T r = mod + kiln_blend<T>((mod != 0) & ((b < 0) != (mod < 0)), b, (T)0);
    return kiln_blend<T>(mod == 0, __builtin_copysign((T)0, b), r);
}
// Integer division by zero gives 0 in NumPy, with its divide-by-zero warning (the flag is
// raised here for kiln/runtime/fpwarn.py); MIN // -1 wraps to MIN, with its overflow
// warning. Neither may trap here.
template <typename T> static inline T kiln_int_by_zero() { kiln_fp_put(1); return 0; }
template <typename T> static inline T kiln_floor_divide_int(T a, T b) {
    if (b == 0) return kiln_int_by_zero<T>();
    if (b == -1) {
        if (a == (T)(~(uint64_t)0 << (8 * sizeof(T) - 1))) kiln_fp_put(2);   // MIN // -1: overflow
        return (T)(0 - (uint64_t)a);
    }
    T q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) q -= 1;
    return q;
}
template <typename T> static inline T kiln_remainder_int(T a, T b) {
    if (b == 0) return kiln_int_by_zero<T>();
    if (b == -1) return 0;
    T r = a % b;
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
}
{% endif %}{% if 'divide_by' in helpers %}// Integer // and % by a divisor that does not change across a loop (a constant, a scalar
// argument): libdivide's method. The divisor's magic number is made once, before the loop
// (kiln_divisor32/64, emitted by kiln/lowering/cpp_ops.py); each element then costs a
// multiply-high, shifts and sign fix-ups, which vectorize (x86 has no SIMD integer
// division, and GCC's own magic-number code for a constant divides one element at a
// time). Granlund-Montgomery's round-up method, valid for every N-bit dividend:
// l = ceil(log2 |d|), m = floor(2^N (2^l - |d|) / |d|) + 1, and the quotient
// q = (t + ((n - t) >> min(l, 1))) >> max(l - 1, 0) with t = mulhi(n, m). Signed types
// divide magnitudes and fix signs after: NumPy's floor rounding, 0 for a zero divisor,
// MIN // -1 wrapping to MIN. Types of up to 32 bits compute in 32 bits (mulhi from one
// 64-bit product); 64-bit types build mulhi from four 32-bit products (vpmuludq).
struct kiln_div32 { uint32_t m, ud; int64_t d; int s1, s2; };
struct kiln_div64 { uint64_t m, ud; int64_t d; int s1, s2; };
// A zero divisor raises NumPy's divide-by-zero flag here, once (in the loop it would stop
// GCC vectorizing), where the kernel has points to divide (``points``: none, as for an
// empty array, and NumPy divides nothing and warns nothing); each element then gives 0.
// A signed -1 raises the overflow flag here the same way, whether or not MIN is divided:
// the op's predicate (MIN by -1, kiln/ops/fp_errors.py _INT_NOISE) says whether NumPy warns.
template <typename T> static inline kiln_div32 kiln_divisor32(T d, int64_t points) {
    kiln_div32 v; v.d = (int64_t)d;
    if (d == 0 && points != 0) kiln_fp_put(1);
    if ((T)-1 < 0 && d == (T)-1 && points != 0) kiln_fp_put(2);
    uint32_t ud = d < 0 ? (uint32_t)0 - (uint32_t)d : (uint32_t)d;
    int l = ud <= 1 ? 0 : 32 - __builtin_clz(ud - 1);
    v.ud = ud; v.s1 = l < 1 ? l : 1; v.s2 = l > 1 ? l - 1 : 0;
    v.m = ud == 0 ? 0 : (uint32_t)(((((uint64_t)1 << l) - ud) << 32) / ud + 1);
    return v;
}
template <typename T> static inline kiln_div64 kiln_divisor64(T d, int64_t points) {
    kiln_div64 v; v.d = (int64_t)d;
    if (d == 0 && points != 0) kiln_fp_put(1);
    if ((T)-1 < 0 && d == (T)-1 && points != 0) kiln_fp_put(2);
    uint64_t ud = d < 0 ? (uint64_t)0 - (uint64_t)d : (uint64_t)d;
    int l = ud <= 1 ? 0 : 64 - __builtin_clzll(ud - 1);
    v.ud = ud; v.s1 = l < 1 ? l : 1; v.s2 = l > 1 ? l - 1 : 0;
    uint64_t diff = l == 64 ? (uint64_t)0 - ud : ((uint64_t)1 << l) - ud;   // 2^l - |d|
    v.m = ud == 0 ? 0 : (uint64_t)(((unsigned __int128)diff << 64) / ud + 1);
    return v;
}
KILN_INLINE uint32_t kiln_udiv(uint32_t n, kiln_div32 v) {
    uint32_t t = (uint32_t)(((uint64_t)n * v.m) >> 32);
    return (t + ((n - t) >> v.s1)) >> v.s2;
}
KILN_INLINE uint64_t kiln_udiv(uint64_t n, kiln_div64 v) {
    uint64_t nl = (uint32_t)n, nh = n >> 32, ml = (uint32_t)v.m, mh = v.m >> 32;
    uint64_t ll = nl * ml, hl = nh * ml, lh = nl * mh;
    uint64_t mid = (ll >> 32) + (uint32_t)hl + (uint32_t)lh;
    uint64_t t = nh * mh + (hl >> 32) + (lh >> 32) + (mid >> 32);
    return (t + ((n - t) >> v.s1)) >> v.s2;
}
// (q, r) of a by the divisor: floor quotient and remainder with the divisor's sign.
template <typename T, typename U, typename S, typename V>
KILN_INLINE void kiln_divmod_by(T a, V v, T* q, T* r) {
    if ((T)-1 < 0) {
        S sa = (S)a, sd = (S)v.d;
        U ua = sa < 0 ? (U)0 - (U)sa : (U)sa;
        U uq = kiln_udiv(ua, v), ur = ua - uq * v.ud;
        bool neg = (sa < 0) != (sd < 0), rest = ur != 0;
        S tq = (S)(neg ? (U)0 - uq : uq) - (S)(neg && rest);
        S tr = (S)(sa < 0 ? (U)0 - ur : ur) + (neg && rest ? sd : (S)0);
        *q = v.d == 0 ? (T)0 : (T)tq;
        *r = v.d == 0 ? (T)0 : (T)tr;
    } else {
        U ua = (U)a, uq = kiln_udiv(ua, v);
        *q = v.d == 0 ? (T)0 : (T)uq;
        *r = v.d == 0 ? (T)0 : (T)(ua - uq * v.ud);
    }
}
template <typename T> KILN_INLINE T kiln_floor_divide_by(T a, kiln_div32 v) {
    T q, r; kiln_divmod_by<T, uint32_t, int32_t>(a, v, &q, &r); return q;
}
template <typename T> KILN_INLINE T kiln_floor_divide_by(T a, kiln_div64 v) {
    T q, r; kiln_divmod_by<T, uint64_t, int64_t>(a, v, &q, &r); return q;
}
template <typename T> KILN_INLINE T kiln_remainder_by(T a, kiln_div32 v) {
    T q, r; kiln_divmod_by<T, uint32_t, int32_t>(a, v, &q, &r); return r;
}
template <typename T> KILN_INLINE T kiln_remainder_by(T a, kiln_div64 v) {
    T q, r; kiln_divmod_by<T, uint64_t, int64_t>(a, v, &q, &r); return r;
}
{% endif %}{% if 'ftoi' in helpers %}// float -> int32/int64 as x86's cvttsd2si/cvttps2dq and NumPy: toward zero, and NaN, the
// infinities and values out of range give the minimum (and raise "invalid", which NumPy's
// warning and kiln's read: runtime/fpwarn.py). A plain (int64_t)x is undefined there, and GCC
// reads the value's range off it: (int64_t)fabs(x) % 5 dropped the remainder's sign fix
// (NaN gave 3 where NumPy gives INT64_MIN % 5 = 2), np.maximum((x * x).astype(int), 0) the
// maximum. Here the conversion's result has the minimum's bit or'ed in where |x| <
// 2**(bits-1) fails (NaN fails it; of the other values it leaves out, those in
// (-2**(bits-1) - 1, -2**(bits-1)] convert to the minimum anyway): the value is the
// processor's, and GCC sees a result that may be negative. The conversion is used on both
// sides, so it runs for every element and raises its flag: `c ? (I)x : min` GCC compiled to
// a branch that converted in-range values only, and NaN no longer warned. From float64 to
// int32 the minimum's bit is a second conversion's, of 0.0 or -2**31 (a blend of floats):
// an integer select there repacked the 8-byte compare's mask into 4-byte lanes.
template <typename I, typename F> static inline I kiln_ftoi(F x) {
    constexpr F hi = (F)((uint64_t)1 << (sizeof(I) * 8 - 1));
    const I r = (I)x;
#ifdef KILN_BENCH_PLAIN_FTOI   // (benchmarks/float_int_casts.py: the plain conversion, as before)
    return r;
#else
    return r | (I)kiln_blend(__builtin_fabs(x) < hi, (F)0, -hi);
#endif
}
{% endif %}{% if 'shift' in helpers %}template <typename T> static inline T kiln_lshift(T a, T b) {
    return (b < 0 || b >= (T)(8 * sizeof(T))) ? (T)0 : (T)(a << b);
}
template <typename T> static inline T kiln_rshift(T a, T b) {
    if (b < 0 || b >= (T)(8 * sizeof(T))) return a < 0 ? (T)-1 : (T)0;
    return (T)(a >> b);
}
{% endif %}{% if 'hypot' in helpers %}// np.hypot: glibc's hypotf and hypot, which NumPy's loops call. hypotf rounds the root of
// the exact sum of squares in double once to float (written out: it vectorizes); hypot is
// glibc's scalar function (its vector one is 1 ulp off in ~4% of elements).
KILN_INLINE float kiln_hypot(float x, float y) {
    const float inf = __builtin_inff();
    const float r = (float)__builtin_sqrt((double)x * (double)x + (double)y * (double)y);
    return __builtin_fabsf(x) == inf || __builtin_fabsf(y) == inf ? inf : r;
}
KILN_INLINE double kiln_hypot(double x, double y) { return hypot(x, y); }
{% endif %}{% if 'logaddexp' in helpers %}template <typename T> static inline T kiln_logaddexp(T x, T y) {
    if (x == y) return x + (T)0.693147180559945309417232121458176568;  // log(2)
    T d = x - y;
    if (d > 0) return x + log1p(exp(-d));
    if (d <= 0) return y + log1p(exp(d));
    return d;  // nan
}
// float32: NumPy's loop (npy_logaddexpf) calls libm's scalar expf and log1pf in float, an
// element at a time (the template's double exp and log1p were 1 ulp off in ~4% of elements)
extern "C" {
KILN_PURE float kiln_libm_expf(float) __asm__("expf");
KILN_PURE float kiln_libm_log1pf(float) __asm__("log1pf");
}
static inline float kiln_logaddexp(float x, float y) {
    if (x == y) return x + 0.693147180559945309417232121458176568f;
    float d = x - y;
    if (d > 0) return x + kiln_libm_log1pf(kiln_libm_expf(-d));
    if (d <= 0) return y + kiln_libm_log1pf(kiln_libm_expf(d));
    return d;
}
{% endif %}{% if 'exp' in helpers %}// float64 exp written out here, inline, so that a loop calling it vectorizes with it (no
// vector-ABI call, no accumulators spilled around one) where FMA is on: within 1 ulp of
// NumPy (libmvec: up to 3); with AVX-512 a little faster than glibc's vector exp, 5-13%
// on fused kernels (softmax, logsumexp), with AVX2 ~6% slower on exp alone (1.49 vs 1.40
// ns an element; NumPy's scalar exp there: 5-9 ns). Without FMA glibc's vector math; for
// float32 kiln_np_expf, NumPy's own loop or glibc's (docs/lowering.md, "kiln's own exp").
// Branch-free, no tables (a gather costs more than the polynomial terms it saves).
#if defined(KILN_NP_SVML)
// (where NumPy's float64 exp is SVML's, kernels call that: svml.py)
KILN_INLINE double kiln_exp(double x) { return kiln_np_exp(x); }
#elif defined(__FP_FAST_FMA)
KILN_INLINE double kiln_from_bits(int64_t i) { double d; __builtin_memcpy(&d, &i, 8); return d; }
KILN_INLINE int64_t kiln_to_bits(double d) { int64_t i; __builtin_memcpy(&i, &d, 8); return i; }
// exp: x = k ln2 + r, |r| <= ln2/2 (Cody-Waite, ln2 in two parts: x - k ln2hi is exact with
// fma), exp(r) = 1 + r + r^2 q(r) with q of degree 9 (minimax for relative error, < 0.06
// ulp), then 2^k in two steps: 2^(k - k/2) into the exponent (exact), times 2^(k/2) (one
// rounding, so subnormal results round once and large ones overflow to inf). |x| > 746
// is clamped (exp is 0 or inf there); NaN flows through. Max error 0.85 ulp.
KILN_INLINE double kiln_exp(double x) {
    x = __builtin_fabs(x) > 746.0 ? __builtin_copysign(746.0, x) : x;
    const double shift = 0x1.8p52;   // adding it rounds x/ln2 to an integer k in the low bits
    const double z = __builtin_fma(x, 0x1.71547652b82fep0, shift);
    const double k = z - shift;
    const double r1 = __builtin_fma(k, -0x1.62e42fefa39efp-1, x);
    const double r2 = k * -0x1.abc9e3b39803fp-56;
    const double r = r1 + r2;
    double q = 0x1.ad200b4f038e5p-26;
    q = __builtin_fma(q, r, 0x1.289f94b048f67p-22);
    q = __builtin_fma(q, r, 0x1.71df555bdbf29p-19);
    q = __builtin_fma(q, r, 0x1.a019ab2416881p-16);
    q = __builtin_fma(q, r, 0x1.a01a011c0fb50p-13);
    q = __builtin_fma(q, r, 0x1.6c16c17cc5d4cp-10);
    q = __builtin_fma(q, r, 0x1.11111111288c5p-7);
    q = __builtin_fma(q, r, 0x1.55555555531ffp-5);
    q = __builtin_fma(q, r, 0x1.5555555555501p-3);
    q = __builtin_fma(q, r, 0.5);
    const double p = 1.0 + (r1 + __builtin_fma(r * r, q, r2));
    const int64_t zb = kiln_to_bits(z), half = (int64_t)((uint64_t)zb >> 1);   // zb > 0
    return kiln_from_bits(kiln_to_bits(p) + ((zb - half) << 52)) * kiln_from_bits((half + 1023) << 52);
}
#else
KILN_INLINE double kiln_exp(double x) { return exp(x); }
#endif
// (float32 kernels call kiln_np_expf by name, cpp_ops.py template: the module then links
// the support object that defines it and no other, kiln/lowering/cpp_text.py)
float kiln_exp(float) = delete;
{% endif %}static inline float log1p(float x) { return log1pf(x); }
static inline float exp(float x) { return expf(x); }
static inline float fmod(float a, float b) { return fmodf(a, b); }
{% if 'clip' in helpers %}// np.clip with array bounds: minimum(maximum(x, lo), hi), NaN-propagating; a tie takes the bound, as
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
{% endif %}{% if 'select' in helpers %}// np.where and bool -> number casts: c ? a : b. Between 8- and 4-byte elements it is written with bit
// masks: GCC 12 vectorizes no such select whose condition is a byte (a bool array) when it
// prefers 256-bit vectors on an AVX-512 processor (Intel's tunings: "no vectype"), and the
// scalar loop branched on the mask: np.where(mask, a, -a) on float64 took 400 us per 1e5
// elements of a random mask, 26 us with masks. The bits are a's or b's, NaN payloads too.
template <typename T> static inline T kiln_select(bool c, T a, T b) { return c ? a : b; }
// (and between 4-byte elements: np.clip(x, lo, hi) of float32 with run-time bounds ran as a
// scalar loop branching on each compare, 600 us per 1e5 random elements, NumPy 14; now 14)
template <> inline double kiln_select<double>(bool c, double a, double b) { return kiln_blend(c, a, b); }
template <> inline int64_t kiln_select<int64_t>(bool c, int64_t a, int64_t b) { return kiln_blend(c, a, b); }
template <> inline uint64_t kiln_select<uint64_t>(bool c, uint64_t a, uint64_t b) { return kiln_blend(c, a, b); }
template <> inline float kiln_select<float>(bool c, float a, float b) { return kiln_blend(c, a, b); }
template <> inline int32_t kiln_select<int32_t>(bool c, int32_t a, int32_t b) { return kiln_blend(c, a, b); }
template <> inline uint32_t kiln_select<uint32_t>(bool c, uint32_t a, uint32_t b) { return kiln_blend(c, a, b); }
{% endif %}{% if 'complex' in helpers %}// complex64 / complex128 elements: NumPy's layout (real, imaginary), NumPy's formulas.
// Products fuse the way NumPy's SIMD loops do where the CPU has FMA (the real part is
// fma(ar, br, -(ai*bi)), the imaginary fma(ar, bi, ai*br)); the modulus is NumPy's
// larger * sqrt(1 + (smaller/larger)^2) with its inf/nan rules; division is Smith's, in a
// function of its own without SLP vectorization: GCC 12 otherwise pairs the two parts into
// one vfmsubadd (a fused multiply-add despite -ffp-contract=off), 1 ulp off NumPy.
struct kiln_c64 { float re, im; };
struct kiln_c128 { double re, im; };
#ifdef __FMA__
#define KILN_CMUL_RE(ar, ai, br, bi) __builtin_fma(ar, br, -((ai) * (bi)))
#define KILN_CMUL_IM(ar, ai, br, bi) __builtin_fma(ar, bi, (ai) * (br))
#define KILN_CMUL_REF(ar, ai, br, bi) __builtin_fmaf(ar, br, -((ai) * (bi)))
#define KILN_CMUL_IMF(ar, ai, br, bi) __builtin_fmaf(ar, bi, (ai) * (br))
#else
#define KILN_CMUL_RE(ar, ai, br, bi) ((ar) * (br) - (ai) * (bi))
#define KILN_CMUL_IM(ar, ai, br, bi) ((ar) * (bi) + (ai) * (br))
#define KILN_CMUL_REF KILN_CMUL_RE
#define KILN_CMUL_IMF KILN_CMUL_IM
#endif
{% for C, T, f in (("kiln_c64", "float", "f"), ("kiln_c128", "double", "")) %}
KILN_INLINE {{ C }} kiln_cadd({{ C }} a, {{ C }} b) { return {{ C }}{a.re + b.re, a.im + b.im}; }
KILN_INLINE {{ C }} kiln_csub({{ C }} a, {{ C }} b) { return {{ C }}{a.re - b.re, a.im - b.im}; }
KILN_INLINE {{ C }} kiln_cneg({{ C }} a) { return {{ C }}{-a.re, -a.im}; }
KILN_INLINE {{ C }} kiln_cconj({{ C }} a) { return {{ C }}{a.re, -a.im}; }
KILN_INLINE {{ C }} kiln_cmul({{ C }} a, {{ C }} b) {
    return {{ C }}{KILN_CMUL_RE{{ f|upper }}(a.re, a.im, b.re, b.im), KILN_CMUL_IM{{ f|upper }}(a.re, a.im, b.re, b.im)};
}
__attribute__((optimize("no-tree-slp-vectorize"), noinline)) static {{ C }} kiln_cdiv({{ C }} a, {{ C }} b) {
    {{ T }} br = __builtin_fabs{{ f }}(b.re), bi = __builtin_fabs{{ f }}(b.im);
    if (br >= bi) {
        if (br == 0 && bi == 0) return {{ C }}{a.re / br, a.im / bi};
        {{ T }} rat = b.im / b.re, scl = ({{ T }})1 / (b.re + b.im * rat);
        return {{ C }}{(a.re + a.im * rat) * scl, (a.im - a.re * rat) * scl};
    }
    {{ T }} rat = b.re / b.im, scl = ({{ T }})1 / (b.im + b.re * rat);
    return {{ C }}{(a.re * rat + a.im) * scl, (a.im * rat - a.re) * scl};
}
KILN_INLINE {{ T }} kiln_cabs({{ C }} a) {  // branch-free: loops over it vectorize
    const {{ T }} inf = __builtin_inf{{ f }}(), nan = __builtin_nan{{ f }}("");
    {{ T }} re = __builtin_fabs{{ f }}(a.re), im = __builtin_fabs{{ f }}(a.im);
    bool re_inf = re == inf, im_inf = im == inf;
    im = re_inf ? inf : im;
    re = im_inf ? inf : re;
    bool re_nan = re != re, im_nan = im != im;
    im = re_nan ? nan : im;
    re = im_nan ? nan : re;
    {{ T }} larger = re > im ? re : im, smaller = re > im ? im : re;
    bool divide = !(larger == 0 || larger == inf);
    {{ T }} ratio = divide ? smaller / (divide ? larger : ({{ T }})1) : ({{ T }})0;
    return __builtin_sqrt{{ f }}(__builtin_fma{{ f }}(ratio, ratio, ({{ T }})1)) * larger;
}
// per part (kiln_select: by bit masks between doubles, the 'select' section)
KILN_INLINE {{ C }} kiln_cselect(bool c, {{ C }} a, {{ C }} b) {
    return {{ C }}{kiln_select<{{ T }}>(c, a.re, b.re), kiln_select<{{ T }}>(c, a.im, b.im)};
}
KILN_INLINE bool kiln_ceq({{ C }} a, {{ C }} b) { return a.re == b.re && a.im == b.im; }
KILN_INLINE bool kiln_cne({{ C }} a, {{ C }} b) { return a.re != b.re || a.im != b.im; }
{% endfor %}
// exp of a complex number: libm's cexp, as NumPy calls it (npy_cexp).
extern "C" __complex__ double cexp(__complex__ double);
extern "C" __complex__ float cexpf(__complex__ float);
KILN_INLINE kiln_c128 kiln_cexp(kiln_c128 a) {
    __complex__ double z; __real__ z = a.re; __imag__ z = a.im;
    z = cexp(z);
    return kiln_c128{__real__ z, __imag__ z};
}
KILN_INLINE kiln_c64 kiln_cexp(kiln_c64 a) {
    __complex__ float z; __real__ z = a.re; __imag__ z = a.im;
    z = cexpf(z);
    return kiln_c64{__real__ z, __imag__ z};
}
{% endif %}
