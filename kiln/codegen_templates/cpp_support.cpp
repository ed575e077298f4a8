// kiln's support object: what every kernel module links, compiled once per compiler and
// flags (kiln/runtime/build.py support_object), so no module compiles it again. Each
// library gets its own copy of this state (the object is linked into each; hidden names).
// (NumPy's vector math functions a module calls are objects of their own:
// cpp_support_math.cpp.)
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
