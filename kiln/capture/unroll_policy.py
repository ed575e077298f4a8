"""When a loop that could be a graph loop node unrolls instead (kiln/capture/graph_loop.py
and the range form with a counter, graph_breaks.py): a short body whose trips fuse when
unrolled, while its trip count stays one value between calls."""
from __future__ import annotations

from ..ops import Category
from .loops import LoopFallback
from .variables.arrays import SymScalarVariable
from .variables.base import ConstantVariable


def fuses_unrolled(calls: list, count: int, any_ops: bool = False) -> bool:
    """An elementwise recurrence (mandelbrot's ``z = z * z + c``; ``count += inside`` keeps
    count's layout, a relayout that costs nothing compiled): unrolled, every iteration
    fuses into one kernel that keeps the iterates in registers, which beats a kernel per
    iteration (a run-time count is specialized, as before); past half the unrolling
    budget, compile time wins. (A carried number's ``scalar_fn``, ``t = t + h``, is
    pointwise work once unrolled: it counts, it does not decide.) ``any_ops``: a body that
    reads the loop variable, which unrolled before whatever its ops (graph_breaks)."""
    from .translator import MAX_UNROLLED_OPS
    arrays = [n for n in calls if n.op.name != "scalar_fn"]
    return bool(arrays) and count * len(calls) <= MAX_UNROLLED_OPS // 2 and (any_ops or all(
        n.op.category == Category.POINTWISE or n.op.name == "relayout" for n in arrays))


def refuse_unrolled(tx, calls: list, bounds: tuple, any_ops: bool = False) -> None:
    """LoopFallback where the loop ``range(*bounds)`` unrolls (:func:`fuses_unrolled`);
    not where its count is a run-time int that took another value between calls
    (``n_steps`` an argument: ``DynamicSpec.is_dynamic_count``), which unrolled would
    compile again for every value: the loop node runs any count."""
    dynamic = tx.output.dynamic
    if any(isinstance(b, SymScalarVariable) and dynamic.is_dynamic_count(b.leaves) for b in bounds):
        tx.output.counts_at_run_time = True
        return
    if fuses_unrolled(calls, len(range(*(b.value if isinstance(b, ConstantVariable) else b.example
                                         for b in bounds))), any_ops):
        raise LoopFallback("an elementwise body: unrolled, its iterations fuse into one kernel"
                           if not any_ops else "a short body reading the loop variable: unrolled, "
                           "its trips fuse, until a call brings another trip count")
