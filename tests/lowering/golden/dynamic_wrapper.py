# kiln wrapper for graph 'forward' (generated; run it: python <this file>)
import sys
import numpy as np
from kiln.runtime.loader import load_library
_lib, _ffi = load_library('<cache>/kernels.so', 'void kiln_fused_tanh_multiply_sum_0(void*, void*, void*, int64_t, int64_t, int);\nvoid kiln_fused_tanh_multiply_sum_0_packed(void*);')
from kiln.runtime.launch import bind as _bind
from kiln.runtime.fpwarn import kernel_warnings as _fp_warnings
from kiln.runtime.fpwarn import SecondBody as _SecondBody

def _respecialize(*args):  # replaced by the runtime: compile for new layouts
    raise TypeError('kiln: inputs do not match the layouts this code was built for')

def _numpy(*args):  # replaced by the runtime: the graph run by NumPy
    raise TypeError('kiln: no NumPy fallback was installed')

from kiln.runtime.fpmode import errors_trapped as _fp_trapped

_NT = 2
_empty = np.empty
_float32 = np.dtype('float32')
_refcount = sys.getrefcount
kiln_fused_tanh_multiply_sum_0 = _bind(_lib, _ffi, 'kiln_fused_tanh_multiply_sum_0', 'pppqqi', on_fp=_fp_warnings(((6, 'tanh', '', 0, 1), (6, 'multiply', '', 0, 7), (6, 'reduce', '', 0, 7)), (0, 1), slots=((0, 1, 2), (1, 1, 4), (2, 2, 2), (3, 2, 4)), rerun=_SecondBody('kiln_fused_tanh_multiply_sum_0', lambda: _SECOND_BODIES['kiln_fused_tanh_multiply_sum_0'], 'void kiln_fused_tanh_multiply_sum_0_told_run(void*, void*, void*, int64_t, int64_t, int);\nvoid kiln_fused_tanh_multiply_sum_0_told_run_packed(void*);', 'pppqqi')))


def call(x, b):
    if _fp_trapped():
        return _numpy(x, b)
    if x.ndim != 2 or not x.flags.c_contiguous:
        return _respecialize(x, b)
    if b.ndim != 1 or not b.flags.c_contiguous:
        return _respecialize(x, b)
    s0 = x.shape[0]
    s1 = x.shape[1]
    if s0 < 2 or s1 < 2 or b.shape[0] != s1:
        return _respecialize(x, b)
    buf0 = _empty((s0,), _float32)
    kiln_fused_tanh_multiply_sum_0(x, b, buf0, s0, s1, _NT)
    return (buf0,)

# The kernels' second bodies, with their ops' predicates: each a library of its
# own, built by kiln/runtime/fpwarn.py when a launch first wants it.
_SECOND_BODIES = {
'kiln_fused_tanh_multiply_sum_0': r'''// kiln_fused_tanh_multiply_sum_0
//   ops: tanh, multiply, sum
//   iterates s0 x s1, reducing axes [1]
// The body again, also computing where its ops raised the kinds several of them may raise
// (kiln/lowering/cpp_fp.py): a library of its own, built when runtime/fpwarn.py first
// wants it, runs it on the same arguments after a launch raised one that NumPy's error
// mode warns of (the kernel's own library does not carry it: most kernels never raise).
__attribute__((noipa, optimize("O1"))) static unsigned kiln_fused_tanh_multiply_sum_0_told(const float* __restrict p_x, const float* __restrict p_b, float* __restrict p_buf0, int64_t s0, int64_t s1, int64_t begin, int64_t end, int nthreads)
{
    uint32_t own0 = 0, own1 = 0, own2 = 0, own3 = 0;
    for (int64_t x0 = begin; x0 < end; ++x0) {
        double acc0 = 0;
        int spoilo17 = 0, spoili18 = 0;
        auto term0 = [&](int64_t r1) -> float {
          float t1 = p_x[r1 + s1*x0];
          float t2 = tanhf(t1);
          float t3 = p_b[r1];
          float t4 = t2 * t3;
          bool t5 = (__builtin_fabsf(t4) == __builtin_inff());
          bool t6 = (__builtin_fabsf(t2) == __builtin_inff());
          bool t7 = (t6 == 0);
          bool t8 = ((t5 != 0) & (t7 != 0));
          bool t9 = (__builtin_fabsf(t3) == __builtin_inff());
          bool t10 = (t9 == 0);
          bool t11 = ((t8 != 0) & (t10 != 0));
          own0 |= (uint32_t)t11;
          bool t12 = (t4 != t4);
          bool t13 = (t2 == t2);
          bool t14 = ((t12 != 0) & (t13 != 0));
          bool t15 = (t3 == t3);
          bool t16 = ((t14 != 0) & (t15 != 0));
          own1 |= (uint32_t)t16;
          return kiln_fp_spoils<float>(t4, spoilo17, spoili18);
        };
        acc0 += kiln_pairwise<float, 16>(term0, 0, s1);
        const float red0 = (float)(acc0);
        bool t19 = (__builtin_fabsf(red0) < __builtin_inff());
        bool t20 = (t19 == 0);
        bool t21 = (spoilo17 == 0);
        bool t22 = ((t20 != 0) & (t21 != 0));
        own2 |= (uint32_t)t22;
        bool t23 = (red0 != red0);
        bool t24 = (spoili18 == 0);
        bool t25 = ((t23 != 0) & (t24 != 0));
        own3 |= (uint32_t)t25;
        p_buf0[x0] = red0;
    }
    return (unsigned)own0 << 0 | (unsigned)own1 << 1 | (unsigned)own2 << 2 | (unsigned)own3 << 3;
}

extern "C" void kiln_fused_tanh_multiply_sum_0_told_run(const float* __restrict p_x, const float* __restrict p_b, float* __restrict p_buf0, int64_t s0, int64_t s1, int nthreads)
{
    KILN_CLEAN_UPPER();   // (see the prelude: dirty upper state)
    kiln_owned_word = kiln_fused_tanh_multiply_sum_0_told(p_x, p_b, p_buf0, s0, s1, 0, s0, 1);
    kiln_fp_take();   // (its flags say nothing: the word does)
}

extern "C" void kiln_fused_tanh_multiply_sum_0_told_run_packed(const kiln_slot* a) {
    kiln_fused_tanh_multiply_sum_0_told_run((const float*)a[0].p, (const float*)a[1].p, (float*)a[2].p, a[3].i, a[4].i, (int)a[5].i);
}
''',
}


def _example(shape, dtype):
    return (np.random.default_rng(0).standard_normal(shape) * 3).astype(dtype)


if __name__ == '__main__':
    import timeit
    x = _example((6, 10), np.float32)
    b = _example((10,), np.float32)
    n, t = timeit.Timer(lambda: call(x, b)).autorange()
    print(f'{t / n * 1e6:.1f} us per call')
