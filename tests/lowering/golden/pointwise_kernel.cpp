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
            bool t7 = (t6 == 0.5f);
            float t8 = __builtin_sqrtf(t5);
            float t9 = powf(t5, t6);
            float t10 = kiln_select<float>(t7, t8, t9);
            float t11 = t10 * 3.0f;
            bool t12 = (t0 < 0.5f);
            float t13 = kiln_select<float>(t12, 1.0f, 0.0f);
            float t14 = t11 + t13;
            p_buf0[4*x0 + x1] = t14;
        }
    }
}

// The body again, also computing where its ops raised the kinds several of them may raise
// (kiln/lowering/cpp_fp.py): runtime/fpwarn.py runs it (the entry below) on the same
// arguments after a launch raised one that NumPy's error mode warns of.
__attribute__((noipa, optimize("O1"))) static unsigned kiln_fused_greater_power_clip_where_0_told(const float* __restrict p_x, const float* __restrict p_y, float* __restrict p_buf0, double s_a, int64_t begin, int64_t end, int nthreads)
{
    uint64_t own0 = 0, own1 = 0, own2 = 0, own3 = 0, own4 = 0, own5 = 0, own6 = 0;
    for (int64_t x0 = begin; x0 < end; ++x0) {
        #pragma omp simd reduction(|:own0, own1, own2, own3, own4, own5, own6)
        for (int64_t x1 = 0; x1 < 4; ++x1) {
            float t0 = p_x[4*x0 + x1];
            float t1 = p_y[x1];
            bool t2 = (t0 > t1);
            float t3 = t0 * t0;
            bool t4 = (__builtin_fabsf(t3) == __builtin_inff());
            bool t5 = (__builtin_fabsf(t0) == __builtin_inff());
            bool t6 = (t5 == 0);
            bool t7 = ((t4 != 0) & (t6 != 0));
            bool t8 = (__builtin_fabsf(2.0f) == __builtin_inff());
            bool t9 = (t8 == 0);
            bool t10 = ((t7 != 0) & (t9 != 0));
            bool t11 = (t0 != 0.0f);
            bool t12 = ((t10 != 0) & (t11 != 0));
            own0 |= (uint64_t)t12;
            float t13 = kiln_clip<float>(t1, -1.0f, __builtin_inff());
            float t14 = kiln_select<float>(t2, t3, t13);
            float t15 = (float)(s_a);
            bool t16 = (t15 == 0.5f);
            float t17 = __builtin_sqrtf(t14);
            float t18 = powf(t14, t15);
            float t19 = kiln_select<float>(t16, t17, t18);
            bool t20 = (__builtin_fabsf(t19) == __builtin_inff());
            bool t21 = (__builtin_fabsf(t14) == __builtin_inff());
            bool t22 = (t21 == 0);
            bool t23 = ((t20 != 0) & (t22 != 0));
            bool t24 = (t14 == 0.0f);
            bool t25 = ((t23 != 0) & (t24 != 0));
            own1 |= (uint64_t)t25;
            bool t26 = (__builtin_fabsf(t15) == __builtin_inff());
            bool t27 = (t26 == 0);
            bool t28 = ((t23 != 0) & (t27 != 0));
            bool t29 = (t14 != 0.0f);
            bool t30 = ((t28 != 0) & (t29 != 0));
            own2 |= (uint64_t)t30;
            bool t31 = (t19 != t19);
            bool t32 = (t14 == t14);
            bool t33 = ((t31 != 0) & (t32 != 0));
            bool t34 = (t15 == t15);
            bool t35 = ((t33 != 0) & (t34 != 0));
            own3 |= (uint64_t)t35;
            float t36 = t19 * 3.0f;
            bool t37 = (__builtin_fabsf(t36) == __builtin_inff());
            bool t38 = (t20 == 0);
            bool t39 = ((t37 != 0) & (t38 != 0));
            bool t40 = (__builtin_fabsf(3.0f) == __builtin_inff());
            bool t41 = (t40 == 0);
            bool t42 = ((t39 != 0) & (t41 != 0));
            own4 |= (uint64_t)t42;
            bool t43 = (t0 < 0.5f);
            float t44 = kiln_select<float>(t43, 1.0f, 0.0f);
            float t45 = t36 + t44;
            bool t46 = (__builtin_fabsf(t45) == __builtin_inff());
            bool t47 = (t37 == 0);
            bool t48 = ((t46 != 0) & (t47 != 0));
            bool t49 = (__builtin_fabsf(t44) == __builtin_inff());
            bool t50 = (t49 == 0);
            bool t51 = ((t48 != 0) & (t50 != 0));
            own5 |= (uint64_t)t51;
            bool t52 = (t45 != t45);
            bool t53 = (t36 == t36);
            bool t54 = ((t52 != 0) & (t53 != 0));
            bool t55 = (t44 == t44);
            bool t56 = ((t54 != 0) & (t55 != 0));
            own6 |= (uint64_t)t56;
            p_buf0[4*x0 + x1] = t45;
        }
    }
    return (unsigned)own0 << 0 | (unsigned)own1 << 1 | (unsigned)own2 << 2 | (unsigned)own3 << 3 | (unsigned)own4 << 4 | (unsigned)own5 << 5 | (unsigned)own6 << 6;
}

