"""The op table: one spec row per op in kiln's inventory, each checked three ways.

(a) eager: the NumPy spelling called on kiln Tensors gives NumPy's values, dtype and shape
    (and NumPy's own exception, type and message, when NumPy raises);
(b) graph: the op traced into a Graph has the meta NumPy's result has, and the reference
    interpreter, the compiled graph and NumPy agree;
(c) gradient: kiln's derivative matches central finite differences of NumPy itself.

A row names the op, how NumPy users spell it (``numpy``; also run on Tensors unless
``tensor`` says otherwise), how to call the op itself (``via_op``, with ``F``), how to
draw its inputs (``case``), which dtypes to try and whether it is differentiable.
"""
from __future__ import annotations

import operator
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import kiln
from kiln.autograd import numerical_grad
from kiln.ir import lint, trace
from kiln.ops import REGISTRY, F, TensorMeta
from kiln.ops.registry import Bound
from kiln.tensor import apply

from .gen import (ALL, BOOL, EXPONENT, F32, F64, FLOATS, GT1, I64, INTEGRAL, NONZERO, NUMERIC,
                  OFF_INT, POS, REAL, SHIFT, SMALL, UNIT, Arg, Case, Ctx, Domain, as_array,
                  assert_same_result, axis_choices, index_arg)

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

FORWARD = settings(max_examples=10, deadline=None, derandomize=True, database=None,
                   suppress_health_check=list(HealthCheck))
GRADIENT = settings(max_examples=8, deadline=None, derandomize=True, database=None,
                    suppress_health_check=list(HealthCheck))


@dataclass(frozen=True)
class Row:
    op: str                               # the op's name in kiln.ops.REGISTRY
    numpy: Callable                       # NumPy spelling / oracle: numpy(*args, **params)
    via_op: Callable                      # the op itself: via_op(*args, **params), with F
    case: Callable[[Ctx], Case]           # draws the arguments
    dtypes: tuple = FLOATS
    grad: bool = False                    # has a derivative rule (checked against the registry)
    tensor: Callable | None = None        # how to call it on Tensors, when not `numpy`
    alts: tuple = ()                      # more NumPy spellings, checked on Tensors too
    mutates: bool = False                 # writes into its first argument
    bad: tuple = ()                       # Cases NumPy rejects: kiln must raise the same
    name: str | None = None               # test id, when an op has several rows

    @property
    def id(self) -> str:
        return self.name or self.op

    @property
    def on_tensors(self) -> Callable:
        return self.tensor or self.numpy


def A(*shape: int, dtype: Any = F64) -> Arg:
    """A fixed contiguous array argument for the error cases."""
    base = np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape) if shape else np.zeros((), dtype)
    return Arg(base, lambda b: b, "C")


# ==========================================================================================
# Case builders

def unary_case(domain: Domain = REAL, grad_domain: Domain | None = None):
    def case(ctx: Ctx) -> Case:
        dom = grad_domain if (ctx.grad and grad_domain is not None) else domain
        return Case([ctx.arg(ctx.shape(), dom)])
    return case


def scalar_of(ctx: Ctx, domain: Domain) -> Any:
    """A Python scalar of the kind matching the dtype under test (NEP 50 weak scalars)."""
    value = domain.sample(ctx.rng, (), ctx.dtype, specials=False)[()]
    return value.item()


def binary_case(dx: Domain = REAL, dy: Domain = REAL, *, scalars: bool = True,
                relate: Callable | None = None, grad_dx: Domain | None = None,
                grad_dy: Domain | None = None):
    """Two broadcast-compatible arrays; sometimes one is a Python scalar (forward only).

    ``relate(ctx, x, y)`` adjusts x given y in gradient cases (keeping x/y off integers for
    floor_divide and remainder); then x has the full broadcast shape.
    """
    def case(ctx: Ctx) -> Case:
        sx, sy = ctx.broadcast_shapes(2)
        domx = grad_dx if (ctx.grad and grad_dx) else dx
        domy = grad_dy if (ctx.grad and grad_dy) else dy
        if ctx.grad and relate is not None:
            sx = np.broadcast_shapes(sx, sy)
        if not ctx.grad and scalars:
            which = ctx.choice(["none", "none", "x", "y"], "scalar")
            if which == "x":
                return Case([scalar_of(ctx, domx), ctx.arg(sy, domy)])
            if which == "y":
                return Case([ctx.arg(sx, domx), scalar_of(ctx, domy)])
        x, y = ctx.arg(sx, domx), ctx.arg(sy, domy)
        if ctx.grad and relate is not None:
            relate(ctx, x, y)
        return Case([x, y])
    return case


