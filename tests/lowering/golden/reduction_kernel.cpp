// kiln_fused_std_0
//   ops: std
//   iterates 64 x 32, reducing axes [0]
// noipa: GCC 12 stops calling libmvec's vector exp/log in the body's SIMD loops once
// it specializes the body for the constant range of a call (IPA constprop).
__attribute__((noipa)) static void kiln_fused_std_0_body(const double* __restrict p_x, double* __restrict p_buf3, int64_t begin, int64_t end, int nthreads)
{
    for (int64_t x1_b = begin; x1_b < end; x1_b += 256) {
        const int64_t x1_e = x1_b + 256 < end ? x1_b + 256 : end;
        double acc0[256];
        for (int64_t x1 = x1_b; x1 < x1_e; ++x1) { acc0[x1 - x1_b] = 0; }
        double red0[256];
        for (int64_t r0 = 0; r0 < 64; ++r0) {
        #pragma omp simd
          for (int64_t x1 = x1_b; x1 < x1_e; ++x1) {
            double t1 = p_x[32*r0 + x1];
            acc0[x1 - x1_b] += t1;
          }
        }
        for (int64_t x1 = x1_b; x1 < x1_e; ++x1) {
          red0[x1 - x1_b] = (double)(acc0[x1 - x1_b]);
        }
        double s3[256];
        for (int64_t x1 = x1_b; x1 < x1_e; ++x1) {
          double t2 = red0[x1 - x1_b] / (double)64;
          s3[x1 - x1_b] = t2;
        }
        double acc4[256];
        for (int64_t x1 = x1_b; x1 < x1_e; ++x1) { acc4[x1 - x1_b] = 0; }
        double red4[256];
        for (int64_t r0 = 0; r0 < 64; ++r0) {
        #pragma omp simd
          for (int64_t x1 = x1_b; x1 < x1_e; ++x1) {
            double t5 = p_x[32*r0 + x1];
            double t6 = t5 - s3[x1 - x1_b];
            double t7 = t6 * t6;
            acc4[x1 - x1_b] += t7;
          }
        }
        for (int64_t x1 = x1_b; x1 < x1_e; ++x1) {
          red4[x1 - x1_b] = (double)(acc4[x1 - x1_b]);
        }
        double s10[256];
        for (int64_t x1 = x1_b; x1 < x1_e; ++x1) {
          double t8 = red4[x1 - x1_b] / (double)63;
          double t9 = __builtin_sqrt(t8);
          s10[x1 - x1_b] = t9;
          p_buf3[x1] = t9;
        }
    }
}

// The entry, compiled once: inlined into its packed twin (which runtime/launch.c calls);
// the plain entry below (cffi's) hands its arguments to that twin.
static inline __attribute__((always_inline)) void kiln_fused_std_0_entry(const double* __restrict p_x, double* __restrict p_buf3, int nthreads)
{
    KILN_CLEAN_UPPER();   // (see the prelude: dirty upper state)
    if (kiln_in_forked_child) nthreads = 1;   // (see the prelude: fork)
    if (nthreads > 1) nthreads = kiln_team(nthreads);   // (see the prelude: busy cores)
    kiln_fused_std_0_body(p_x, p_buf3, 0, 32, nthreads);
}

extern "C" __attribute__((noinline)) void kiln_fused_std_0_packed(const kiln_slot* a);
extern "C" void kiln_fused_std_0_packed(const kiln_slot* a) {
    kiln_fused_std_0_entry((const double*)a[0].p, (double*)a[1].p, (int)a[2].i);
}

extern "C" void kiln_fused_std_0(const double* __restrict p_x, double* __restrict p_buf3, int nthreads)
{
    KILN_CLEAN_UPPER();   // (before the stores: cffi's callers may leave it dirty)
    kiln_slot a[3];
    a[0].p = (void*)p_x;
    a[1].p = (void*)p_buf3;
    a[2].i = nthreads;
    kiln_fused_std_0_packed(a);
}


// kiln_fused_mean_1
//   ops: mean
//   iterates 64 x 32, reducing axes [1]
// noipa: GCC 12 stops calling libmvec's vector exp/log in the body's SIMD loops once
// it specializes the body for the constant range of a call (IPA constprop).
__attribute__((noipa)) static void kiln_fused_mean_1_body(const double* __restrict p_x, double* __restrict p_buf5, int64_t begin, int64_t end, int nthreads)
{
    for (int64_t x0 = begin; x0 < end; ++x0) {
        double acc0 = 0;
        auto term0 = [&](int64_t r1) -> double {
          double t1 = p_x[r1 + 32*x0];
          return t1;
        };
        acc0 += kiln_pairwise<double>(term0, 0, 32);
        const double red0 = (double)(acc0);
        double t2 = red0 / (double)32;
        p_buf5[x0] = t2;
    }
}

// The entry, compiled once: inlined into its packed twin (which runtime/launch.c calls);
// the plain entry below (cffi's) hands its arguments to that twin.
static inline __attribute__((always_inline)) void kiln_fused_mean_1_entry(const double* __restrict p_x, double* __restrict p_buf5, int nthreads)
{
    KILN_CLEAN_UPPER();   // (see the prelude: dirty upper state)
    if (kiln_in_forked_child) nthreads = 1;   // (see the prelude: fork)
    if (nthreads > 1) nthreads = kiln_team(nthreads);   // (see the prelude: busy cores)
    kiln_fused_mean_1_body(p_x, p_buf5, 0, 64, nthreads);
}

extern "C" __attribute__((noinline)) void kiln_fused_mean_1_packed(const kiln_slot* a);
extern "C" void kiln_fused_mean_1_packed(const kiln_slot* a) {
    kiln_fused_mean_1_entry((const double*)a[0].p, (double*)a[1].p, (int)a[2].i);
}

extern "C" void kiln_fused_mean_1(const double* __restrict p_x, double* __restrict p_buf5, int nthreads)
{
    KILN_CLEAN_UPPER();   // (before the stores: cffi's callers may leave it dirty)
    kiln_slot a[3];
    a[0].p = (void*)p_x;
    a[1].p = (void*)p_buf5;
    a[2].i = nthreads;
    kiln_fused_mean_1_packed(a);
}


