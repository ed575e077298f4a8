# kiln wrapper for graph 'softmax' (generated; run it: python <this file>)
import sys
import numpy as np
from kiln.runtime.loader import load_library
_lib, _ffi = load_library('<cache>/kernels.so', 'void kiln_fused_max_subtract_exp_sum_0(void*, void*, int);')
_fb = _ffi.from_buffer

def _addr(a):  # a strided or broadcast array: its first element's address
    return _ffi.cast('char *', a.ctypes.data)

def _respecialize(*args):  # replaced by the runtime: compile for new layouts
    raise TypeError('kiln: inputs do not match the layouts this code was built for')

def _numpy(*args):  # replaced by the runtime: the graph run by NumPy
    raise TypeError('kiln: no NumPy fallback was installed')

from kiln.runtime.fpmode import numpy_errors_trapped as _fp_trapped

_NT = 2
_refcount = sys.getrefcount
kiln_fused_max_subtract_exp_sum_0 = _lib.kiln_fused_max_subtract_exp_sum_0


def call(x):
    if _fp_trapped():
        return _numpy(x)
    if x.shape != (8, 16) or x.strides != (64, 4):
        return _respecialize(x)
    buf3 = np.empty((8, 16), np.float32)
    kiln_fused_max_subtract_exp_sum_0(_fb(x), _fb(buf3), _NT)
    return (buf3,)


def _example(shape, dtype):
    return (np.random.default_rng(0).standard_normal(shape) * 3).astype(dtype)


if __name__ == '__main__':
    import timeit
    x = _example((8, 16), np.float32)
    n, t = timeit.Timer(lambda: call(x)).autorange()
    print(f'{t / n * 1e6:.1f} us per call')