def off_integer_quotient(ctx: Ctx, x: Arg, y: Arg) -> None:
    """Make x/y sit between integers, away from floor/remainder's jumps."""
    yb = np.broadcast_to(y.value, x.value.shape)
    k = ctx.rng.integers(-2, 3, size=x.value.shape)
    frac = ctx.rng.choice(np.array([0.2, 0.35, 0.5, 0.65, 0.8]), size=x.value.shape)
    x.value[...] = yb * (k + frac)


def where_case(ctx: Ctx) -> Case:
    sc, sx, sy = ctx.broadcast_shapes(3)
    cond = index_arg(ctx.rng.random(sc) < 0.5, ctx.layout(len(sc)) if not ctx.grad else "C")
    x = ctx.arg(sx)
    y = scalar_of(ctx, REAL) if (not ctx.grad and ctx.boolean("scalar y")) else ctx.arg(sy)
    return Case([cond, x, y])


def clip_case(ctx: Ctx) -> Case:
    sx, slo, shi = ctx.broadcast_shapes(3)
    lo_dom, hi_dom = Domain(-2.0, -0.5, -3, -1), Domain(0.5, 2.0, 1, 3)
    kinds = ["array", "scalar", "none"]
    klo, khi = ctx.choice(kinds, "lo"), ctx.choice(kinds, "hi")
    if ctx.grad and klo == khi == "none":
        klo = "array"
    make = {"array": lambda s, d: ctx.arg(s, d), "scalar": lambda s, d: scalar_of(ctx, d),
            "none": lambda s, d: None}
    return Case([ctx.arg(sx), make[klo](slo, lo_dom), make[khi](shi, hi_dom)])


def astype_case(ctx: Ctx) -> Case:
    target = F64 if ctx.grad else ctx.choice([F32, F64, I64, BOOL, np.dtype(np.int32)], "dtype")
    return Case([ctx.arg(ctx.shape())], {"dtype": target})


def sum_to_case(ctx: Ctx) -> Case:
    (small,) = ctx.broadcast_shapes(1)
    # Grow `small` into a shape it broadcasts to: new leading dims, and 1s widened.
    lead = tuple(ctx.integer(1, 3, "lead") for _ in range(ctx.integer(0, 1, "nlead")))
    widened = tuple(ctx.integer(1, 3, "wide") if d == 1 else d for d in small)
    big = lead + widened
    return Case([ctx.arg(big)], {"shape": small})


def broadcast_to_case(ctx: Ctx) -> Case:
    (small,) = ctx.broadcast_shapes(1)
    lead = tuple(ctx.integer(0, 3, "lead") for _ in range(ctx.integer(0, 1, "nlead")))
    widened = tuple(ctx.integer(0, 3, "wide") if d == 1 else d for d in small)
    return Case([ctx.arg(small)], {"shape": lead + widened})


def sum_to_reference(x: np.ndarray, shape: tuple) -> np.ndarray:
    """sum_to written independently: sum the added leading axes, then the widened ones."""
    x = np.asarray(x)
    lead = x.ndim - len(shape)
    out = np.sum(x, axis=tuple(range(lead))) if lead else x
    for i, d in enumerate(shape):
        if d == 1 and out.shape[i] != 1:
            out = np.sum(out, axis=i, keepdims=True)
    return np.asarray(out, dtype=x.dtype).reshape(shape)


# ==========================================================================================
# Rows: pointwise

