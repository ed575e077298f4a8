# kiln wrapper for graph 'softmax' (generated; run it: python <this file>)
import sys
import numpy as np
from kiln.runtime.loader import load_library
_lib, _ffi = load_library('<cache>/kernels.so', 'void kiln_fused_max_subtract_exp_sum_0(void*, void*, int);\nvoid kiln_fused_max_subtract_exp_sum_0_packed(void*);')
from kiln.runtime.launch import bind as _bind
from kiln.runtime.fpwarn import kernel_warnings as _fp_warnings
from kiln.runtime.fpwarn import SecondBody as _SecondBody

def _respecialize(*args):  # replaced by the runtime: compile for new layouts
    raise TypeError('kiln: inputs do not match the layouts this code was built for')

def _numpy(*args):  # replaced by the runtime: the graph run by NumPy
    raise TypeError('kiln: no NumPy fallback was installed')

from kiln.runtime.fpmode import errors_trapped as _fp_trapped
from kiln.runtime.launch import layouts as _layout_check
# (x): the shapes and strides (bytes) the code was built for
_layouts = _layout_check(((8, 16), (64, 4)))

_NT = 2
_empty = np.empty
_float32 = np.dtype('float32')
_refcount = sys.getrefcount
kiln_fused_max_subtract_exp_sum_0 = _bind(_lib, _ffi, 'kiln_fused_max_subtract_exp_sum_0', 'ppi', keep_gil=True, on_fp=_fp_warnings(((6, 'subtract', 'model.py', 4, 7), (6, 'exp', 'model.py', 4, 1), (6, 'reduce', 'model.py', 5, 7), (7, 'divide', 'model.py', 5, 7)), (0,), slots=((0, 0, 2), (1, 0, 4), (2, 1, 2), (3, 2, 2), (4, 2, 4), (5, 3, 2), (6, 3, 4)), rerun=_SecondBody('kiln_fused_max_subtract_exp_sum_0', lambda: _SECOND_BODIES['kiln_fused_max_subtract_exp_sum_0'], 'void kiln_fused_max_subtract_exp_sum_0_told_run(void*, void*, int);\nvoid kiln_fused_max_subtract_exp_sum_0_told_run_packed(void*);', 'ppi')))


def call(x):
    if _fp_trapped():
        return _numpy(x)
    if not _layouts(x):
        return _respecialize(x)
    buf3 = _empty((8, 16), _float32)
    kiln_fused_max_subtract_exp_sum_0(x, buf3, _NT)
    return (buf3,)

# call's steps as data: the runtime runs them in C where the launcher builds
# (kiln/runtime/fast_call.c FastCall); call stays the reference and the fallback
_fast_plan = (1, (0,), (((8, 16), 'float32'),), (('kiln_fused_max_subtract_exp_sum_0', (('i', 0), ('b', 0), ('g', '_NT'))),), (('b', 0),))

