"""Values lowering computes earlier than fusion would, so kernels keep NumPy's order and
its warnings: a mixin of :class:`~kiln.lowering.lower.GraphLowering`, called from its
``_run`` before each node.

- before a call that may raise, the closures of earlier calls that may warn
  (:meth:`EarlyRealization._realize_warning`);
- the operands np.where picks from, when they may warn (:meth:`_store_picked`);
- the value a var or std reads, where a kernel computes it (:meth:`_store_told_input`);
- before the first write into a caller's array, the closures that still read its old
  value (:meth:`_donated_writes`, :meth:`_realize_old_reads`).
"""
from __future__ import annotations

import numpy as np

from ..ir import Node
from ..ops import Category
from .loop_ir import BufferValue, Pointwise
from .nodes import buffers_read


def breaks_order(node: Node) -> bool:
    """Must the warnings of earlier calls come before ``node`` runs: it is an extern call
    that may raise (np.linalg.inv; scheduler.py ``_keeps_order`` keeps its place)? (Not
    a kernel's op that may raise, an index out of range, nor an extern that only warns:
    realizing what may warn before each of those split the stages of loops of sums.)"""
    return node.op.category == Category.EXTERN and node.op.raises(node.args, node.kwargs) and \
        node.op.check_impl is None   # (a check the wrapper runs after the kernels: warn_if_any)


class EarlyRealization:
    """The early realizations of :class:`GraphLowering` (see the module doc)."""

    def _realize_warning(self, warning: dict) -> None:
        """Before a call that may raise (or an extern that may warn): the closures of
        earlier calls that may warn, computed now, not in a later kernel that fuses them
        (``y = np.log(x); m = np.linalg.inv(a); y.sum() + m``: NumPy warns of the log,
        then raises). Each is realized where no later call read it yet (one that did is
        realized itself, computing it once), and read as its buffer from then on."""
        for node in warning:
            if not any(u in self.env for u in node.users):
                self.env[node] = self.realize(self.env[node])
        warning.clear()

    def _store_picked(self, node: Node, warning: dict) -> None:
        """The operands a select picks each element from (``op.lowering["picks"]``:
        np.where's x and y) that compute a call that may warn: stored (``sinks``), so the
        kernel computes them at every element, as NumPy does. Fused into the select, GCC
        computes such code only in the lanes the select keeps (AVX-512's masked vdivpd):
        ``np.where(z > 0, 1 / z, 0)`` with zeros in z gave no "divide by zero" warning.
        (Not a composite's own step, ``meta["step"]``: np.nanvar's ``x - mean`` where x is
        no NaN, which NumPy computes under its mask; stored, its row sums' stage lost
        NumPy's pairwise order.) Only operands that selects alone read: one that anything
        else reads (mandelbrot's ``z = z * z + c``, read by ``np.abs(z) <= 2.0`` and
        picked by ``np.where(inside, z, 2.0)``) is computed at every element already, and
        storing it cost a buffer written at each of its iterations."""
        for i in _picks(node):
            arg = node.args[i] if i < len(node.args) else None
            if isinstance(arg, Node) and arg in warning and not arg.meta.get("step") \
                    and all(any(u.args[j] is arg for j in _picks(u)) for u in arg.users):
                self.env[arg] = self.realize(self.env[arg])
                self.sinks.add(self.env[arg].buf.name)

    def _store_told_input(self, node: Node, warning: dict, worth: int) -> None:
        """The value a var or std reads (ops/fp_errors.py ``NUMPY_TELLS``) where a kernel
        would compute it inside the reduction, computing a call that may warn (``warning``)
        at a cost over ``worth`` (lower.py ``REALIZE_COST_SHARED``: var's two passes
        compute it twice, ``np.log(y).std()``): stored (``sinks``), so it is computed once
        and the kernel's argument holds it after the launch, where a raised flag runs
        NumPy's op on it for NumPy's warnings of var's steps (runtime/fpwarn.py; computed
        in the reduction, "invalid value encountered in subtract" of an inf was never
        said). A value that warns of nothing or costs little (``np.abs(y).var()``,
        ``(2 * y).var()``) stays in the reduction: stored, a column var of 1e6 float64
        took 3-5x its time. Not a derivative rule's (``quiet``: NumPy runs those under
        errstate(all='ignore'))."""
        arg = node.args[0] if node.args else None
        value = self.env.get(arg) if isinstance(arg, Node) else None
        if isinstance(value, Pointwise) and arg in warning and value.cost > worth \
                and not node.meta.get("quiet") and not node.meta.get("errstate"):
            self.env[arg] = self.realize(value)
            self.sinks.add(self.env[arg].buf.name)

    def _donated_writes(self) -> dict[Node, Node]:
        """The first of the calls computing the new value of a caller's array from that
        array (the functional ``x[i] = v``: ``index_put(x, ...)``, donated to ``x``; for
        ``x[0] = 1; x[1] = 2`` a chain of scatters, ``Op.inplace_impl``): call -> the
        placeholder. A wrapper may write those in place (memory.py) only where nothing
        after the first write reads the old ``x``."""
        outputs = next((n.args[0] for n in self.graph.nodes if n.kind == "output"), ())
        placeholders = self.graph.placeholders
        found = {}
        for k, i in self.donated().items():
            node = outputs[k] if k < len(outputs) else None
            while isinstance(node, Node) and node.kind == "call" and node.args \
                    and isinstance(node.args[0], Node) and node.args[0].kind == "call" \
                    and node.args[0].op.inplace_impl is not None:
                node = node.args[0]
            if isinstance(node, Node) and node.kind == "call" and node.args \
                    and node.args[0] is placeholders[i]:
                found[node] = placeholders[i]
        return found

    def _realize_old_reads(self, write: Node, x: Node) -> None:
        """Before ``write`` (see :meth:`_donated_writes`): the closures reading the old
        ``x`` that calls after it still read, computed now into buffers no larger than
        ``x``. Fused into a later kernel they kept the old ``x`` alive past the write,
        which then copied all of ``x`` (``y = x * 2.0; x[0] = 5.0; return y + x``: a
        copy of x and the epilogue's copy back, 1.5x NumPy's time on 4096 elements);
        NumPy computes ``y`` first too."""
        old = self.env.get(x)
        if not isinstance(old, BufferValue):
            return
        size = self.sizes.hint(old.buf.shape)
        for n, value in list(self.env.items()):
            if n.kind != "call" or not isinstance(value, Pointwise) \
                    or all(u in self.env or u is write for u in n.users) \
                    or np.prod(self.sizes.hint(value.shape)) > np.prod(size) \
                    or old.buf.name not in buffers_read(value):
                continue
            self.env[n] = self.realize(value)


def _picks(node: Node) -> tuple:
    """The argument positions a select call picks elements from (``op.lowering["picks"]``:
    np.where's x and y); () for other nodes."""
    rule = node.op.lowering if node.kind == "call" and isinstance(node.op.lowering, dict) else {}
    return tuple(j for j in rule.get("picks", ()) if j < len(node.args))