def ufunc_row(name: str, case: Callable, dtypes: tuple, grad: bool, alts: tuple = (),
              bad: tuple = ()) -> Row:
    ufunc = getattr(np, name)
    return Row(name, numpy=ufunc, via_op=getattr_op(name), case=case, dtypes=dtypes, grad=grad,
               alts=alts, bad=bad)


def getattr_op(name: str) -> Callable:
    """``F.<name>`` looked up when called, so a row can exist before its op is declared."""
    return lambda *args, **params: getattr(F, name)(*args, **params)


# name: (domain, gradient domain or None, dtypes, differentiable)
UNARY = {
    "negative": (REAL, None, ALL, True),
    "positive": (REAL, None, NUMERIC, True),
    "absolute": (REAL, NONZERO, ALL, True),
    "sign": (REAL, NONZERO, NUMERIC, True),
    "exp": (SMALL, None, NUMERIC, True),
    "exp2": (SMALL, None, NUMERIC, True),
    "expm1": (SMALL, None, NUMERIC, True),
    "log": (POS, None, NUMERIC, True),
    "log2": (POS, None, NUMERIC, True),
    "log10": (POS, None, NUMERIC, True),
    "log1p": (Domain(-0.6, 3.0, 0, 5), None, NUMERIC, True),
    "sqrt": (POS, None, NUMERIC, True),
    "cbrt": (REAL, NONZERO, NUMERIC, True),
    "square": (REAL, None, ALL, True),
    "reciprocal": (NONZERO, None, NUMERIC, True),
    "sin": (REAL, None, ALL, True),
    "cos": (REAL, None, NUMERIC, True),
    "tan": (Domain(-1.2, 1.2, -1, 1), None, NUMERIC, True),
    "arcsin": (UNIT, None, NUMERIC, True),
    "arccos": (UNIT, None, NUMERIC, True),
    "arctan": (REAL, None, NUMERIC, True),
    "sinh": (SMALL, None, NUMERIC, True),
    "cosh": (SMALL, None, NUMERIC, True),
    "tanh": (REAL, None, NUMERIC, True),
    "arcsinh": (REAL, None, NUMERIC, True),
    "arccosh": (GT1, None, NUMERIC, True),
    "arctanh": (UNIT, None, FLOATS, True),
    "floor": (OFF_INT, None, ALL, True),
    "ceil": (OFF_INT, None, NUMERIC, True),
    "trunc": (OFF_INT, None, NUMERIC, True),
    "rint": (OFF_INT, None, NUMERIC, True),
    "logical_not": (REAL, None, ALL, False),
    "isnan": (REAL, None, ALL, False),
    "isinf": (REAL, None, NUMERIC, False),
    "isfinite": (REAL, None, NUMERIC, False),
    "signbit": (REAL, None, NUMERIC, False),
    "invert": (REAL, None, INTEGRAL, False),
}

UNARY_OPERATORS = {"negative": operator.neg, "positive": operator.pos, "absolute": abs,
                   "invert": operator.invert}

QUOTIENT = dict(dy=NONZERO, relate=off_integer_quotient)

