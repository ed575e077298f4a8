# kiln wrapper for graph 'softmax' (generated; run it: python <this file>)
import sys
import numpy as np
from kiln.runtime.loader import load_library
_lib, _ffi = load_library('<cache>/kernels.so', 'void kiln_fused_max_subtract_exp_sum_0(void*, void*, int);\nvoid kiln_fused_max_subtract_exp_sum_0_packed(void*);')
from kiln.runtime.launch import bind as _bind
from kiln.runtime.fpwarn import kernel_warnings as _fp_warnings

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
kiln_fused_max_subtract_exp_sum_0 = _bind(_lib, _ffi, 'kiln_fused_max_subtract_exp_sum_0', 'ppi', on_fp=_fp_warnings(((6, 'subtract', 'model.py', 4, 7), (6, 'exp', 'model.py', 4, 1), (6, 'reduce', 'model.py', 5, 7), (7, 'divide', 'model.py', 5, 7)), (0,)))


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


def _example(shape, dtype):
    return (np.random.default_rng(0).standard_normal(shape) * 3).astype(dtype)


if __name__ == '__main__':
    import timeit
    x = _example((8, 16), np.float32)
    n, t = timeit.Timer(lambda: call(x)).autorange()
    print(f'{t / n * 1e6:.1f} us per call')
