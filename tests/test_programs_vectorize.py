"""np.vectorize of scalar Python functions through kiln.compile, checked like
tests/test_programs.py (values, dtypes, shapes, exceptions, argument states), and which
calls become one loop node (kiln/capture/vectorize.py) and which run as NumPy.

NumPy's rules kept here: the output dtype is that of the function called once more on the
first elements as NumPy scalars (float32 in, ``v * 2.5`` out: float32), every element
is then passed as a Python scalar (the float32 product is computed in double and rounded
once), size-0 inputs raise without ``otypes``, results are cast into ``otypes``.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import kiln
from tests.test_programs import BACKENDS, program_registry, program_test

f32 = np.float32
_rng = np.random.default_rng(7)

PROGRAMS, program = program_registry()


def rn(*shape, dtype=np.float64):
    return _rng.standard_normal(shape).astype(dtype)


def relu_sq(v):
    return v * v if v > 0 else 0.0


def clipped_diff(v, w):
    if v > w:
        d = v - w
    else:
        d = (w - v) * 0.5
    return d


def hinge(v, w, m):
    s = v * w
    return m - s if s < m else 0.0


def scaled(v):
    return v * 2.5


def halves(v):
    return v // 2


def sign_count(v):
    n = 0
    for k in range(3):
        if v > k:
            n += 1
    return n


def both(v, w):
    return v + w, v * w


def polynomial(v):
    r = 0.0
    for k in range(6):
        r = r * v + 1.0 / (k + 1)
    return r


def reciprocal(v):
    return 1.0 / v


def as_int(v):
    return int(v * 10)


vrelu = np.vectorize(relu_sq)
vclip = np.vectorize(clipped_diff)
vhinge = np.vectorize(hinge)
vscaled = np.vectorize(scaled)
vhalves = np.vectorize(halves)
vboth = np.vectorize(both)
vpoly = np.vectorize(polynomial)
vrecip = np.vectorize(reciprocal)
vint = np.vectorize(as_int)
vfloat = np.vectorize(halves, otypes=[float])
vtrunc = np.vectorize(scaled, otypes=[np.int64])
vcount = np.vectorize(sign_count)


@np.vectorize
def soft_threshold(v, t):
    r = v - t if v > t else 0.0
    return v + t if v < -t else r


@np.vectorize
def soft_threshold_returns(v, t):
    if v > t:
        return v - t
    if v < -t:
        return v + t
    return 0.0 * v


@np.vectorize(otypes=[np.float32])
def to_f32(v):
    return v / 3.0


@program((rn(50),), (rn(4, 5),), (rn(3, 4, dtype=f32),), (np.array(-2.0),), (rn(6, 5).T,),
         (rn(20)[::3],))
def vec_relu(x):
    return vrelu(x) + 1.0


@program((rn(4, 5), rn(5)), (rn(3, 1), rn(1, 4)), (rn(7, dtype=f32), rn(7, dtype=f32)),
         (rn(5), 0.25))
def vec_clip_broadcast(x, y):
    return vclip(x, y)


@program((rn(10), rn(10), 0.5), (rn(2, 3), rn(3), 1.0))
def vec_three_args(x, w, m):
    return vhinge(x, w, m).sum()


@program((rn(40, dtype=f32),), (rn(40),), (np.arange(-6, 6),), (np.array([True, False, True]),))
def vec_first_element_dtype(x):
    return vscaled(x)


@program((np.arange(-7, 9),), (np.arange(12).reshape(3, 4).astype(np.int32),),
         (np.array([2 ** 40, -(2 ** 41), 7]),))
def vec_int_floor(x):
    return vhalves(x)


@program((np.arange(-7, 9),), (rn(9),))
def vec_otypes_float(x):
    return vfloat(x)


@program((rn(30),), (np.array([1.0, np.inf]),), (np.array([np.nan, 1.0]),))
def vec_otypes_truncating(x):
    return vtrunc(x)


@program((rn(20),), (np.arange(5),))
def vec_inner_loop(x):
    return vpoly(x), vcount(x)


@program((rn(8), rn(8)), (rn(2, 3), rn(3)))
def vec_two_outputs(x, y):
    s, p = vboth(x, y)
    return s - p


@program((rn(12),), (np.array([1.0, 0.0, 2.0]),), (np.array([2.0, 0.0], dtype=f32),))
def vec_raises_in_element(x):
    return vrecip(x)


@program((rn(12),), (np.array([1.0, np.nan]),), (np.array([1e30]),))
def vec_int_of_float(x):
    return vint(x)


@program((rn(9), 0.3), (rn(3, 3, dtype=f32), 1.0))
def vec_decorated(x, t):
    return soft_threshold(x, t)


@program((rn(9), 0.3))
def vec_return_in_branch(x, t):
    return soft_threshold_returns(x, t)


def _bucket(v):
    if v < -1.0:
        return -2.0
    elif v < 0.0:
        if v < -0.5:
            return -1.5
        return -0.5 * v
    elif v < 1.0:
        return v * v
    return 1.0 + v


@program((rn(40),), (np.linspace(-2, 2, 17, dtype=f32),), (np.arange(-3, 3),))
def vec_elif_returns(x):
    return np.vectorize(_bucket)(x)


def _returns_int_or_float(v):
    if v > 0:
        return v // 2     # np.int64 on the first call of an int array
    return 0.5


@program((np.arange(1, 6),))
def vec_returns_differ_in_type(x):
    return np.vectorize(_returns_int_or_float)(x)


def _hinge_helper(v, m):
    if v < m:
        return m - v
    return 0.0


@program((rn(30), 0.2), (rn(30, dtype=f32), 0.5))
def loop_calling_a_helper_with_returns(x, m):
    """A hand-written loop calling a helper that returns inside a branch: one loop node
    (the helper's returns become selects, loop_branches.merge_returns)."""
    out = np.zeros_like(x)
    for i in range(x.shape[0]):
        out[i] = _hinge_helper(x[i], m)
    return out


@program((rn(9),), (np.arange(5),))
def vec_decorator_otypes(x):
    return to_f32(x)


@program((rn(10),), (rn(3, 4, dtype=f32),))
def vec_built_inside(x):
    sq = np.vectorize(lambda v: v * v + 1.0)
    return sq(x) * 2.0


@program((rn(10),), (np.arange(4),))
def vec_built_inside_otypes(x):
    return np.vectorize(lambda v: v + 1, otypes=[np.float32])(x)


@program((np.zeros(0),), (np.zeros((3, 0)),))
def vec_empty_without_otypes(x):
    return vrelu(x)


@program((np.zeros(0),), (np.zeros((2, 0)),), (np.zeros((0, 3)), ))
def vec_empty_with_otypes(x):
    return vfloat(x)


def _data_dependent(v):
    return v * v if v > 0 else 0.0


@program((np.arange(1, 5),), (np.arange(-4, 1),))
def vec_type_depends_on_data(x):
    return np.vectorize(_data_dependent)(x)


def _root_or_negated(v):
    return math.sqrt(v) * 2.0 if v > 0 else -v


def _parts(v):
    return v.real * 2 + v.imag, v.imag


@program((rn(20),), (np.arange(-4, 5),), (rn(6, dtype=f32),), (np.array([True, False]),))
def vec_math_on_elements(x):
    """math.sqrt/math.fabs of elements (Python floats, as CPython's libm gives them), the
    sqrt only on the path where its operand is positive."""
    return (np.vectorize(lambda v: math.fabs(v) + math.sqrt(abs(v)))(x),
            np.vectorize(_root_or_negated)(x))


@program((np.abs(rn(12)),), (np.array([4.0, -1.0, 9.0]),))
def vec_math_sqrt_raises(x):
    """math.sqrt of a negative element raises Python's ValueError (math domain error)."""
    return np.vectorize(lambda v: math.sqrt(v))(x)


@program((rn(10),), (np.arange(-3, 4),), (rn(5, dtype=f32),), (np.array([True, False]),))
def vec_real_imag(x):
    """``.real``/``.imag`` of a real element: itself (a bool's as an int) and a zero of its
    type (NumPy scalar on the first call, Python number on every element)."""
    return np.vectorize(_parts)(x)


@program((rn(10), rn(10)), (np.arange(-3, 4), np.arange(7)[::-1]))
def vec_min_max_builtins(x, y):
    """min/max of two elements of one type; with a float literal, otypes fixes the dtype
    (without it the first element's type decides: int or float, the data's choice)."""
    return (np.vectorize(lambda v, w: max(v, w) - min(v, w))(x, y),
            np.vectorize(lambda v: min(v, 1.0), otypes=[float])(x))


def _math_call(v):
    return math.exp(-v * v)     # libm's exp, as Python's math module calls it: a loop node


@program((rn(10),))
def vec_math_call(x):
    return np.vectorize(_math_call)(x)


def _math_call2(v):
    return math.hypot(v, 1.0)   # CPython's own hypot (not libm's): the element stays Python


@program((rn(10),))
def vec_math_call2(x):
    return np.vectorize(_math_call2)(x)


def _with_side_effect(v, log=[]):
    log.append(v)
    return v


@program((rn(5),))
def vec_side_effect(x):
    return np.vectorize(_with_side_effect)(x)


@program((rn(4, 3),))
def vec_signature(x):
    return np.vectorize(lambda row: row.sum(), signature="(n)->()")(x)


@program((rn(5), 2.0))
def vec_keyword(x, p):
    return np.vectorize(lambda v, p=1.0: v ** p)(x, p=p)


@program((rn(5) + 1j * rn(5),))
def vec_complex(x):
    return np.vectorize(lambda v: v * 2)(x)


test_program = program_test(PROGRAMS, BACKENDS, share=8)


# ----------------------------------------------------- what compiles and what breaks

COMPILED = ["vec_relu", "vec_math_call", "vec_clip_broadcast", "vec_three_args", "vec_first_element_dtype",
            "vec_int_floor", "vec_otypes_float", "vec_otypes_truncating", "vec_inner_loop",
            "vec_two_outputs", "vec_raises_in_element", "vec_int_of_float", "vec_decorated",
            "vec_decorator_otypes", "vec_built_inside", "vec_built_inside_otypes",
            "vec_empty_with_otypes", "vec_return_in_branch", "vec_elif_returns",
            "loop_calling_a_helper_with_returns", "vec_math_on_elements", "vec_math_sqrt_raises",
            "vec_real_imag", "vec_min_max_builtins"]

BREAKS = {"vec_type_depends_on_data": "result type",
          "vec_side_effect": "np.vectorize",
          "vec_signature": "signature=",
          "vec_keyword": "keyword",
          "vec_complex": "complex",
          "vec_math_call2": "np.vectorize",
          "vec_returns_differ_in_type": "result type"}


@pytest.mark.parametrize("name", COMPILED)
def test_vectorize_is_one_loop_node(name):
    fn, calls = PROGRAMS[name]
    args = calls[0]
    report = kiln.explain(fn)(*args)
    assert report.graph_break_count == 0, [b.reason for b in report.break_reasons]
    # kiln's own polyfill is not user state: no guard per call on its globals
    assert not any("polyfills" in g for g in report.guards), report.guards
    if "empty" not in name:   # (no element: no loop)
        assert any("loop" in ops for ops in report.ops_per_graph), report.ops_per_graph
    # explain's notes and the kernels' comments name the user's line, not the polyfill's
    assert not any("polyfills.py" in note for note in report.loops), report.loops
    bodies = [n.meta["loop_body"] for g in report.graphs for n in g.nodes if "loop_body" in n.meta]
    assert all(b.where.startswith(__file__ + ":") for b in bodies), [b.where for b in bodies]


@pytest.mark.parametrize("name", list(BREAKS))
def test_vectorize_breaks_at_the_users_call(name):
    fn, calls = PROGRAMS[name]
    report = kiln.explain(fn)(*calls[0])
    assert report.graph_break_count == 1
    brk = report.break_reasons[0]
    assert BREAKS[name] in brk.reason
    assert brk.filename == __file__, brk   # the user's line, not kiln's polyfill
    assert brk.source.startswith("return "), brk   # the call in the program, not in pyfunc


def test_vectorize_first_element_dtype_rule():
    """float32 in: the first call (np.float32) decides float32; the elements are computed
    as Python floats and rounded once (2.2 * 2.5 in double, then to float32)."""
    x = np.array([1.1, 2.2, 3.3], dtype=f32)
    got = kiln.compile(vec_first_element_dtype)(x)
    assert got.dtype == f32
    np.testing.assert_array_equal(got, (x.astype(np.float64) * 2.5).astype(f32))


def test_vectorize_fullgraph_names_the_reason():
    fn = kiln.compile(vec_type_depends_on_data, fullgraph=True)
    with pytest.raises(kiln.Unsupported, match="result type"):
        fn(np.arange(1, 5))


def test_vectorize_gradient_is_a_clear_error_or_right():
    """kiln.grad through a compiled vectorize: the loop node has no derivative rule, so
    kiln.grad says so and names the user's line, or the gradient matches finite
    differences."""
    def loss(x):
        return vrelu(x).sum()
    x = rn(6)
    try:
        g = kiln.grad(kiln.compile(loss))(x)
    except kiln.KilnError as e:
        assert "test_programs_vectorize.py" in str(e) or "vectorize" in str(e), str(e)
        return
    eps = 1e-6
    fd = np.array([(loss(x + eps * np.eye(6)[k]) - loss(x - eps * np.eye(6)[k])) / (2 * eps)
                   for k in range(6)])
    np.testing.assert_allclose(g, fd, rtol=1e-5, atol=1e-7)