# name: (case, dtypes, differentiable)
BINARY = {
    "add": (binary_case(), ALL, True),
    "subtract": (binary_case(), NUMERIC, True),
    "multiply": (binary_case(), ALL, True),
    "true_divide": (binary_case(dy=NONZERO), NUMERIC, True),
    "floor_divide": (binary_case(**QUOTIENT), NUMERIC, True),
    "remainder": (binary_case(**QUOTIENT), NUMERIC, True),
    "fmod": (binary_case(**QUOTIENT), NUMERIC, True),
    "power": (binary_case(SMALL, EXPONENT, grad_dx=POS), NUMERIC, True),
    "maximum": (binary_case(), ALL, True),
    "minimum": (binary_case(), ALL, True),
    "fmax": (binary_case(), NUMERIC, True),
    "fmin": (binary_case(), NUMERIC, True),
    "arctan2": (binary_case(REAL, REAL, grad_dx=NONZERO, grad_dy=NONZERO), NUMERIC, True),
    "hypot": (binary_case(REAL, REAL, grad_dx=NONZERO, grad_dy=NONZERO), NUMERIC, True),
    "logaddexp": (binary_case(), NUMERIC, True),
    "copysign": (binary_case(REAL, REAL, grad_dx=NONZERO, grad_dy=NONZERO), NUMERIC, True),
    "equal": (binary_case(Domain(-2, 2, -2, 2), Domain(-2, 2, -2, 2)), ALL, False),
    "not_equal": (binary_case(), ALL, False),
    "less": (binary_case(), ALL, False),
    "less_equal": (binary_case(), ALL, False),
    "greater": (binary_case(), ALL, False),
    "greater_equal": (binary_case(), ALL, False),
    "logical_and": (binary_case(), ALL, False),
    "logical_or": (binary_case(), ALL, False),
    "logical_xor": (binary_case(), ALL, False),
    "bitwise_and": (binary_case(), INTEGRAL, False),
    "bitwise_or": (binary_case(), INTEGRAL, False),
    "bitwise_xor": (binary_case(), INTEGRAL, False),
    "left_shift": (binary_case(SHIFT, SHIFT), INTEGRAL, False),
    "right_shift": (binary_case(SHIFT, SHIFT), INTEGRAL, False),
}

BINARY_OPERATORS = {
    "add": operator.add, "subtract": operator.sub, "multiply": operator.mul,
    "true_divide": operator.truediv, "floor_divide": operator.floordiv,
    "remainder": operator.mod, "power": operator.pow, "bitwise_and": operator.and_,
    "bitwise_or": operator.or_, "bitwise_xor": operator.xor, "left_shift": operator.lshift,
    "right_shift": operator.rshift, "equal": operator.eq, "not_equal": operator.ne,
    "less": operator.lt, "less_equal": operator.le, "greater": operator.gt,
    "greater_equal": operator.ge,
}

MISMATCH = (Case([A(3), A(4)]), Case([A(2, 3), A(3, 2)]))


def pointwise_rows() -> list[Row]:
    rows = []
    for name, (dom, gdom, dtypes, grad) in UNARY.items():
        alts = (UNARY_OPERATORS[name],) if name in UNARY_OPERATORS else ()
        # Integer-only ufuncs reject floats; floating-only ones reject... nothing: NumPy
        # casts. The error must be NumPy's own.
        bad = (Case([A(3)]),) if dtypes == INTEGRAL else ()
        rows.append(ufunc_row(name, unary_case(dom, gdom), dtypes, grad, alts, bad))
    for name, (case, dtypes, grad) in BINARY.items():
        alts = (BINARY_OPERATORS[name],) if name in BINARY_OPERATORS else ()
        bad = MISMATCH + ((Case([A(3), A(3)]),) if dtypes == INTEGRAL else ())
        rows.append(ufunc_row(name, case, dtypes, grad, alts, bad))
    rows += [
        Row("where", numpy=np.where, via_op=getattr_op("where"), case=where_case,
            dtypes=ALL, grad=True,
            bad=(Case([index_arg(np.ones(3, bool)), A(4), A(3)]),)),
        Row("clip", numpy=np.clip, via_op=getattr_op("clip"), case=clip_case, dtypes=NUMERIC,
            grad=True, alts=(lambda x, lo, hi: x.clip(lo, hi),)),
        Row("astype", numpy=lambda x, dtype: x.astype(dtype),
            via_op=lambda x, dtype: F.astype(x, dtype=np.dtype(dtype)), case=astype_case,
            dtypes=ALL, grad=True),
        Row("sum_to", numpy=sum_to_reference, via_op=lambda x, shape: F.sum_to(x, shape=shape),
            tensor=lambda x, shape: apply(Bound(REGISTRY["sum_to"], (x,), {"shape": shape})),
            case=sum_to_case, dtypes=NUMERIC, grad=True),
        Row("broadcast_to", numpy=np.broadcast_to,
            via_op=lambda x, shape: F.broadcast_to(x, shape=shape), case=broadcast_to_case,
            dtypes=ALL, grad=True,
            bad=(Case([A(3), (4,)]), Case([A(2, 3), (3, 2)]))),
    ]
    return rows


