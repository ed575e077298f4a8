"""Hand-built kernels for the Triton renderer tests, written the way lowering builds them
(values whose code calls an ops handler: load, constant, cast, call), plus a runner that
renders, imports and runs a kernel through Triton's interpreter on NumPy arrays."""
import numpy as np
import pytest

from kiln.config import config
from kiln.lowering.loop_ir import Buffer, BufferValue, Pointwise
from kiln.lowering.lower import ComputeNode
from kiln.lowering.scheduler import Frame, Kernel
from kiln.lowering.triton import render_kernel, render_module
from kiln.runtime import triton_build as tb


def inp(name, array):
    buf = Buffer(name, array.shape, array.dtype, "input")
    buf.strides = tuple(s // array.itemsize for s in array.strides)
    return BufferValue.whole(buf)


def pw(shape, dtype, fn):
    return Pointwise(shape, dtype, fn, 1, ())


def call(fn, dtype, *values, out=None):
    """A pointwise value: scalar function ``fn`` on ``values`` (cast to ``dtype``)."""
    dtype = np.dtype(dtype)
    res = np.dtype(out or dtype)
    shape = np.broadcast_shapes(*[v.shape for v in values if hasattr(v, "shape")])

    def body(ops, index):
        args = []
        for v in values:
            if hasattr(v, "load"):
                lead = len(index) - len(v.shape)
                idx = [ix if n != 1 else type(ix)(0) for ix, n in zip(index[lead:], v.shape)]
                args.append(ops.cast(v.load(ops, idx), v.dtype, dtype))
            else:
                args.append(ops.constant(v, dtype))
        return ops.call(fn, args, dtype, res)
    return pw(shape, res, body)


def node(name, value):
    n = ComputeNode(name, Buffer(name, value.shape, value.dtype, "computed"), "pointwise", ())
    n.value = value
    return n


def reduction(name, src, axes, combine, out_shape, out_dtype, acc_dtype):
    n = ComputeNode(name, Buffer(name, out_shape, out_dtype, "computed"), "reduction", ())
    n.src, n.in_shape, n.axes, n.combine = src, src.shape, tuple(axes), combine
    n.acc_dtype = np.dtype(acc_dtype)
    return n


def kernel(name, frame, stages):
    first = stages[0][1][0][0]
    k = Kernel(frame, first)
    k.members = [m for _, ms in stages for m in ms]
    k.stages = stages
    k.name = name
    return k


def run(k, local, inputs, interpret=True):
    """Render ``k``, run it (interpreter) on ``inputs`` {name: array}; returns its outputs."""
    rk = render_kernel(k, local)
    source = render_module("test", [rk])
    mod = tb.load_module(source, k.name, interpret=interpret)
    grid, constexprs, warps = rk.config(interpret=interpret)
    outs = {b.name: np.full(b.shape, 7, b.dtype) for b in rk.buffers if b.name in rk.written}
    args = [inputs.get(b.name, outs.get(b.name)) for b in rk.buffers]
    kern = tb.TritonKernel(mod, k.name, rk.signature, constexprs, warps, interpret=interpret)
    kern(grid, *args)
    return rk, source, outs


@pytest.fixture(autouse=True)
def interpret():
    """backend="triton" on NumPy arrays through Triton's interpreter (KILN_TRITON_INTERPRET)."""
    old = config.triton_interpret
    config.triton_interpret = True
    yield
    config.triton_interpret = old
