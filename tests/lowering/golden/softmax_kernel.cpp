// kiln_fused_max_subtract_exp_sum_0
//   ops: max, subtract, exp, sum, true_divide
//   iterates 8 x 16, reducing axes [1]
//   model.py:3  m = x.max(axis=1, keepdims=True)
//   model.py:4  e = np.exp(x - m)
//   model.py:5  return e / e.sum(axis=1, keepdims=True)
// noipa: GCC 12 stops calling libmvec's vector exp/log in the body's SIMD loops once
// it specializes the body for the constant range of a call (IPA constprop).
__attribute__((noipa)) static void kiln_fused_max_subtract_exp_sum_0_body(const float* __restrict p_x, float* __restrict p_buf3, int64_t begin, int64_t end, int nthreads)
{
    for (int64_t x0 = begin; x0 < end; ++x0) {
        float row_buf1[16];
        float acc0 = -__builtin_inff();
        int nan0 = 0;
        #pragma omp simd reduction(max:acc0) reduction(|:nan0)
        for (int64_t r1 = 0; r1 < 16; ++r1) {
          float t1 = p_x[r1 + 16*x0];
          acc0 = acc0 > t1 ? acc0 : t1;
          nan0 |= __builtin_isnan(acc0);
        }
        const float red0 = nan0 ? __builtin_nanf("") : (float)(acc0);
        double acc5 = 0;
        auto term5 = [&](int64_t r1) -> float {
          float t2 = p_x[r1 + 16*x0];
          float t3 = t2 - red0;
          float t4 = kiln_np_expf(t3);
          row_buf1[r1] = t4;
          return t4;
        };
        acc5 += kiln_pairwise<float, 16>(term5, 0, 16);
        const float red5 = (float)(acc5);
        #pragma omp simd
        for (int64_t r1 = 0; r1 < 16; ++r1) {
          float t6 = row_buf1[r1];
          float t7 = t6 / red5;
          p_buf3[r1 + 16*x0] = t7;
        }
    }
}

// The entry, compiled once: inlined into its packed twin (which runtime/launch.c calls);
// the plain entry below (cffi's) hands its arguments to that twin.
static inline __attribute__((always_inline)) void kiln_fused_max_subtract_exp_sum_0_entry(const float* __restrict p_x, float* __restrict p_buf3, int nthreads)
{
    KILN_CLEAN_UPPER();   // (see the prelude: dirty upper state)
    if (kiln_in_forked_child) nthreads = 1;   // (see the prelude: fork)
    if (nthreads > 1) nthreads = kiln_team(nthreads);   // (see the prelude: busy cores)
    kiln_fused_max_subtract_exp_sum_0_body(p_x, p_buf3, 0, 8, nthreads);
}

extern "C" __attribute__((noinline)) void kiln_fused_max_subtract_exp_sum_0_packed(const kiln_slot* a);
extern "C" void kiln_fused_max_subtract_exp_sum_0_packed(const kiln_slot* a) {
    kiln_fused_max_subtract_exp_sum_0_entry((const float*)a[0].p, (float*)a[1].p, (int)a[2].i);
}

extern "C" void kiln_fused_max_subtract_exp_sum_0(const float* __restrict p_x, float* __restrict p_buf3, int nthreads)
{
    KILN_CLEAN_UPPER();   // (before the stores: cffi's callers may leave it dirty)
    kiln_slot a[3];
    a[0].p = (void*)p_x;
    a[1].p = (void*)p_buf3;
    a[2].i = nthreads;
    kiln_fused_max_subtract_exp_sum_0_packed(a);
}