# ==========================================================================================
# The table

ROWS: list[Row] = pointwise_rows()

# Ops that cannot be a row of this table, and why. Each is tested elsewhere.
NOT_ROWS: dict[str, str] = {}

ROWS_BY_DTYPE = [pytest.param(row, dtype, id=f"{row.id}-{dtype}") for row in ROWS
                 for dtype in row.dtypes]
GRAD_ROWS = [pytest.param(row, id=row.id) for row in ROWS if row.grad]


# ==========================================================================================
# Running a call and comparing

def outcome(fn: Callable) -> tuple[Any, BaseException | None]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return fn(), None
        except Exception as e:  # noqa: BLE001  (NumPy's error is the expected result)
            return None, e


def assert_same_error(got: BaseException | None, want: BaseException, what: str) -> None:
    assert got is not None, f"{what}: NumPy raises {type(want).__name__}: {want}; kiln does not"
    assert type(got) is type(want), (f"{what}: kiln raises {type(got).__name__}: {got}; "
                                      f"NumPy raises {type(want).__name__}: {want}")
    assert str(got) == str(want), f"{what}: message {str(got)!r}, NumPy says {str(want)!r}"


def numpy_result(row: Row, case: Case) -> tuple[Any, BaseException | None]:
    return outcome(lambda: row.numpy(*case.fill([a.fresh() for a in case.arrays]), **case.params))


def to_tensor(arg: Arg) -> kiln.Tensor:
    """kiln.tensor(x) for a contiguous array; a Tensor wrapping the view (kept strided) else."""
    x = arg.fresh()
    return kiln.tensor(x) if arg.layout == "C" else kiln.Tensor(x)


def check_on_tensors(row: Row, case: Case, spelling: Callable, what: str) -> None:
    want, err = numpy_result(row, case)
    tensors = [to_tensor(a) for a in case.arrays]
    before = [t.numpy().copy() for t in tensors]
    got, got_err = outcome(lambda: spelling(*case.fill(tensors), **case.params))
    if err is not None:
        assert_same_error(got_err, err, what)
        return
    if got_err is not None:
        raise AssertionError(f"{what}: kiln raises {type(got_err).__name__}: {got_err}; "
                             f"NumPy returns {want!r}") from got_err
    for value in (got if isinstance(got, (tuple, list)) else (got,)):
        if value is not None:
            assert isinstance(value, kiln.Tensor), f"{what}: returned {type(value).__name__}, not a Tensor"
    assert_same_result(got, want, what)
    if not row.mutates:
        for t, b in zip(tensors, before):
            np.testing.assert_array_equal(t.numpy(), b, err_msg=f"{what}: an input was modified")


def draw_case(row: Row, data: Any, dtype: np.dtype, grad: bool = False) -> Case:
    return row.case(Ctx(data.draw, dtype, grad, mutating=row.mutates))


# ==========================================================================================
# (a) eager: NumPy spellings on Tensors

@pytest.mark.parametrize("row, dtype", ROWS_BY_DTYPE)
@FORWARD
@given(data=st.data())
def test_tensor_matches_numpy(row: Row, dtype: np.dtype, data: Any) -> None:
    case = draw_case(row, data, dtype)
    check_on_tensors(row, case, row.on_tensors, f"{row.id} on Tensors")
    for i, alt in enumerate(row.alts):
        check_on_tensors(row, case, alt, f"{row.id} (spelling {i + 1}) on Tensors")


BAD_CASES = [pytest.param(row, case, id=f"{row.id}-{i}") for row in ROWS
             for i, case in enumerate(row.bad)]


@pytest.mark.parametrize("row, case", BAD_CASES)
def test_tensor_raises_numpy_error(row: Row, case: Case) -> None:
    want, err = numpy_result(row, case)
    assert err is not None, f"bad case of {row.id} does not fail in NumPy: {want!r}"
    check_on_tensors(row, case, row.on_tensors, f"{row.id} on Tensors")


