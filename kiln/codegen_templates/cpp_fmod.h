// fmod as NumPy's loops compute it (np.fmod, and npy_divmod under //, %, np.remainder,
// np.divmod): NumPy's wheels are built by GCC 14, which expands fmod inline to the x87
// fprem loop and calls libm's fmod only where that gives NaN (for errno). fprem's partial
// remainder is exact, so the result is IEEE fmod's, bit for bit; glibc 2.36's fmod, which
// kernels called before, costs ~4x more an element (benchmarks/fmod_speed.py). The NaN
// cases (a zero divisor, an infinite dividend, a NaN) still go to libm: its value and
// its invalid flag (in MXCSR, which kiln reads; fprem's own flags stay in the x87 word).
// (Shared by the kernel prelude, cpp_prelude.h, and the loop prelude, loop_prelude.py;
// -DKILN_BENCH_LIBM_FMOD calls glibc's fmod instead, for benchmarks/fmod_speed.py.)
#if defined(__x86_64__) && defined(__GNUC__) && !defined(KILN_BENCH_LIBM_FMOD)
static inline __attribute__((always_inline)) long double kiln_fprem(long double a, long double b) {
    long double r;
    __asm__("1:\tfprem\n\tfnstsw %%ax\n\ttestb $4, %%ah\n\tjnz 1b"   // C2 set: not yet reduced
            : "=t"(r) : "0"(a), "u"(b) : "ax", "cc");
    return r;
}
static inline __attribute__((always_inline)) double kiln_fmod(double a, double b) {
    const double r = (double)kiln_fprem(a, b);
    return r == r ? r : __builtin_fmod(a, b);
}
static inline __attribute__((always_inline)) float kiln_fmod(float a, float b) {
    const float r = (float)kiln_fprem(a, b);
    return r == r ? r : __builtin_fmodf(a, b);
}
// npy_divmod's fmod (//, %, np.remainder, np.divmod, and NumPy scalars' % and //) keeps
// fprem's value where it is NaN: with two NaN operands x87 returns the one of larger
// significand (of equal ones, the positive), so np.remainder(-nan, nan) is +nan where
// np.fmod's libm value is -nan (its first operand). libm is still called there for its
// invalid flag in MXCSR (a signalling NaN, an infinite dividend, a zero divisor).
static inline __attribute__((always_inline)) double kiln_fmod_divmod(double a, double b) {
    const double r = (double)kiln_fprem(a, b);
    if (r != r) { volatile double flag = __builtin_fmod(a, b); (void)flag; }
    return r;
}
static inline __attribute__((always_inline)) float kiln_fmod_divmod(float a, float b) {
    const float r = (float)kiln_fprem(a, b);
    if (r != r) { volatile float flag = __builtin_fmodf(a, b); (void)flag; }
    return r;
}
#else
static inline double kiln_fmod(double a, double b) { return __builtin_fmod(a, b); }
static inline float kiln_fmod(float a, float b) { return __builtin_fmodf(a, b); }
static inline double kiln_fmod_divmod(double a, double b) { return __builtin_fmod(a, b); }
static inline float kiln_fmod_divmod(float a, float b) { return __builtin_fmodf(a, b); }
#endif
// floor_divide's and remainder's (cpp_prelude.h): np.divmod's two results each take fmod of
// the same pair, and GCC merges two calls of a const function but not two inline asm
// statements (np.divmod: 28 -> 22 ns an element, CPU time); a call costs ~0.3 ns more.
__attribute__((noinline, const)) static double kiln_fmod_once(double a, double b) { return kiln_fmod_divmod(a, b); }
__attribute__((noinline, const)) static float kiln_fmod_once(float a, float b) { return kiln_fmod_divmod(a, b); }
