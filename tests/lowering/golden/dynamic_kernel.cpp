// kiln_fused_tanh_multiply_sum_0
//   ops: tanh, multiply, sum
//   iterates s0 x s1, reducing axes [1]
// noipa: GCC 12 stops calling libmvec's vector exp/log in the body's SIMD loops once
// it specializes the body for the constant range of a call (IPA constprop).
__attribute__((noipa)) static void kiln_fused_tanh_multiply_sum_0_body(const float* __restrict p_x, const float* __restrict p_b, float* __restrict p_buf0, int64_t s0, int64_t s1, int64_t begin, int64_t end, int nthreads)
{
    for (int64_t x0 = begin; x0 < end; ++x0) {
        double acc0 = 0;
        auto term0 = [&](int64_t r1) -> float {
          float t1 = p_x[r1 + s1*x0];
          float t2 = tanhf(t1);
          float t3 = p_b[r1];
          float t4 = t2 * t3;
          return t4;
        };
        acc0 += kiln_pairwise<float, 16>(term0, 0, s1);
        const float red0 = (float)(acc0);
        p_buf0[x0] = red0;
    }
}

// The entry, compiled once: inlined into its packed twin (which runtime/launch.c calls);
// the plain entry below (cffi's) hands its arguments to that twin.
static inline __attribute__((always_inline)) void kiln_fused_tanh_multiply_sum_0_entry(const float* __restrict p_x, const float* __restrict p_b, float* __restrict p_buf0, int64_t s0, int64_t s1, int nthreads)
{
    KILN_CLEAN_UPPER();   // (see the prelude: dirty upper state)
    if (kiln_in_forked_child) nthreads = 1;   // (see the prelude: fork)
    if (nthreads > 1) nthreads = kiln_team(nthreads);   // (see the prelude: busy cores)
    // Threads only when the work (38 statements per element) pays for a parallel
    // region; the range is cut into several chunks per thread, taken dynamically, so a
    // thread whose core is busy with another process does not hold the others up.
    if (nthreads > 1 && s0 >= 2 && (int64_t)s0*s1 * 38 >= 4194304) {
        const int64_t nchunks = s0 < 8 * nthreads ? s0 : 8 * nthreads;
        unsigned fp = 0;   // the threads' floating-point flags, for the calling thread
        const int64_t launched = kiln_now_us();
        #pragma omp parallel num_threads(nthreads) reduction(|:fp)
        {
            kiln_arrived(launched);
            #pragma omp for schedule(dynamic, 1)
            for (int64_t c = 0; c < nchunks; ++c) {
                const int64_t b = c * s0 / nchunks / 1 * 1;
                const int64_t e = c + 1 == nchunks ? s0 : (c + 1) * s0 / nchunks / 1 * 1;
                kiln_fp_take();
                if (b < e) kiln_fused_tanh_multiply_sum_0_body(p_x, p_b, p_buf0, s0, s1, b, e, 1);
                fp |= kiln_fp_take();
            }
        }
        kiln_fp_put(fp);
        return;
    }
    kiln_fused_tanh_multiply_sum_0_body(p_x, p_b, p_buf0, s0, s1, 0, s0, nthreads);
}

extern "C" __attribute__((noinline)) void kiln_fused_tanh_multiply_sum_0_packed(const kiln_slot* a);
extern "C" void kiln_fused_tanh_multiply_sum_0_packed(const kiln_slot* a) {
    kiln_fused_tanh_multiply_sum_0_entry((const float*)a[0].p, (const float*)a[1].p, (float*)a[2].p, a[3].i, a[4].i, (int)a[5].i);
}

extern "C" void kiln_fused_tanh_multiply_sum_0(const float* __restrict p_x, const float* __restrict p_b, float* __restrict p_buf0, int64_t s0, int64_t s1, int nthreads)
{
    KILN_CLEAN_UPPER();   // (before the stores: cffi's callers may leave it dirty)
    kiln_slot a[6];
    a[0].p = (void*)p_x;
    a[1].p = (void*)p_b;
    a[2].p = (void*)p_buf0;
    a[3].i = s0;
    a[4].i = s1;
    a[5].i = nthreads;
    kiln_fused_tanh_multiply_sum_0_packed(a);
}


