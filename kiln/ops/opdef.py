"""What an op is, how it is called, and the table of declared ops (``REGISTRY``, ``F``).

An :class:`Op` is declared once, with everything every stage needs side by side:

- ``impl``    the eager NumPy kernel (also the reference for every backend);
- ``inputs``  the names of its array-valued arguments (passed positionally);
- ``params``  its static, hashable parameters with defaults (passed by keyword);
- ``meta``    its shape/dtype rule over :class:`~kiln.ops.meta.TensorMeta` values
              (``None``: derive it by running ``impl`` on zero-stride fake arrays);
- ``vjp``     its derivative rule, written with other ops (``F.multiply(g, F.cos(x))``),
              so the same formula runs eagerly on arrays and records into graphs;
- ``category`` what lowering will need (pointwise, reduction, view, ...).

Calling an op runs it: ``F.sin(np.ones(3))`` returns an array. If any input is a traced
value whose type defines ``__kiln_op__`` (a graph proxy, for example), the call is handed
to that hook instead, which is how derivative rules become graph nodes without this
package knowing anything about graphs.

The NumPy spellings that find these ops live in kiln/ops/registry.py, which imports this
module and re-exports its names (``from .registry import Category, F, declare`` works).

    >>> import numpy as np
    >>> from kiln.ops import F
    >>> F.add(np.ones(2), 1.0)
    array([2., 2.])
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ..errors import NoDerivative, NoOpError
from .leaves import _find_hook, is_complex_like, is_float_like


class Category(str, enum.Enum):
    POINTWISE = "pointwise"
    REDUCTION = "reduction"
    SCAN = "scan"
    VIEW = "view"
    GATHER = "gather"
    JOIN = "join"
    CREATION = "creation"
    EXTERN = "extern"
    MUTATION = "mutation"

    def __str__(self) -> str:
        return self.value


_NO_DEFAULT = object()


@dataclass(eq=False)
class Op:
    name: str
    category: Category
    impl: Callable[..., Any]
    inputs: tuple[str, ...] = ("x",)
    params: dict[str, Any] = field(default_factory=dict)
    meta: Callable[..., Any] | None = None
    vjp: Callable[..., Any] | None = None
    doc: str = ""
    # The output shape depends on input values (boolean masks): eager only, never captured.
    data_dependent: bool = False
    # For a data-dependent op that runs inside graphs: ``unbacked(*inputs, **params) ->
    # (count, dims)``. ``dims`` says, per output dim, ``"u"`` (known only once the op ran:
    # an "unbacked" size symbol, kiln/lowering/sizes.py), ``(i, d)`` (dim d of input i) or
    # None (static, as the shape rule says); ``count`` = ``(what, input, *params)`` names
    # what the "u" size counts, ``input`` a position or a path into a tuple input
    # (``("nonzero", (1, 0))``: the true values of x[mask]'s mask), so ops counting the
    # same thing of the same value share one size (``x[m]`` and ``np.nonzero(m)``).
    # The shape rule gives the example ("hint") size of those dims. None: no graph op
    # (capture breaks the graph).
    unbacked: Callable[..., Any] | None = None
    # Every value of the result is below this int, given the inputs and params (argmin's
    # indices: below the reduced length), or None: np.bincount(d.argmin(1), minlength=k)
    # then has exactly k entries, known before it runs (kiln/ops/selection.py).
    values_below: Callable[..., Any] | None = None
    # ``x[mask]`` with a mask of x's shape: capture defers the selection while only
    # elementwise ops use it, so ``x[m] = f(x[m])`` becomes a masked write (no sizes).
    masked_selection: bool = False
    # Indices of inputs this op writes to (mutation ops); they return None like NumPy.
    mutates: tuple[int, ...] = ()
    # For a mutation op: the name of the functional op computing the new value of input 0.
    functional: str | None = None
    # For a mutation op: ``stores_own_view(*args) -> bool`` on graph arguments, True when
    # the value written is input 0's own view of the place written (``a[i] = a[i]``, the
    # store that ends ``a[i] += v``). Where that view shares memory with input 0, the
    # write changes nothing and functionalization drops it, as NumPy skips a copy from
    # an array onto the same memory.
    stores_own_view: Callable[..., bool] | None = None
    # Raises for some input *values* (an out-of-range index, a singular matrix): never
    # removed as dead code, so an unused result still raises as in NumPy.
    may_raise: bool = False
    # ``raises_for(*args) -> bool``: whether a call with these graph arguments may raise
    # for some input values although the op in general does not (``x[i]`` with ``i`` a
    # run-time int: NumPy's IndexError); such calls count as ``may_raise`` (:meth:`raises`).
    raises_for: Callable[..., bool] | None = None
    # ``raises_for`` also takes the call's params as keywords (a draw's ``size``, ``static``)
    raises_for_params: bool = False
    # The output may share memory with input 0 (``astype(copy=False)``): stages treat it
    # like a view and check real aliasing. Every VIEW op may alias.
    aliases: bool = False
    # The ``x.flags`` flag (``"c_contiguous"``) with which NumPy's result is input 0 itself,
    # and without which it is a new array (np.ascontiguousarray): capture answers ``y is x``
    # of an argument x from x's layout, guarded, rather than breaking the graph.
    itself_when: str | None = None
    # ``opaque_view(*inputs, **params)``: True when NumPy returns a view of an input that
    # the stages cannot follow (a one-operand einsum that sums nothing); capture runs such
    # a call as Python, so writes through the view reach the input as in NumPy.
    opaque_view: Callable[..., bool] | None = None
    # The same result computed by writing into input 0, which the caller gives up (the
    # functional scatters): a backend uses it when nothing reads input 0 afterwards.
    inplace_impl: Callable[..., Any] | None = None
    # The ndarray method that computes the op on an array (``"astype"``): a NumPy run of its
    # node calls ``x.<method>(**params)`` from the user's line, where NumPy's C code warns
    # ("invalid value encountered in cast"), not from the impl's own line.
    numpy_method: str | None = None
    # ``impl_at(file, line[, fn])``: the impl (or ``fn``, its inplace_impl), its NumPy call
    # (the one that may warn: a scalar's ``a / b``, a scatter's ``np.add.at``) made from a
    # frame at the user's line (kiln/ops/value_warnings.py ufunc_at), for an impl that is
    # kiln's own Python: NumPy's C code warns at the Python frame calling it, the impl's.
    impl_at: Callable[[str, int], Callable[..., Any]] | None = None
    # ``inplace_inputs(args, params) -> values``: the inputs ``inplace_impl`` may write over, each
    # one the caller must give up (None: input 0).
    # ``inplace_atomic(args) -> bool``: True when ``inplace_impl`` on these arguments either
    # raises before it writes anything or does not raise (NumPy checks a scatter's indices,
    # shapes and a Python value's conversion first) and writing the same value twice leaves
    # what writing it once does: a backend may then give it the caller's array itself.
    inplace_atomic: Callable[..., bool] | None = None
    inplace_inputs: Callable[..., Any] | None = None
    # ``inplace_overlap(args) -> bool``: True when ``inplace_impl`` on these arguments reads
    # its value (the last input) whole before it writes input 0 wherever the two overlap,
    # as the functional form does (NumPy's ``x[1:] = x[:-1]`` copies the value first): a
    # backend may write in place into an array that the value is a view of.
    inplace_overlap: Callable[..., bool] | None = None
    # The name of a param whose value carries the call already bound to it (a loop's
    # body): a generated wrapper calls ``value.call(*inputs)`` (``value.call_owned`` for
    # ``inplace_impl``), which gives what ``impl(*inputs, **params)`` gives, without the
    # generic path's Python frames (a loop's compiled runner, called straight).
    call_param: str | None = None
    # ``python_us(node, per_op_us) -> float | None``: what running this call as Python
    # costs when it is more than one NumPy call (a loop: trips x body), None when unknown
    # (kiln/runtime/cost.py then compiles the graph); ``per_op_us`` prices one plain op
    # (its ``before_break`` attribute True: the graph is priced before a graph break).
    python_us: Callable[..., Any] | None = None
    # ``compiled_us(node, body_us) -> float | None``: what the compiled call costs when it
    # is more than one native call (a graph loop: trips x (the driver's step + the body's
    # compiled ops, priced by ``body_us(graph)``)), None when unknown.
    compiled_us: Callable[..., Any] | None = None
    # How lowering turns a call into loop-level code (see kiln/lowering/): for pointwise ops
    # a dict of per-backend expression templates; None means "an extern call of impl".
    lowering: Any = None
    # ``spread_impl(**params) -> callable``: what a generated wrapper may call with the
    # op's one input, a tuple, spread instead of ``impl(input, **params)`` (scalar_fn:
    # the operator itself, ``_scalar_fn_0(k, 1)`` with ``_scalar_fn_0 = operator.add``).
    spread_impl: Callable[..., Any] | None = None
    # ``check_impl(**params) -> callable``: for an op that only checks values (a warning
    # NumPy gives for some values: kiln/ops/value_warnings.py) and whose result nothing
    # reads, what a generated wrapper calls with its inputs alone; the wrapper run in C
    # (runtime/fast_call.c) calls it after the kernels too, so the check costs one call.
    check_impl: Callable[..., Any] | None = None
    # ``impl(x, index)`` is ``x[index]`` and ``inplace_impl(x, index, value)`` is
    # ``x[index] = value``: a generated wrapper writes the subscript itself rather than
    # calling the op's Python function (the views and writes of an unrolled loop's steps).
    subscript: bool = False
    # ``impl(x, **{item_param: k})`` is ``x[k]`` for an int ``k`` (a loop's k-th result):
    # a generated wrapper prints the subscript rather than a call with a keyword.
    item_param: str | None = None
    # The result is always a new array, never a view of an input (matmul, linalg solves,
    # the functional scatters): a backend may write another value into its memory.
    fresh_result: bool = False
    # ``out_impl(*inputs, out=array, **params)``: the same result written into ``out``, a
    # C-contiguous array of the result's shape and dtype that no input overlaps (NumPy's
    # own ``out=``, no temporary), returning ``out``: a backend calls it where the result
    # only becomes the caller's array (``np.matmul(a, b, out=c)``, kiln/lowering/inplace.py).
    out_impl: Callable[..., Any] | None = None
    # A VIEW-like op that returns a view for some memory layouts and a copy for others
    # (reshape of a transposed array copies): aot keys its plan by the input's layout.
    layout_dependent: bool = False
    # For a VIEW op that does not cover every element of its base:
    # ``put_back(base, new, *rest, **params)`` writes ``new`` into the view's elements of
    # ``base`` (functionalization of writes through the view), written with other ops.
    put_back: Callable[..., Any] | None = None
    # VIEW ops: ``layout(window, *inputs, **params) -> Window | None``, the output's
    # (shape, strides, offset) from the input's, computed without touching memory
    # (kiln/ops/layout.py); None from the rule: NumPy would copy or raise.
    layout: Callable[..., Any] | None = None
    # The position of an input that is a basic index whose slice bounds may be run-time
    # Python ints (``x[:n]``, ``n`` an argument): capture keeps such bounds as graph inputs
    # and the sliced lengths become size symbols (kiln/lowering/sizes.py, kind "int"), so
    # one build serves every ``n``. None: bounds are specialized (guarded by value).
    runtime_slices: int | None = None
    # ``runtime_sizes(**params) -> {param: dim}``: params that are sizes of the result
    # (``np.zeros(shape)``: {"shape": (0, 1, ...)}, ``np.arange(stop)``: {"stop": 0},
    # ``np.eye(n)``: {"N": (0, 1)}), a param naming the result's dim it is (or dims; a
    # tuple param a dim per entry). Capture writes a
    # dynamic input dim given there as an ``ir.SizeRef`` instead of pinning it
    # (kiln/capture/opcall_dims.py ``creation_sizes``): one build serves every size.
    runtime_sizes: Callable[..., dict] | None = None
    # NumPy's result is a read-only view (broadcast_to, diagonal): a write into it, or into
    # a view of it, raises NumPy's error, so capture runs such a write as Python.
    read_only: bool = False
    # NumPy's result is always a new view of input 0: never input 0 itself (as
    # ``np.squeeze`` of nothing to squeeze and ``np.broadcast_arrays`` of one shape are),
    # never a copy (``reshape``), nor a view of a helper object (``sliding_window_view``).
    # Its ``.base`` is then input 0's owner (NumPy collapses a chain of views to the array
    # that owns the memory), which capture answers (kiln/capture/array_base.py).
    view_of_input: bool = False
    # ``functional_params(params) -> params``: the params of this op in a functionalized
    # graph, where it must not write anything the caller sees (a loop node's body stops
    # writing partial results back on an error: kiln/ops/loops.py).
    functional_params: Callable[..., Any] | None = None
    # ``print_python(node, consts, format_value, python_code) -> lines``: how the printed
    # graph spells a call when one line cannot (a loop node prints as a Python for loop).
    print_python: Callable[..., Any] | None = None
    # The derivative rule holds for complex values too, in the conjugate (Wirtinger)
    # convention PyTorch uses: for a real loss L, the gradient of z = x + iy is
    # dL/dx + i dL/dy (so a holomorphic f's rule multiplies by conj(f'(z))), on the eager
    # tape and in compiled backward graphs. Ops without it raise AutogradError where a
    # gradient would flow through complex values. A callable ``complex_grad(params) ->
    # bool`` where it depends on the parameters (scalar_binary: its ufunc's): ask
    # :meth:`complex_rule`.
    complex_grad: Any = False
    # The derivative rule raises NoDerivative for some parameters (quantile's methods,
    # interp's period): the eager tape notes the user's line of such a call, as of an op
    # without a rule, for the error (compiled graphs have it in the node's meta).
    vjp_refuses: bool = False
    # ``state(params) -> generator``: the op reads and advances a random generator's
    # hidden state (kiln/ops/random.py: NumPy's global RandomState, or a Generator named
    # in its params). Such a call is never merged (CSE), removed (DCE), recomputed or run
    # twice, and its kernel never runs on stand-ins; where a graph reruns as Python after
    # it ran, the generators' states are put back first (kiln/ops/random.py snapshot).
    state: Callable[[dict], Any] | None = None
    # ``numpy_layout(*inputs, **params) -> bool``: the result depends on input 0's memory
    # layout as NumPy holds it (``x.view(dtype)`` to another itemsize regroups the bytes
    # of the last axis, which must be contiguous). Capture takes such a call only where
    # that layout is known: an argument not yet written in the graph (its last axis'
    # contiguity guarded); elsewhere the call runs as Python.
    numpy_layout: Callable[..., bool] | None = None
    # ``result_order(x_shape, x_strides, *rest, **params) -> axes | None``: the memory
    # order (slowest axis first) of the new array NumPy returns, from input 0's layout
    # (advanced indexing's result is not C-ordered): a kernel reading the result reads it
    # as it is and the caller gets NumPy's strides. None: C order.
    result_order: Callable[..., Any] | None = None
    # out= must be C-contiguous, of the result's dtype and shape (np.dot; capture checks it)
    out_c_order: bool = False
    # A sequence-valued input (``concatenate``'s arrays) is named with a leading '*'.

    def raises(self, args: tuple, kwargs: dict | None = None) -> bool:
        """May a call with graph arguments ``args`` (and params ``kwargs``) raise for some
        input values? (Without the params an op whose ``raises_for`` needs them may.)"""
        if self.may_raise:
            return True
        if self.raises_for is None:
            return False
        if self.raises_for_params:
            return kwargs is None or bool(self.raises_for(*args, **kwargs))
        return bool(self.raises_for(*args))

    def __post_init__(self) -> None:
        self.category = Category(self.category)

    # -- calling -------------------------------------------------------------------------
    def bind_params(self, params: dict[str, Any]) -> dict[str, Any]:
        """Fill defaults and reject unknown parameters."""
        out = {}
        for key, value in params.items():
            if key not in self.params:
                raise TypeError(f"kiln op '{self.name}' got an unexpected parameter '{key}' "
                                f"(it takes {sorted(self.params) or 'no parameters'})")
            out[key] = value
        for key, default in self.params.items():
            if key not in out:
                if default is _NO_DEFAULT:
                    raise TypeError(f"kiln op '{self.name}' needs the parameter '{key}'")
                out[key] = default
        return out

    def __call__(self, *inputs: Any, **params: Any) -> Any:
        if len(inputs) != len(self.inputs):
            raise TypeError(f"kiln op '{self.name}' takes {len(self.inputs)} inputs "
                            f"({', '.join(self.inputs)}), got {len(inputs)}")
        params = self.bind_params(params)
        hook = _find_hook(inputs)
        if hook is not None:
            return hook(self, inputs, params)
        return self.impl(*inputs, **params)

    @property
    def may_alias(self) -> bool:
        """Can the output be a view of input 0 (as NumPy decides at run time)?"""
        return self.aliases or self.category == Category.VIEW

    @property
    def differentiable(self) -> bool:
        return self.vjp is not None

    def complex_rule(self, params: dict) -> bool:
        """Whether this call's derivative rule holds for complex values (``complex_grad``)."""
        rule = self.complex_grad
        return bool(rule(params) if callable(rule) else rule)

    def backward(self, g: Any, out: Any, inputs: tuple, params: dict) -> tuple:
        """Cotangents for each input, reduced to its shape and cast to its dtype.

        Inputs that cannot carry a gradient (Python scalars, integer or bool arrays,
        index structures) get ``None``.
        """
        if self.vjp is None:
            raise NoDerivative(f"Differentiation rule for '{self.name}' not implemented; "
                               f"detach the value (x.detach()) or compute it under kiln.no_grad()")
        # Rules compute masked-out branches (log of a negative that `where` discards):
        # like compiled kernels, backward never emits NumPy's floating-point warnings.
        with np.errstate(all="ignore"):
            grads = self.vjp(g, out, *inputs, **params)
        if not isinstance(grads, (tuple, list)) or len(grads) != len(inputs):
            raise AssertionError(f"vjp of '{self.name}' returned {type(grads).__name__} "
                                 f"of wrong length for {len(inputs)} inputs")
        fitted = []
        for grad, inp, name in zip(grads, inputs, self.inputs):
            if name.startswith("*"):
                fitted.append(tuple(fit_grad(gi, xi) for gi, xi in zip(grad, inp))
                              if grad is not None else tuple(None for _ in inp))
            else:
                fitted.append(fit_grad(grad, inp))
        return tuple(fitted)

    def __repr__(self) -> str:
        return f"<kiln op {self.name} ({self.category})>"


