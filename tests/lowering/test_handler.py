"""Lowering at the ops-handler level: kernel bodies recorded by a RecordingHandler, no C text."""
import numpy as np
import pytest

from kiln.ir import trace
from kiln.lowering.cpp_ops import CTYPES, template
from kiln.lowering.handler import RecordingHandler
from kiln.lowering.loop_ir import Affine, Pointwise
from kiln.lowering.lower import ComputeNode, ExternNode, GraphLowering
from kiln.ops import F, TensorMeta

F32, F64 = np.dtype(np.float32), np.dtype(np.float64)


def lower(fn, metas, names, inputs):
    return GraphLowering(trace(fn, metas, names), inputs).run()


def body(node: ComputeNode) -> RecordingHandler:
    rec = RecordingHandler()
    value = node.value if node.kind == "pointwise" else node.src
    value.load(rec, [Affine.var(f"i{d}") for d in range(len(value.shape))])
    return rec


def test_a_fused_chain_is_one_body_of_named_scalar_functions():
    x, y = np.zeros((3, 4), np.float32), np.zeros(4, np.float32)
    low = lower(lambda x, y: F.add(F.sin(F.cos(x)), y), [TensorMeta(x.shape, F32), TensorMeta(y.shape, F32)],
                ["x", "y"], [x, y])
    (node,) = low.nodes
    rec = body(node)
    assert [(fn, dt) for fn, dt in rec.calls] == [("cos", F32), ("sin", F32), ("add", F32)]
    assert [(b.name, ix) for b, ix in rec.loads] == [("x", Affine(0, {"i0": 4, "i1": 1})),
                                                      ("y", Affine(0, {"i1": 1}))]


def test_loop_dtype_follows_numpy_type_resolution():
    # int32 + float32 runs NumPy's float64 loop: both operands are cast, then added.
    a, b = np.zeros(5, np.int32), np.zeros(5, np.float32)
    low = lower(lambda a, b: F.add(a, b), [TensorMeta((5,), np.int32), TensorMeta((5,), F32)], ["a", "b"], [a, b])
    rec = body(low.nodes[0])
    assert rec.calls == [("add", F64)]
    assert rec.statements == 5  # two loads, two casts, the add


@pytest.mark.parametrize("exponent,calls", [(2.0, ["multiply"]), (1.0, []), (0.5, ["sqrt"]),
                                            (3.0, ["power"]), (2.5, ["power"]),
                                            (-1.0, ["true_divide"])])
def test_constant_exponents_choose_a_decomposition(exponent, calls):
    x = np.zeros(8, np.float32)
    low = lower(lambda x: F.power(x, exponent), [TensorMeta((8,), F32)], ["x"], [x])
    assert [fn for fn, _ in body(low.nodes[0]).calls] == calls


def test_runtime_scalar_exponent_takes_numpys_fast_paths():
    # In a loop: one scalar function whose C++ branches on the exponent (GCC takes the
    # branch out of the loop). A single element (straight-line code, where GCC computes
    # the branches beside each other): 1 / x, sqrt, x * x and pow, each of x where its
    # exponent is taken (1.0 elsewhere), picked by selects.
    x = np.zeros(8, np.float32)
    low = lower(lambda x, a: F.power(x, a), [TensorMeta((8,), F32), 2.0], ["x", "a"], [x, 2.0])
    assert [fn for fn, _ in body(low.nodes[0]).calls] == ["power_scalar_exponent"]
    x = np.zeros((), np.float32)
    low = lower(lambda x, a: F.power(x, a), [TensorMeta((), F32), 2.0], ["x", "a"], [x, 2.0])
    rec = body(low.nodes[0])
    assert sorted({fn for fn, _ in rec.calls}) == ["equal", "logical_or", "multiply", "power", "sqrt",
                                                   "true_divide", "where"]
    assert [fn for fn, _ in rec.calls].count("equal") == 5


def test_integer_power_is_an_extern():
    x = np.zeros(8, np.int64)
    low = lower(lambda x, y: F.power(x, y), [TensorMeta((8,), np.int64)] * 2, ["x", "y"], [x, x])
    assert [type(n) for n in low.nodes] == [ExternNode]


def test_where_casts_its_condition_to_bool():
    c, x = np.zeros(4, np.int8), np.zeros(4, F64)
    low = lower(lambda c, x: F.where(c, x, 1.0), [TensorMeta((4,), np.int8), TensorMeta((4,), F64)],
                ["c", "x"], [c, x])
    rec = body(low.nodes[0])
    assert rec.calls == [("where", F64)]
    assert rec.casts == [(np.dtype(np.int8), np.dtype(bool))]  # the condition


def test_mean_divides_a_float64_sum_by_its_count():
    x = np.zeros((6, 5), F32)
    low = lower(lambda x: F.mean(x, axis=1), [TensorMeta(x.shape, F32)], ["x"], [x])
    (reduction,) = low.nodes[:1]
    assert reduction.kind == "reduction" and reduction.combine == "sum" and reduction.acc_dtype == F64
    out = low.outputs[0]
    rec = body(low.nodes[1])
    assert rec.calls == [("true_divide", F64)]
    assert rec.sizes == [5] and (np.dtype(np.int64), F64) in rec.casts
    assert out.dtype == F32


def test_cpp_spells_every_scalar_function_an_op_asks_for():
    from .helpers import unspelled_scalar_functions
    assert not unspelled_scalar_functions(template, CTYPES)


def test_closures_never_hold_backend_text():
    # A lowered value is a function of (handler, index): the same closure feeds any handler.
    x = np.zeros(4, F32)
    low = GraphLowering(trace(lambda x: F.exp(F.negative(x)), [TensorMeta((4,), F32)], ["x"]), [x])
    low.run()
    value = low.nodes[0].value
    assert isinstance(value, Pointwise)
    seen = []

    class Spy(RecordingHandler):
        def call(self, fn, args, dtype, out=None):
            seen.append(fn)
            return super().call(fn, args, dtype, out)

    value.load(Spy(), [Affine.var("i")])
    assert seen == ["negative", "exp"]
