// {% for name, T, f, n, fill in fns %}{{ ", " if not loop.first }}kiln_np_{{ name }}{{ f }}{% endfor %}: NumPy's vector math, a support object
// of its own (kiln/lowering/cpp_text.py support_sources): a module links the ones
// its kernels call, each compiled once per compiler and flags and kept on disk
// (kiln/runtime/build.py support_object), so no module compiles the others. Kernels call
// kiln_np_<name>[f] (declared in the prelude as SIMD functions), whose vector variants
// (GCC's vector-function ABI: _ZGV<isa>N<lanes><v per operand>_<name>) and scalar version
// are here. Each widens its lanes to one 512-bit vector, filled as NumPy fills a short
{% if svml %}// vector's unused lanes, and calls the SVML function NumPy exports from _multiarray_umath
// (kiln/lowering/svml.py), found in the loaded module when this library loads; without it,
// glibc's scalar function per lane (svml.py chose these names only where NumPy has them: a
// safety net).
{% else %}// vector's unused lanes, and computes them as NumPy's own loops do (below).
{% endif %}#ifdef __AVX512F__
typedef float kiln_vf16 __attribute__((vector_size(64)));
typedef float kiln_vf8 __attribute__((vector_size(32)));
typedef float kiln_vf4 __attribute__((vector_size(16)));
typedef double kiln_vd8 __attribute__((vector_size(64)));
typedef double kiln_vd4 __attribute__((vector_size(32)));
typedef double kiln_vd2 __attribute__((vector_size(16)));
template <typename W, int N, typename V, typename T> static inline W kiln_widen(V v, T fill) {
    W w;
    for (int i = 0; i < (int)(sizeof(W) / sizeof(T)); i++) w[i] = i < N ? v[i] : fill;
    return w;
}
template <typename V, int N, typename W> static inline V kiln_narrow(W w) {
    V v;
    for (int i = 0; i < N; i++) v[i] = w[i];
    return v;
}
{% if svml %}{% set name, T, f, n, fill = fns[0] %}{% set W = "kiln_vf16" if T == "float" else "kiln_vd8" %}{% set fn = "kiln_np_" ~ name ~ f %}{% set lanes = 16 if T == "float" else 8 %}
#include <link.h>
#include <dlfcn.h>
#include <string.h>
extern "C" {{ T }} {{ name }}{{ f }}({{ T }}{% if n == 2 %}, {{ T }}{% endif %});
__attribute__((noinline)) static {{ W }} {{ fn }}_libm({{ W }} a{% if n == 2 %}, {{ W }} b{% endif %}) {
    for (int i = 0; i < {{ lanes }}; i++) a[i] = {{ name }}{{ f }}(a[i]{% if n == 2 %}, b[i]{% endif %});
    return a;
}
// (glibc's until the library loads: a variant is one indirect jump, no test, no frame)
static {{ W }} (*{{ fn }}_svml)({{ W }}{% if n == 2 %}, {{ W }}{% endif %}) = {{ fn }}_libm;
{% if name == "expm1" and T == "double" %}// NumPy's float64 expm1 hands SVML no NaN (its "invalid value" workaround): NaN lanes go in
// as 1 and come out as the input
static inline {{ W }} {{ fn }}_w({{ W }} a) {
    {{ W }} x = a;
    for (int i = 0; i < {{ lanes }}; i++) x[i] = a[i] != a[i] ? 1.0 : a[i];
    {{ W }} r = {{ fn }}_svml(x);
    for (int i = 0; i < {{ lanes }}; i++) r[i] = a[i] != a[i] ? a[i] : r[i];
    return r;
}
{% else %}static inline {{ W }} {{ fn }}_w({{ W }} a{% if n == 2 %}, {{ W }} b{% endif %}) {
    return {{ fn }}_svml(a{% if n == 2 %}, b{% endif %});
}
{% endif %}{% else %}// NumPy's own float32 exp and log (svml.py numpy_own_f32_loops), as NumPy's AVX512F loops
// compute them: a port of simd_exp_FLOAT and simd_log_FLOAT from NumPy's
// numpy/_core/src/umath/loops_exponent_log.dispatch.c.src (2.x; BSD-3-Clause, Copyright (c)
// 2005-2025, NumPy Developers), the same intrinsics on one 512-bit vector, and the flags it
// sets from its masks (exp: overflow, underflow; log: invalid, divide by zero). A short
// vector's unused lanes are filled with values that set none (exp 0, log 1). (Builds
// without AVX-512 inline the per-lane version in the prelude.) The four are one object:
// <immintrin.h> is most of its g++ time (~0.3 s), so they parse it once.
#include <immintrin.h>
static inline void kiln_np_raise(unsigned mxcsr_bits) { _mm_setcsr(_mm_getcsr() | mxcsr_bits); }
static inline kiln_vf16 kiln_np_expf_w(kiln_vf16 v) {
    const __m512 zeros = _mm512_setzero_ps(), inf = _mm512_set1_ps(__builtin_inff());
    const __m512 magic = _mm512_set1_ps(0x1.800000p+23f);
    __m512 x = (__m512)v;
    const __mmask16 nan_mask = _mm512_cmp_ps_mask(x, x, _CMP_NEQ_UQ);
    x = _mm512_mask_blend_ps(nan_mask, x, zeros);
    const __mmask16 xmax_mask = _mm512_cmp_ps_mask(x, _mm512_set1_ps(88.72283935546875f), _CMP_GE_OQ);
    const __mmask16 xmin_mask = _mm512_cmp_ps_mask(x, _mm512_set1_ps(-103.97208404541015625f), _CMP_LE_OQ);
    const __mmask16 inf_mask = _mm512_cmp_ps_mask(x, inf, _CMP_EQ_OQ);
    const __mmask16 ninf_mask = _mm512_cmp_ps_mask(x, _mm512_set1_ps(-__builtin_inff()), _CMP_EQ_OQ);
    const __mmask16 overflow = xmax_mask ^ inf_mask, underflow = xmin_mask ^ ninf_mask;
    x = _mm512_mask_blend_ps(nan_mask | xmin_mask | xmax_mask, x, zeros);
    __m512 q = _mm512_mul_ps(x, _mm512_set1_ps(1.442695040888963407359924681001892137f));
    q = _mm512_sub_ps(_mm512_add_ps(q, magic), magic);
    x = _mm512_fmadd_ps(q, _mm512_set1_ps(-6.93145752e-1f), x);
    x = _mm512_fmadd_ps(q, _mm512_set1_ps(-1.42860677e-6f), x);
    x = _mm512_fmadd_ps(q, zeros, x);
    __m512 num = _mm512_fmadd_ps(_mm512_set1_ps(5.082762527590693718096e-04f), x, _mm512_set1_ps(6.757896990527504603057e-03f));
    num = _mm512_fmadd_ps(num, x, _mm512_set1_ps(5.114512081637298353406e-02f));
    num = _mm512_fmadd_ps(num, x, _mm512_set1_ps(2.473615434895520810817e-01f));
    num = _mm512_fmadd_ps(num, x, _mm512_set1_ps(7.257664613233124478488e-01f));
    num = _mm512_fmadd_ps(num, x, _mm512_set1_ps(9.999999999980870924916e-01f));
    __m512 den = _mm512_fmadd_ps(_mm512_set1_ps(2.159509375685829852307e-02f), x, _mm512_set1_ps(-2.742335390411667452936e-01f));
    den = _mm512_fmadd_ps(den, x, _mm512_set1_ps(1.0f));
    __m512 poly = _mm512_scalef_ps(_mm512_div_ps(num, den), q);
    poly = _mm512_mask_blend_ps(nan_mask, poly, _mm512_set1_ps(__builtin_nanf("")));
    poly = _mm512_mask_blend_ps(xmax_mask, poly, inf);
    poly = _mm512_mask_blend_ps(xmin_mask, poly, zeros);
    if (overflow) kiln_np_raise(0x08);
    if (underflow) kiln_np_raise(0x10);
    return (kiln_vf16)poly;
}
static inline kiln_vf16 kiln_np_logf_w(kiln_vf16 v) {
    const __m512 zeros = _mm512_setzero_ps(), ones = _mm512_set1_ps(1.0f), inf = _mm512_set1_ps(__builtin_inff());
    const __m512 x_in = (__m512)v;
    const __mmask16 negx_mask = _mm512_cmp_ps_mask(x_in, zeros, _CMP_LT_OQ);
    const __mmask16 zero_mask = _mm512_cmp_ps_mask(x_in, zeros, _CMP_EQ_OQ);
    const __mmask16 inf_mask = _mm512_cmp_ps_mask(x_in, inf, _CMP_EQ_OQ);
    const __mmask16 nan_mask = _mm512_cmp_ps_mask(x_in, x_in, _CMP_NEQ_UQ);
    __m512 x = _mm512_mask_blend_ps(negx_mask, x_in, zeros);
    __m512 exponent = _mm512_add_ps(_mm512_getexp_ps(x), ones);
    x = _mm512_getmant_ps(x, _MM_MANT_NORM_p5_1, _MM_MANT_SIGN_src);
    const __mmask16 sqrt2_mask = _mm512_cmp_ps_mask(x, _mm512_set1_ps(0.707106781186547524400844362104849039f), _CMP_LE_OQ);
    x = _mm512_mask_mov_ps(x, sqrt2_mask, _mm512_add_ps(x, x));
    exponent = _mm512_mask_mov_ps(exponent, sqrt2_mask, _mm512_sub_ps(exponent, ones));
    x = _mm512_sub_ps(x, ones);
    __m512 num = _mm512_fmadd_ps(_mm512_set1_ps(2.589979117907922693523e-02f), x, _mm512_set1_ps(3.808837741388407920751e-01f));
    num = _mm512_fmadd_ps(num, x, _mm512_set1_ps(1.480000633576506585156e+00f));
    num = _mm512_fmadd_ps(num, x, _mm512_set1_ps(2.112677543073053063722e+00f));
    num = _mm512_fmadd_ps(num, x, _mm512_set1_ps(9.999999999999998702752e-01f));
    num = _mm512_fmadd_ps(num, x, zeros);
    __m512 den = _mm512_fmadd_ps(_mm512_set1_ps(5.875095403124574342950e-03f), x, _mm512_set1_ps(1.546476374983906719538e-01f));
    den = _mm512_fmadd_ps(den, x, _mm512_set1_ps(9.864942958519418960339e-01f));
    den = _mm512_fmadd_ps(den, x, _mm512_set1_ps(2.453006071784736363091e+00f));
    den = _mm512_fmadd_ps(den, x, _mm512_set1_ps(2.612677543073109236779e+00f));
    den = _mm512_fmadd_ps(den, x, ones);
    __m512 poly = _mm512_fmadd_ps(exponent, _mm512_set1_ps(0.693147180559945309417232121458176568f), _mm512_div_ps(num, den));
    poly = _mm512_mask_blend_ps(nan_mask, poly, _mm512_set1_ps(__builtin_nanf("")));
    poly = _mm512_mask_blend_ps(negx_mask, poly, _mm512_set1_ps(-__builtin_nanf("")));
    poly = _mm512_mask_blend_ps(zero_mask, poly, _mm512_set1_ps(-__builtin_inff()));
    poly = _mm512_mask_blend_ps(inf_mask, poly, inf);
    if (negx_mask) kiln_np_raise(0x01);
    if (zero_mask) kiln_np_raise(0x04);
    return (kiln_vf16)poly;
}
// float32 sin and cos as NumPy's own loops (numpy/_core/src/umath/loops_trigonometric.dispatch.cpp
// simd_sincos_f32, Highway; BSD-3-Clause, Copyright (c) 2005-2025, NumPy Developers): Cody-Waite
// reduction and its polynomials for |x| <= 117435.992 (sin) / 71476.0625 (cos), glibc's
// scalar sinf/cosf for larger lanes; a NaN lane computes 0 and returns NaN.
extern "C" float sinf(float);
extern "C" float cosf(float);
static inline kiln_vf16 kiln_np_sincosf_w(kiln_vf16 v, bool cosine) {
    const __m512 zeros = _mm512_setzero_ps(), magic = _mm512_set1_ps(0x1.800000p+23f);
    const __m512i ones = _mm512_set1_epi32(1), twos = _mm512_set1_epi32(2);
    __m512 x_in = (__m512)v;
    const __mmask16 nnan = _mm512_cmp_ps_mask(x_in, x_in, _CMP_ORD_Q);
    x_in = _mm512_mask_blend_ps(nnan, zeros, x_in);
    const __m512 ax = _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(x_in), _mm512_set1_epi32(0x7fffffff)));
    const __mmask16 simd = _mm512_cmp_ps_mask(ax, _mm512_set1_ps(cosine ? 71476.0625f : 117435.992f), _CMP_LE_OQ);
    __m512 out = zeros;
    if (simd) {
        const __m512 x = _mm512_mask_blend_ps(nnan & simd, zeros, x_in);
        // x 2/pi rounded to an integer: NumPy's build (GCC, C++: -ffp-contract=fast) fuses
        // its Mul and Add into one fma, which differs where x 2/pi rounds to a half
        const __m512 q = _mm512_sub_ps(_mm512_fmadd_ps(x, _mm512_set1_ps(0x1.45f306p-1f), magic), magic);
        __m512 r = _mm512_fmadd_ps(q, _mm512_set1_ps(-0x1.921fb0p+00f), x);
        r = _mm512_fmadd_ps(q, _mm512_set1_ps(-0x1.5110b4p-22f), r);
        r = _mm512_fmadd_ps(q, _mm512_set1_ps(-0x1.846988p-48f), r);
        const __m512 r2 = _mm512_mul_ps(r, r);
        __m512 c = _mm512_fmadd_ps(_mm512_set1_ps(0x1.98e616p-16f), r2, _mm512_set1_ps(-0x1.6c06dcp-10f));
        c = _mm512_fmadd_ps(c, r2, _mm512_set1_ps(0x1.55553cp-05f));
        c = _mm512_fmadd_ps(c, r2, _mm512_set1_ps(-0x1.000000p-01f));
        c = _mm512_fmadd_ps(c, r2, _mm512_set1_ps(0x1.000000p+00f));
        __m512 s = _mm512_fmadd_ps(_mm512_set1_ps(0x1.7d3bbcp-19f), r2, _mm512_set1_ps(-0x1.a06bbap-13f));
        s = _mm512_fmadd_ps(s, r2, _mm512_set1_ps(0x1.11119ap-07f));
        s = _mm512_fmadd_ps(s, r2, _mm512_set1_ps(-0x1.555556p-03f));
        s = _mm512_fmadd_ps(s, r2, zeros);
        s = _mm512_fmadd_ps(s, r, r);
        __m512i iq = _mm512_cvtps_epi32(q);
        if (cosine) iq = _mm512_add_epi32(iq, ones);
        const __mmask16 sine = _mm512_cmpeq_epi32_mask(_mm512_and_si512(iq, ones), _mm512_setzero_si512());
        c = _mm512_mask_blend_ps(sine, c, s);
        const __mmask16 negate = _mm512_cmpeq_epi32_mask(_mm512_and_si512(iq, twos), twos);
        c = _mm512_mask_sub_ps(c, negate, zeros, c);
        out = _mm512_mask_blend_ps(nnan, _mm512_set1_ps(__builtin_nanf("")), c);
    }
    kiln_vf16 res = (kiln_vf16)out;
    if (simd != 0xffff) {
        const kiln_vf16 in = (kiln_vf16)x_in;
        for (int i = 0; i < 16; i++)
            if (!((simd >> i) & 1)) res[i] = cosine ? cosf(in[i]) : sinf(in[i]);
    }
    return res;
}
static inline kiln_vf16 kiln_np_sinf_w(kiln_vf16 v) { return kiln_np_sincosf_w(v, false); }
static inline kiln_vf16 kiln_np_cosf_w(kiln_vf16 v) { return kiln_np_sincosf_w(v, true); }
{% endif %}{% for name, T, f, n, fill in fns %}{% set W = "kiln_vf16" if T == "float" else "kiln_vd8" %}{% set fn = "kiln_np_" ~ name ~ f %}{% set isas = (("b", 4, "kiln_vf4"), ("c", 8, "kiln_vf8"), ("d", 8, "kiln_vf8"), ("e", 16, "kiln_vf16")) if T == "float" else (("b", 2, "kiln_vd2"), ("c", 4, "kiln_vd4"), ("d", 4, "kiln_vd4"), ("e", 8, "kiln_vd8")) %}
extern "C" __attribute__((visibility("hidden"))) {{ T }} {{ fn }}({{ T }} a{% if n == 2 %}, {{ T }} b{% endif %}) {
    {{ W }} wa = {{ W }}{} + ({{ T }}){{ fill }};
    wa[0] = a;
{% if n == 2 %}    {{ W }} wb = wa;
    wb[0] = b;
{% endif %}    return {{ fn }}_w(wa{% if n == 2 %}, wb{% endif %})[0];
}
{% for isa, k, V in isas %}extern "C" __attribute__((visibility("hidden"))) {{ V }} _ZGV{{ isa }}N{{ k }}{{ "v" * n }}_{{ fn }}({{ V }} a{% if n == 2 %}, {{ V }} b{% endif %}) {
    return kiln_narrow<{{ V }}, {{ k }}>({{ fn }}_w(kiln_widen<{{ W }}, {{ k }}>(a, ({{ T }}){{ fill }}){% if n == 2 %}, kiln_widen<{{ W }}, {{ k }}>(b, ({{ T }}){{ fill }}){% endif %}));
}
{% endfor %}{% endfor %}{% if svml %}{% set name, T, f, n, fill = fns[0] %}
static int kiln_find_umath(struct dl_phdr_info* info, size_t, void* found) {
    if (info->dlpi_name && strstr(info->dlpi_name, "/_multiarray_umath.")) {
        *(const char**)found = info->dlpi_name;
        return 1;
    }
    return 0;
}
__attribute__((constructor)) static void kiln_bind_svml(void) {
    const char* path = 0;
    dl_iterate_phdr(kiln_find_umath, &path);
    void* lib = path ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : 0;
    if (!lib) return;
    void* found = dlsym(lib, "__svml_{{ svml }}{{ suffix }}");
    if (found) *(void**)&kiln_np_{{ name }}{{ f }}_svml = found;
}
{% endif %}#endif
