// kiln's support object: what every kernel module links, compiled once per compiler and
// flags (kiln/runtime/build.py support_object), so no module compiles it again. Each
// library gets its own copy of this state (the object is linked into each; hidden names).
#include <stdint.h>
#include <omp.h>
{% include "cpp_runtime_state.h" %}
extern "C" int pthread_atfork(void (*)(void), void (*)(void), void (*)(void));
extern "C" char* getenv(const char*) noexcept;

__attribute__((visibility("hidden"))) int kiln_in_forked_child = 0;
static void kiln_note_fork(void) { kiln_in_forked_child = 1; }
__attribute__((constructor)) static void kiln_watch_fork(void) { pthread_atfork(0, 0, kiln_note_fork); }
extern "C" void kiln_forked_child(void) { kiln_in_forked_child = 1; }

__attribute__((visibility("hidden"))) int64_t kiln_late_us = 200;
__attribute__((visibility("hidden"))) int64_t kiln_serial_until = 0;
__attribute__((constructor)) static void kiln_read_late_us(void) {
    const char* v = getenv("KILN_LATE_US");
    if (!v || !*v) return;
    int64_t sign = *v == '-' ? -1 : 1, n = 0;
    for (v += *v == '-'; *v >= '0' && *v <= '9'; v++) n = n * 10 + (*v - '0');
    kiln_late_us = sign * n;
}
// The team a kernel of this library would take now (tests read it through cffi).
extern "C" int kiln_team_now(int nthreads) { return kiln_team(nthreads); }

{% if svml %}#ifdef __AVX512F__
// NumPy's SVML functions (kiln/lowering/svml.py): where NumPy's loops call them, kernels
// call kiln_np_<name>[f] (declared in the prelude as SIMD functions), whose vector variants
// (GCC's vector-function ABI: _ZGV<isa>N<lanes><v per operand>_<name>) and scalar version
// are here. Each widens its lanes to one 512-bit vector, filled as NumPy fills a short
// vector's unused lanes, and calls the function NumPy exports from _multiarray_umath,
// found in the loaded module when this library loads; without it, glibc's scalar function
// per lane (svml.py chose these names only where NumPy has them: a safety net).
#include <link.h>
#include <dlfcn.h>
#include <string.h>
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
{% for name, (svml, n, fill, ctypes) in svml.items() %}{% for T, W, f, suffix, isas in (("float", "kiln_vf16", "f", "f16", (("b", 4, "kiln_vf4"), ("c", 8, "kiln_vf8"), ("d", 8, "kiln_vf8"), ("e", 16, "kiln_vf16"))), ("double", "kiln_vd8", "", "8_ha", (("b", 2, "kiln_vd2"), ("c", 4, "kiln_vd4"), ("d", 4, "kiln_vd4"), ("e", 8, "kiln_vd8")))) if T in ctypes %}{% set fn = "kiln_np_" ~ name ~ f %}{% set lanes = 16 if T == "float" else 8 %}
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
{% endif %}extern "C" __attribute__((visibility("hidden"))) {{ T }} {{ fn }}({{ T }} a{% if n == 2 %}, {{ T }} b{% endif %}) {
    {{ W }} wa = {{ W }}{} + ({{ T }}){{ fill }};
    wa[0] = a;
{% if n == 2 %}    {{ W }} wb = wa;
    wb[0] = b;
{% endif %}    return {{ fn }}_w(wa{% if n == 2 %}, wb{% endif %})[0];
}
{% for isa, k, V in isas %}extern "C" __attribute__((visibility("hidden"))) {{ V }} _ZGV{{ isa }}N{{ k }}{{ "v" * n }}_{{ fn }}({{ V }} a{% if n == 2 %}, {{ V }} b{% endif %}) {
    return kiln_narrow<{{ V }}, {{ k }}>({{ fn }}_w(kiln_widen<{{ W }}, {{ k }}>(a, ({{ T }}){{ fill }}){% if n == 2 %}, kiln_widen<{{ W }}, {{ k }}>(b, ({{ T }}){{ fill }}){% endif %}));
}
{% endfor %}{% endfor %}{% endfor %}
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
    void* found;
{% for name, (svml, n, fill, ctypes) in svml.items() %}{% if "float" in ctypes %}    if ((found = dlsym(lib, "__svml_{{ svml }}f16"))) *(void**)&kiln_np_{{ name }}f_svml = found;
{% endif %}    if ((found = dlsym(lib, "__svml_{{ svml }}8_ha"))) *(void**)&kiln_np_{{ name }}_svml = found;
{% endfor %}}
#endif
{% endif %}