# ==========================================================================================
# (b) graph: meta rule, interpreter and compiled graph vs NumPy

def traced(row: Row, case: Case) -> Any:
    arrays = [a.value for a in case.arrays]
    metas = [TensorMeta(a.shape, a.dtype) for a in arrays]
    return trace(lambda *xs: row.via_op(*case.fill(xs), **case.params), metas,
                 [f"x{i}" for i in range(len(metas))])


@pytest.mark.parametrize("row, dtype", ROWS_BY_DTYPE)
@FORWARD
@given(data=st.data())
def test_graph_matches_numpy(row: Row, dtype: np.dtype, data: Any) -> None:
    case = draw_case(row, data, dtype)
    want, err = numpy_result(row, case)
    if err is not None:
        # Shape errors surface when tracing (meta rules), value errors when running.
        with pytest.raises(type(err)):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                traced(row, case)(*[a.fresh() for a in case.arrays])
        return
    graph = traced(row, case)
    lint(graph)
    wants = tuple(want) if isinstance(want, (tuple, list)) else (want,)
    outputs = graph.output_node.args[0]
    assert len(outputs) == len(wants), f"graph has {len(outputs)} outputs, NumPy gives {len(wants)}"
    for node, w in zip(outputs, wants):
        if getattr(node, "kind", None) == "call":
            w = as_array(w)
            assert node.val == TensorMeta(w.shape, w.dtype), (
                f"meta rule of {node.target.name}: {node.val}, NumPy gives {w.shape} {w.dtype}")
    source = str(graph)
    compile(source, "<printed graph>", "exec")
    for node in graph.calls:
        assert f"= ops.{node.target.name}(" in source, f"{node.name} missing from\n{source}"
    for runner, what in ((graph, "interpreter"), (graph.compile(), "compiled graph")):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = runner(*[a.fresh() for a in case.arrays])
        got = got if isinstance(want, (tuple, list)) else got[0]
        assert_same_result(got, want, f"{row.id}: {what}\n{source}")


# ==========================================================================================
# (c) gradients vs central finite differences, float64

def flat_numpy(row: Row, case: Case) -> Callable:
    def fn(*arrays: np.ndarray) -> np.ndarray:
        out = row.numpy(*case.fill(arrays), **case.params)
        outs = out if isinstance(out, (tuple, list)) else (out,)
        return np.concatenate([np.ravel(np.asarray(o, dtype=np.float64)) for o in outs] or [np.zeros(0)])
    return fn


def analytic_grads(row: Row, case: Case, dtype: np.dtype, cotangents: list) -> list:
    leaves = [kiln.tensor(a.value.astype(dtype), requires_grad=True)
              if a.grad and a.value.dtype.kind == "f" else kiln.tensor(a.value) for a in case.arrays]
    out = row.on_tensors(*case.fill(leaves), **case.params)
    outs = out if isinstance(out, (tuple, list)) else (out,)
    for o, c in zip(outs, cotangents):
        assert isinstance(o, kiln.Tensor), f"{row.id} returned {type(o).__name__}"
        if o.dtype.kind == "f":
            assert o.requires_grad, f"{row.id}: the result does not require grad"
            o.backward(c.astype(o.dtype), retain_graph=True)
    return [(leaf.grad.numpy() if leaf.grad is not None else np.zeros(leaf.shape, leaf.dtype))
            if leaf.requires_grad else None for leaf in leaves]