def fit_grad(grad: Any, like: Any) -> Any:
    """Reduce ``grad`` over broadcast dimensions to ``like``'s shape and cast to its dtype
    (a real input of a complex result gets the real part: dL/dx)."""
    if grad is None or not (is_float_like(like) or is_complex_like(like)):
        return None
    shape = tuple(like.shape)
    if tuple(np.shape(grad)) != shape:
        grad = REGISTRY["sum_to"](grad, shape=shape)
    if np.dtype(grad.dtype).kind == "c" and np.dtype(like.dtype).kind != "c":
        grad = REGISTRY["real"](grad)
    if np.dtype(grad.dtype) != np.dtype(like.dtype):
        grad = REGISTRY["astype"](grad, dtype=np.dtype(like.dtype))
    return grad


# ----------------------------------------------------------------------------------------
# The registry of ops.

REGISTRY: dict[str, Op] = {}


def register(op: Op) -> Op:
    if op.name in REGISTRY:
        raise ValueError(f"kiln op '{op.name}' is declared twice")
    REGISTRY[op.name] = op
    return op


def declare(name: str, category: Category | str, impl: Callable, **kwargs: Any) -> Op:
    """Declare and register an op; see :class:`Op` for the fields."""
    return register(Op(name=name, category=Category(category), impl=impl, **kwargs))


def get_op(name: str) -> Op:
    try:
        return REGISTRY[name]
    except KeyError:
        raise NoOpError(f"kiln has no op named '{name}'") from None


class _OpNamespace:
    """``F.sin`` is the op named 'sin'; derivative rules are written with it."""

    def __getattr__(self, name: str) -> Op:
        try:
            return REGISTRY[name]
        except KeyError:
            raise AttributeError(f"kiln has no op named '{name}'") from None

    def __dir__(self) -> list[str]:
        return sorted(REGISTRY)


F = _OpNamespace()
