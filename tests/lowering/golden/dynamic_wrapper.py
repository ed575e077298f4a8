# kiln wrapper for graph 'forward' (generated; run it: python <this file>)
import sys
import numpy as np
from kiln.runtime.loader import load_library
_lib, _ffi = load_library('<cache>/kernels.so', 'void kiln_fused_tanh_multiply_sum_0(void*, void*, void*, int64_t, int64_t, int);\nvoid kiln_fused_tanh_multiply_sum_0_packed(void*);')
from kiln.runtime.launch import bind as _bind
from kiln.runtime.fpwarn import kernel_warnings as _fp_warnings

def _respecialize(*args):  # replaced by the runtime: compile for new layouts
    raise TypeError('kiln: inputs do not match the layouts this code was built for')

def _numpy(*args):  # replaced by the runtime: the graph run by NumPy
    raise TypeError('kiln: no NumPy fallback was installed')

from kiln.runtime.fpmode import errors_trapped as _fp_trapped

_NT = 2
_empty = np.empty
_float32 = np.dtype('float32')
_refcount = sys.getrefcount
kiln_fused_tanh_multiply_sum_0 = _bind(_lib, _ffi, 'kiln_fused_tanh_multiply_sum_0', 'pppqqi', on_fp=_fp_warnings(((6, 'tanh', '', 0, 1), (6, 'multiply', '', 0, 7), (6, 'reduce', '', 0, 7)), (0, 1)))


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


def _example(shape, dtype):
    return (np.random.default_rng(0).standard_normal(shape) * 3).astype(dtype)


if __name__ == '__main__':
    import timeit
    x = _example((6, 10), np.float32)
    b = _example((10,), np.float32)
    n, t = timeit.Timer(lambda: call(x, b)).autorange()
    print(f'{t / n * 1e6:.1f} us per call')