extern "C" void kiln_fused_greater_power_clip_where_0_told_run(const float* __restrict p_x, const float* __restrict p_y, float* __restrict p_buf0, double s_a, int nthreads)
{
    KILN_CLEAN_UPPER();   // (see the prelude: dirty upper state)
    kiln_owned_word = kiln_fused_greater_power_clip_where_0_told(p_x, p_y, p_buf0, s_a, 0, 3, 1);
    kiln_fp_take();   // (its flags say nothing: the word does)
}

extern "C" void kiln_fused_greater_power_clip_where_0(const float* __restrict p_x, const float* __restrict p_y, float* __restrict p_buf0, double s_a, int nthreads)
{
    KILN_CLEAN_UPPER();   // (see the prelude: dirty upper state)
    if (kiln_in_forked_child) nthreads = 1;   // (see the prelude: fork)
    if (nthreads > 1) nthreads = kiln_team(nthreads);   // (see the prelude: busy cores)
    // Threads only when the work (47 statements per element) pays for a parallel
    // region; the range is cut into several chunks per thread, taken dynamically, so a
    // thread whose core is busy with another process does not hold the others up.
    if (nthreads > 1 && 3 >= 2 && (int64_t)12 * 47 >= 4194304) {
        const int64_t nchunks = 3 < 8 * nthreads ? 3 : 8 * nthreads;
        unsigned fp = 0;   // the threads' floating-point flags, for the calling thread
        const int64_t launched = kiln_now_us();
        #pragma omp parallel num_threads(nthreads) reduction(|:fp)
        {
            kiln_arrived(launched);
            #pragma omp for schedule(dynamic, 1)
            for (int64_t c = 0; c < nchunks; ++c) {
                const int64_t b = c * 3 / nchunks / 1 * 1;
                const int64_t e = c + 1 == nchunks ? 3 : (c + 1) * 3 / nchunks / 1 * 1;
                kiln_fp_take();
                if (b < e) kiln_fused_greater_power_clip_where_0_body(p_x, p_y, p_buf0, s_a, b, e, 1);
                fp |= kiln_fp_take();
            }
        }
        kiln_fp_put(fp);
        return;
    }
    kiln_fused_greater_power_clip_where_0_body(p_x, p_y, p_buf0, s_a, 0, 3, nthreads);
}

extern "C" void kiln_fused_greater_power_clip_where_0_packed(const kiln_slot* a) {
    kiln_fused_greater_power_clip_where_0((const float*)a[0].p, (const float*)a[1].p, (float*)a[2].p, (double)a[3].d, (int)a[4].i);
}

extern "C" void kiln_fused_greater_power_clip_where_0_told_run_packed(const kiln_slot* a) {
    kiln_fused_greater_power_clip_where_0_told_run((const float*)a[0].p, (const float*)a[1].p, (float*)a[2].p, (double)a[3].d, (int)a[4].i);
}