# The kernels' second bodies, with their ops' predicates: each a library of its
# own, built by kiln/runtime/fpwarn.py when a launch first wants it.
_SECOND_BODIES = {
'kiln_fused_max_subtract_exp_sum_0': r'''// kiln_fused_max_subtract_exp_sum_0
//   ops: max, subtract, exp, sum, true_divide
//   iterates 8 x 16, reducing axes [1]
//   model.py:3  m = x.max(axis=1, keepdims=True)
//   model.py:4  e = np.exp(x - m)
//   model.py:5  return e / e.sum(axis=1, keepdims=True)
// The body again, also computing where its ops raised the kinds several of them may raise
// (kiln/lowering/cpp_fp.py): a library of its own, built when runtime/fpwarn.py first
// wants it, runs it on the same arguments after a launch raised one that NumPy's error
// mode warns of (the kernel's own library does not carry it: most kernels never raise).
__attribute__((noipa, optimize("O1"))) static unsigned kiln_fused_max_subtract_exp_sum_0_told(const float* __restrict p_x, float* __restrict p_buf3, int64_t begin, int64_t end, int nthreads)
{
    uint32_t own0 = 0, own1 = 0, own2 = 0, own3 = 0, own4 = 0, own5 = 0, own6 = 0;
    for (int64_t x0 = begin; x0 < end; ++x0) {
        float row_buf1[16];
        float acc0 = -__builtin_inff();
        int nan0 = 0;
        #pragma omp simd reduction(max:acc0) reduction(|:nan0) reduction(|:own0, own1, own2, own3, own4, own5, own6)
        for (int64_t r1 = 0; r1 < 16; ++r1) {
          float t1 = p_x[r1 + 16*x0];
          acc0 = acc0 > t1 ? acc0 : t1;
          nan0 |= __builtin_isnan(acc0);
        }
        const float red0 = nan0 ? __builtin_nanf("") : (float)(acc0);
        double acc20 = 0;
        int spoilo21 = 0, spoili22 = 0;
        auto term20 = [&](int64_t r1) -> float {
          float t2 = p_x[r1 + 16*x0];
          float t3 = t2 - red0;
          bool t4 = (__builtin_fabsf(t3) == __builtin_inff());
          bool t5 = (__builtin_fabsf(t2) == __builtin_inff());
          bool t6 = (t5 == 0);
          bool t7 = ((t4 != 0) & (t6 != 0));
          bool t8 = (__builtin_fabsf(red0) == __builtin_inff());
          bool t9 = (t8 == 0);
          bool t10 = ((t7 != 0) & (t9 != 0));
          own0 |= (uint32_t)t10;
          bool t11 = (t3 != t3);
          bool t12 = (t2 == t2);
          bool t13 = ((t11 != 0) & (t12 != 0));
          bool t14 = (red0 == red0);
          bool t15 = ((t13 != 0) & (t14 != 0));
          own1 |= (uint32_t)t15;
          float t16 = kiln_np_expf(t3);
          bool t17 = (__builtin_fabsf(t16) == __builtin_inff());
          bool t18 = (t4 == 0);
          bool t19 = ((t17 != 0) & (t18 != 0));
          own2 |= (uint32_t)t19;
          row_buf1[r1] = t16;
          return kiln_fp_spoils<float>(t16, spoilo21, spoili22);
        };
        acc20 += kiln_pairwise<float, 16>(term20, 0, 16);
        const float red20 = (float)(acc20);
        bool t23 = (__builtin_fabsf(red20) < __builtin_inff());
        bool t24 = (t23 == 0);
        bool t25 = (spoilo21 == 0);
        bool t26 = ((t24 != 0) & (t25 != 0));
        own3 |= (uint32_t)t26;
        bool t27 = (red20 != red20);
        bool t28 = (spoili22 == 0);
        bool t29 = ((t27 != 0) & (t28 != 0));
        own4 |= (uint32_t)t29;
        #pragma omp simd reduction(|:own0, own1, own2, own3, own4, own5, own6)
        for (int64_t r1 = 0; r1 < 16; ++r1) {
          float t30 = row_buf1[r1];
          float t31 = t30 / red20;
          bool t32 = (__builtin_fabsf(t31) == __builtin_inff());
          bool t33 = (__builtin_fabsf(t30) == __builtin_inff());
          bool t34 = (t33 == 0);
          bool t35 = ((t32 != 0) & (t34 != 0));
          bool t36 = (__builtin_fabsf(red20) == __builtin_inff());
          bool t37 = (t36 == 0);
          bool t38 = ((t35 != 0) & (t37 != 0));
          bool t39 = (red20 != 0.0f);
          bool t40 = ((t38 != 0) & (t39 != 0));
          own5 |= (uint32_t)t40;
          bool t41 = (t31 != t31);
          bool t42 = (t30 == t30);
          bool t43 = ((t41 != 0) & (t42 != 0));
          bool t44 = (red20 == red20);
          bool t45 = ((t43 != 0) & (t44 != 0));
          own6 |= (uint32_t)t45;
          p_buf3[r1 + 16*x0] = t31;
        }
    }
    return (unsigned)own0 << 0 | (unsigned)own1 << 1 | (unsigned)own2 << 2 | (unsigned)own3 << 3 | (unsigned)own4 << 4 | (unsigned)own5 << 5 | (unsigned)own6 << 6;
}

extern "C" void kiln_fused_max_subtract_exp_sum_0_told_run(const float* __restrict p_x, float* __restrict p_buf3, int nthreads)
{
    KILN_CLEAN_UPPER();   // (see the prelude: dirty upper state)
    kiln_owned_word = kiln_fused_max_subtract_exp_sum_0_told(p_x, p_buf3, 0, 8, 1);
    kiln_fp_take();   // (its flags say nothing: the word does)
}

extern "C" void kiln_fused_max_subtract_exp_sum_0_told_run_packed(const kiln_slot* a) {
    kiln_fused_max_subtract_exp_sum_0_told_run((const float*)a[0].p, (float*)a[1].p, (int)a[2].i);
}
''',
}


def _example(shape, dtype):
    return (np.random.default_rng(0).standard_normal(shape) * 3).astype(dtype)


if __name__ == '__main__':
    import timeit
    x = _example((8, 16), np.float32)
    n, t = timeit.Timer(lambda: call(x)).autorange()
    print(f'{t / n * 1e6:.1f} us per call')
