"""Symbolic sizes: the exact polynomial class, duck sizing, and lowering over symbols."""
import numpy as np
import pytest

from kiln.ir import trace
from kiln.lowering.handler import RecordingHandler
from kiln.lowering.loop_ir import Affine
from kiln.lowering.lower import GraphLowering
from kiln.lowering.scheduler import Kernel, record, schedule
from kiln.lowering.sizes import Size, SymbolTable, Undecidable
from kiln.ops import F, TensorMeta

s0, s1 = Size.symbol("s0"), Size.symbol("s1")


def test_arithmetic_is_exact_and_canonical():
    assert s0 * s1 == s1 * s0 and hash(s0 * s1) == hash(s1 * s0)
    assert (s0 + 1) * (s0 - 1) == s0 * s0 - 1
    assert s0 * s1 - s1 * s0 == 0 and isinstance(s0 - s0 + 3, int)
    assert str(2 * s0 * s1 - s1 + 4) == "2*s0*s1 - s1 + 4"
    assert (6 * s0 * s1).ratio(s0 * s1) == 6 and (s0 + 1).ratio(s0) is None


def test_comparisons_use_the_bound_or_refuse():
    assert s0 > 1 and s0 >= 2 and s0 * s1 > s0 and not (s0 == 1) and s0 != 2
    assert (s0 - 1 > 0) and not (1 - s0 >= 0)
    with pytest.raises(Undecidable):
        s0 > s1
    with pytest.raises(Undecidable):
        s0 - 5 >= 0
    with pytest.raises(Undecidable):
        range(s0)


def test_duck_sizing_shares_symbols_across_inputs_only():
    t = SymbolTable()
    a, b = t.input_dim("x", 0, 2, 4), t.input_dim("x", 1, 2, 4)  # a square example
    c = t.input_dim("bias", 0, 1, 4)  # a row of x: the rightmost dim of the same size
    assert a != b and c == b and t.equal == [("bias.shape[0]", "s1")]
    assert [s.source for s in t] == ["x.shape[0]", "x.shape[1]"]


def lowered(fn, metas, names, inputs, dims):
    g = trace(fn, metas, names)
    for p, d in zip(g.placeholders, dims):
        p.meta["dynamic_dims"] = d
    return GraphLowering(g, inputs, dynamic=True).run()


def test_two_dynamic_arguments_meet_in_one_op():
    x, b = np.zeros((6, 10), np.float32), np.zeros(10, np.float32)
    low = lowered(lambda x, b: F.multiply(F.sin(x), b), [TensorMeta(x.shape, x.dtype), TensorMeta(b.shape, b.dtype)],
                  ["x", "b"], [x, b], [(0, 1), (0,)])
    (kernel,) = [k for k in schedule(low) if isinstance(k, Kernel)]
    assert kernel.frame.shape == (s0, s1)
    rec = record(kernel.members[0][0], "row", kernel.frame)
    assert [(buf.name, ix) for buf, ix in rec.loads] == [
        ("x", Affine(0, {"x0": s1, "x1": 1})), ("b", Affine(0, {"x1": 1}))]


def test_reductions_count_symbolic_elements():
    x = np.zeros((6, 10))
    low = lowered(lambda x: F.mean(x, axis=0), [TensorMeta(x.shape, x.dtype)], ["x"], [x], [(0, 1)])
    rec = RecordingHandler()
    low.nodes[1].value.load(rec, [Affine.var("i")])
    assert rec.sizes == [s0] and low.outputs[0].shape == (s1,)


def test_a_size_meeting_another_number_specializes():
    x, y = np.zeros((6, 10)), np.zeros((6, 10))
    with pytest.raises(Undecidable):  # y's dims are static: 10 and s1 cannot be one dim
        lowered(lambda x, y: F.add(x, y), [TensorMeta(x.shape, x.dtype)] * 2, ["x", "y"], [x, y], [(0, 1), ()])


def test_lowerings_in_two_threads_do_not_share_state():
    # Decompositions (copy_into here) lower through "the current lowering": per thread.
    import threading
    x = np.zeros((4, 5))
    g = trace(lambda d, s: F.copy_into(d, s, True), [TensorMeta(x.shape, x.dtype)] * 2, ["d", "s"])
    errors, counts = [], []

    def work():
        try:
            for _ in range(20):
                counts.append(len(GraphLowering(g, [x, x]).run().nodes))
        except Exception as e:  # pragma: no cover - the failure being tested for
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(set(counts)) == 1 and len(counts) == 80


def test_views_of_dynamic_dims_stay_symbolic():
    from kiln.ops.layout import Window, getitem, reshape
    w = Window((s0, s1), (s1, 1), 0)
    assert getitem(w, (slice(None), 0)) == Window((s0,), (s1,), 0)
    assert getitem(w, (-1,)) == Window((s1,), (1,), (s0 - 1) * s1)
    assert reshape(w, (-1,)) == Window((s0 * s1,), (1,), 0)
    assert reshape(Window((s0, 5), (5, 1), 0), (-1, 5)) == Window((s0, 5), (5, 1), 0)
    assert reshape(Window((s0, s1), (1, s0), 0), (-1,)) is None  # transposed: NumPy copies
    assert getitem(w, (slice(1, None),)) == Window((s0 - 1, s1), (s1, 1), s1)
    assert getitem(w, (slice(None), slice(-3, None, -1))) == Window((s0, s1 - 2), (s1, -1), s1 - 3)
    assert getitem(w, (slice(None, None, 2),)) is None  # ceil(s0 / 2): not a polynomial
    with pytest.raises(Undecidable):   # outside a lowering: no guard to record
        getitem(w, (slice(None, 10),))
    table = SymbolTable()
    t0 = table.input_dim("x", 0, 1, 12)
    with table.guarding():
        assert getitem(Window((t0,), (1,), 0), (slice(None, 10),)) == Window((10,), (1,), 0)
    assert table.guards == ["-s0 + 10 <= 0"]


def test_squeeze_asks_whether_a_dim_is_one():
    # an input dim is at least 2: squeeze keeps it; an unbacked size (a mask selection's
    # length) may be 1 at run time, where NumPy drops its axis: lowering cannot plan it
    from kiln.ops.layout import Window, squeeze
    u0 = Size.symbol("u0")
    assert squeeze(Window((s0, 1), (1, 1), 0), None) == Window((s0,), (1,), 0)
    assert squeeze(Window((s0, 1), (1, 1), 0), (0,)) is None   # NumPy raises
    for axis in (None, (0,)):
        with pytest.raises(Undecidable):
            squeeze(Window((u0, 1), (1, 1), 0), axis)
