"""The min-cut partitioner: recompute where it saves bytes, save where recomputing would
cost more, never recompute matmul; the MLP keeps no more than a hand-written backward;
the aot log reports what is saved."""
from __future__ import annotations

import numpy as np

import kiln
from kiln.aot import aot_eager, build_joint, min_cut_partition
from kiln.ir import trace
from kiln.ops import F, TensorMeta

from .test_training import mlp_loss_ops


def M(*shape, dtype=np.float64):
    return TensorMeta(shape, dtype)


def _partition(fn, metas, requires):
    return min_cut_partition(build_joint(trace(fn, metas), requires))


def test_pointwise_chain_recomputation_wins():
    # The backward reads exp(x), cos(exp(x)) (and x): saving one array and recomputing
    # the rest beats saving every intermediate.
    part = _partition(lambda x: F.sum(F.sin(F.cos(F.exp(x)))), [M(1000)], [True])
    assert part.saved_bytes == 8000
    assert part.save_all_bytes == 3 * 8000
    assert part.recomputed, "some pointwise op must be recomputed in the backward"
    assert len(part.saved) == 1


def test_reduction_of_a_big_input_saving_wins():
    # s = sum(exp(x), axis=1) is small; recomputing it would need the big x in the backward.
    def fn(x, w):
        s = F.sum(F.exp(x), axis=(1,))
        return F.sum(F.sin(F.multiply(s, w)))
    part = _partition(fn, [M(200, 50), M(200)], [False, True])
    names = [n.name for n in part.saved]
    assert "x" not in names and "exp" not in names
    assert part.saved_bytes <= 2 * 200 * 8 + 16
    assert "sum" not in part.recomputed


def test_matmul_is_never_recomputed():
    # tanh's rule reads its output; saving tanh(x@w) or x@w costs the same bytes, but the
    # matmul itself must not run again in the backward.
    part = _partition(lambda x, w: F.sum(F.tanh(F.matmul(x, w))), [M(16, 8), M(8, 4)],
                      [True, True])
    assert "matmul" not in part.recomputed
    assert part.backward.op_names().count("matmul") == 2   # only the two gradient products


def test_mlp_saves_no_more_than_a_hand_written_backward():
    B, D, H, C = 64, 30, 20, 10
    metas = [M(B, D), M(B, C), M(D, H), M(H), M(H, C), M(C)]
    part = _partition(mlp_loss_ops, metas, [False, False, True, True, True, True])
    f8 = 8
    # hand-written: x (for dW1), the relu output a (for dW2; its mask is a > 0), W2 (for
    # da), the softmax probabilities and the labels
    hand = B * D * f8 + B * H * f8 + H * C * f8 + B * C * f8 + B * C * f8
    assert part.saved_bytes <= hand, part.report()
    assert part.saved_bytes < part.save_all_bytes
    assert "matmul" not in part.recomputed


def test_aot_log_reports_graphs_and_saved_bytes(capsys):
    kiln.set_logs("aot")
    try:
        g = trace(lambda x: F.sum(F.sin(F.cos(F.exp(x)))), [M(100)], ["x"])
        f = aot_eager(g, [np.zeros(100)])
        (loss,) = f(kiln.tensor(np.linspace(0, 1, 100), requires_grad=True))
    finally:
        kiln.set_logs()
    err = capsys.readouterr().err
    assert "[kiln:aot]" in err and "joint graph" in err and "backward graph" in err
    assert "saved for backward: exp float64[100]" in err
    assert "saved bytes: 800 (33% of saving every intermediate: 2400 bytes)" in err
    assert capsys.readouterr().out == ""
