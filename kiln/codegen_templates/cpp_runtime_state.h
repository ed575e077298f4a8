// Fork: GNU OpenMP's thread pool does not survive fork(). A forked child that enters a
// parallel region from the thread that forked waits forever for its parent's workers (a
// multiprocessing Pool started by "fork" after a threaded kernel ran). So in a forked child
// every kernel runs on the calling thread (as PyTorch's do): the library's fork handler
// says so for a fork after it was loaded, and kiln/runtime/loader.py calls
// kiln_forked_child() on a library it loads in a forked child. One flag per library
// (hidden: the support object defines it, every translation unit of the module reads it).
extern __attribute__((visibility("hidden"))) int kiln_in_forked_child;

// Busy cores. A parallel region ends when every thread of its team has passed its end, so a
// helper thread whose core another process holds delays the kernel by a scheduler time
// slice, however little work it was left (dynamic chunks): under load (pytest -n, a process
// pool, a busy machine) a 0.1 ms kernel on two threads took 3-15 ms. Each thread of a
// region notes when it started; a helper that started KILN_LATE_US after the launch makes
// this library's kernels run on the calling thread alone for KILN_SERIAL_US, then try again.
// (Per library; the launch reads one relaxed atomic unless it is backing off.)
// KILN_LATE_US in the environment when the library loads sets the threshold (a negative
// one: every helper is late; tests).
#define KILN_SERIAL_US 200000
extern __attribute__((visibility("hidden"))) int64_t kiln_late_us;
extern __attribute__((visibility("hidden"))) int64_t kiln_serial_until;   // omp_get_wtime microseconds; 0: no helper was late
static inline int64_t kiln_now_us() { return (int64_t)(omp_get_wtime() * 1e6); }
static inline int kiln_team(int nthreads) {
    const int64_t until = __atomic_load_n(&kiln_serial_until, __ATOMIC_RELAXED);
    return until != 0 && kiln_now_us() < until ? 1 : nthreads;
}
static inline void kiln_arrived(int64_t launched) {
    if (omp_get_thread_num() == 0) return;
    const int64_t now = kiln_now_us();
    if (now - launched > kiln_late_us) __atomic_store_n(&kiln_serial_until, now + KILN_SERIAL_US, __ATOMIC_RELAXED);
}