@pytest.mark.parametrize("row", GRAD_ROWS)
@GRADIENT
@given(data=st.data())
def test_gradient_matches_finite_differences(row: Row, data: Any) -> None:
    case = draw_case(row, data, F64, grad=True)
    want, err = numpy_result(row, case)
    assume(err is None)
    wants = want if isinstance(want, (tuple, list)) else (want,)
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 32 - 1), label="cotangent seed"))
    cotangents = [rng.standard_normal(np.shape(w)) for w in wants]
    grads = analytic_grads(row, case, F64, cotangents)
    flat_cot = np.concatenate([c.ravel() for c in cotangents] or [np.zeros(0)])
    plain = [a.value.copy() for a in case.arrays]
    fn = flat_numpy(row, case)
    for i, (arg, grad) in enumerate(zip(case.arrays, grads)):
        if grad is None:
            continue
        assert grad.shape == arg.value.shape and grad.dtype == F64, (
            f"{row.id}: gradient of input {i} is {grad.dtype}{list(grad.shape)}, "
            f"input is {arg.value.dtype}{list(arg.value.shape)}")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            numeric = numerical_grad(fn, plain, i, flat_cot)
        np.testing.assert_allclose(grad, numeric, rtol=1e-4, atol=1e-5,
                                   err_msg=f"{row.id}: gradient of input {i}")
    # The same in float32: gradients keep their input's dtype and roughly the value.
    if all(a.value.dtype == F64 or not a.grad for a in case.arrays):
        grads32 = analytic_grads(row, case, F32, cotangents)
        for i, (g32, g64) in enumerate(zip(grads32, grads)):
            if g32 is not None:
                assert g32.dtype == F32, f"{row.id}: float32 input {i} gets a {g32.dtype} gradient"
                np.testing.assert_allclose(g32, g64, rtol=2e-3, atol=2e-3,
                                           err_msg=f"{row.id}: float32 gradient of input {i}")


# ==========================================================================================
# The table itself

def test_table_covers_every_op() -> None:
    row_ops = {row.op for row in ROWS}
    missing = sorted(set(REGISTRY) - row_ops - set(NOT_ROWS))
    assert not missing, f"ops without a row in the op table: {missing}"
    stale = sorted((row_ops | set(NOT_ROWS)) - set(REGISTRY))
    assert not stale, f"rows or allow-list entries for ops that do not exist: {stale}"
    both = sorted(row_ops & set(NOT_ROWS))
    assert not both, f"ops both in the table and in the allow-list: {both}"


def test_rows_declare_differentiability_like_the_registry() -> None:
    wrong = {row.id: (row.grad, REGISTRY[row.op].differentiable) for row in ROWS
             if row.op in REGISTRY and row.grad != REGISTRY[row.op].differentiable}
    assert not wrong, f"row says / registry says differentiable: {wrong}"


def test_table_size() -> None:
    ops = {row.op for row in ROWS}
    grad_ops = {row.op for row in ROWS if row.grad}
    assert len(ops) >= 80, f"only {len(ops)} ops in the table"
    assert len(grad_ops) >= 60, f"only {len(grad_ops)} differentiable ops in the table"


# ==========================================================================================
# Lookup and argument normalization errors

def test_lookup_of_missing_op_names_the_numpy_function() -> None:
    with pytest.raises(kiln.NoOpError, match=r"numpy\.fft\.fft\b"):
        kiln.ops.lookup(np.fft.fft)


@pytest.mark.parametrize("fn, name", [
    (lambda x, m: np.add(x, x, where=m), "numpy.add"),
    (lambda x, m: np.sin(x, where=m), "numpy.sin"),
    (lambda x, m: np.sum(x, where=m), "numpy.sum"),
], ids=["add", "sin", "sum"])
def test_where_argument_is_rejected_naming_op_and_argument(fn: Callable, name: str) -> None:
    x = kiln.tensor(np.arange(4.0))
    with pytest.raises(kiln.UnsupportedArgument) as info:
        fn(x, np.array([True, False, True, False]))
    message = str(info.value)
    assert name in message and "where" in message, message


@pytest.mark.parametrize("value", [np.array(["a"]), np.array([b"a"]), np.array([1, None], dtype=object),
                                   np.array([1 + 2j]), np.array([1.0], dtype=np.float16)],
                         ids=["str", "bytes", "object", "complex", "float16"])
def test_unsupported_dtypes_are_rejected(value: np.ndarray) -> None:
    with pytest.raises(kiln.UnsupportedDtype, match=str(value.dtype)):
        kiln.tensor(value)
