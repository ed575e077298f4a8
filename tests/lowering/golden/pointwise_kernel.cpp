// kiln_fused_greater_power_clip_where_0
//   ops: greater, power, clip, where, multiply, less, astype, add
//   iterates 3 x 4 elementwise
// noipa: GCC 12 stops calling libmvec's vector exp/log in the body's SIMD loops once
// it specializes the body for the constant range of a call (IPA constprop).
__attribute__((noipa)) static void kiln_fused_greater_power_clip_where_0_body(const float* __restrict p_x, const float* __restrict p_y, float* __restrict p_buf0, double s_a, int64_t begin, int64_t end, int nthreads)
{
    for (int64_t x0 = begin; x0 < end; ++x0) {
        #pragma omp simd
        for (int64_t x1 = 0; x1 < 4; ++x1) {
            float t0 = p_x[4*x0 + x1];
            float t1 = p_y[x1];
            bool t2 = (t0 > t1);
            float t3 = t0 * t0;
            float t4 = kiln_clip<float>(t1, -1.0f, __builtin_inff());
            float t5 = kiln_select<float>(t2, t3, t4);
            float t6 = (float)(s_a);
            float t7 = ((t6 == (float)2) | (t6 == (float)0.5) | (t6 == (float)1) | (t6 == (float)0) | (t6 == (float)-1) ? (t6 == (float)2 ? (t6 == (float)2 ? t5 : (float)1) * (t6 == (float)2 ? t5 : (float)1) : t6 == (float)0.5 ? __builtin_sqrtf(t6 == (float)0.5 ? t5 : (float)1) : t6 == (float)1 ? t5 : t6 == (float)0 ? (float)1 : (float)1 / (t6 == (float)-1 ? t5 : (float)1)) : kiln_np_powf(t5, t6));
            float t8 = t7 * 3.0f;
            bool t9 = (t0 < 0.5f);
            float t10 = kiln_select<float>(t9, 1.0f, 0.0f);
            float t11 = t8 + t10;
            p_buf0[4*x0 + x1] = t11;
        }
    }
}

// The entry, compiled once: inlined into its packed twin (which runtime/launch.c calls);
// the plain entry below (cffi's) hands its arguments to that twin.
static inline __attribute__((always_inline)) void kiln_fused_greater_power_clip_where_0_entry(const float* __restrict p_x, const float* __restrict p_y, float* __restrict p_buf0, double s_a, int nthreads)
{
    KILN_CLEAN_UPPER();   // (see the prelude: dirty upper state)
    if (kiln_in_forked_child) nthreads = 1;   // (see the prelude: fork)
    if (nthreads > 1) nthreads = kiln_team(nthreads);   // (see the prelude: busy cores)
    kiln_fused_greater_power_clip_where_0_body(p_x, p_y, p_buf0, s_a, 0, 3, nthreads);
}

extern "C" __attribute__((noinline)) void kiln_fused_greater_power_clip_where_0_packed(const kiln_slot* a);
extern "C" void kiln_fused_greater_power_clip_where_0_packed(const kiln_slot* a) {
    kiln_fused_greater_power_clip_where_0_entry((const float*)a[0].p, (const float*)a[1].p, (float*)a[2].p, (double)a[3].d, (int)a[4].i);
}

extern "C" void kiln_fused_greater_power_clip_where_0(const float* __restrict p_x, const float* __restrict p_y, float* __restrict p_buf0, double s_a, int nthreads)
{
    KILN_CLEAN_UPPER();   // (before the stores: cffi's callers may leave it dirty)
    kiln_slot a[5];
    a[0].p = (void*)p_x;
    a[1].p = (void*)p_y;
    a[2].p = (void*)p_buf0;
    a[3].d = s_a;
    a[4].i = nthreads;
    kiln_fused_greater_power_clip_where_0_packed(a);
}


