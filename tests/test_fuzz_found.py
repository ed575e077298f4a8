"""Bugs the program fuzzer (tests/fuzz) found, each as the smallest program that showed it,
checked like test_programs.py checks its programs (every backend, against NumPy)."""
from __future__ import annotations

import dataclasses
import math
import platform
import warnings

import numpy as np
import pytest

import kiln

from test_programs import BACKENDS, check_program

FOUND = {}


def found(*calls, xfail: str | None = None, xfail_backends: tuple = tuple(BACKENDS),
          strict: bool = True):
    """Register a program; ``xfail`` names a bug not fixed yet (on ``xfail_backends``;
    ``strict=False`` where it may depend on the machine's vector width)."""
    def deco(fn):
        FOUND[fn.__name__] = (fn, list(calls), xfail, xfail_backends, strict)
        return fn
    return deco


_SIGNED_ZEROS = np.array([-0.0, 0.0, -1.0, 2.0, np.nan] * 4)


@found((_SIGNED_ZEROS,), (_SIGNED_ZEROS.astype(np.float32)[::-1],))
def clip_ties_with_scalar_bounds_keep_x(x):
    # NumPy's clip loop for 0-d bounds keeps x on a tie (-0.0 stays -0.0); array bounds and
    # a missing bound (np.maximum/np.minimum) take the bound (+0.0)
    return x.clip(0, 1), np.clip(x, -1.0, -0.0), np.clip(x, np.zeros(20, x.dtype), 1), \
        np.clip(x, 0.0, None), np.clip(x, x.max(), x[0])


@found((np.arange(4.0),), (np.arange(6.0).reshape(2, 3),), (np.arange(3, dtype=np.int32),))
def loops_over_an_array_see_their_own_writes(x):
    # Python reads each element (a copy) or row (a view) when the loop takes it
    seen = []
    for v in x:
        x += 1
        seen.append(v * 1)
    for i, v in enumerate(x[::-1], 2):
        x[0] = x[-1] * 2
        seen.append(v + i)
    it = iter(x)
    first = next(it)
    x -= 3
    seen.append(next(it) * 1)
    return seen, first, list(it)


@found((np.arange(4.0),), (np.arange(6.0).reshape(2, 3),))
def loops_over_an_array_resume_after_a_break(x):
    seen = []
    for i, v in enumerate(x):
        x[-1] = x[-1] + v
        print(v, file=_SINK)      # a graph break inside the loop: the rest runs over the real x
        seen.append(v * 1)
    for v in x:
        seen.append(v * 2)
        _SINK.truncate(0)
        x += 1
    return seen


_SINK = __import__("io").StringIO()


_OUT_CALLS = [(np.array(-3.5, np.float32), np.arange(9.0).reshape(3, 3)), (np.ones(3), np.zeros((3, 3))),
              (np.ones((2, 3)), np.zeros((1, 3))), (np.ones((2, 3)), np.zeros((2, 3))),
              (np.ones(3, np.float32), np.zeros((3, 3))), (np.ones((2, 3)), np.zeros(3))]


# NumPy's reductions and scans want out= of the result's exact shape (they raise, or for
# some casts write only part of it); only ufuncs broadcast their result over a larger out=
def _u8(*v):
    x = np.array(v, np.uint8)
    return x, x[0]


@found(_u8(6, 10, 9, 10, 2), _u8(1, 2, 3, 4, 5, 6, 7),
       (np.arange(1.0, 7.0), np.float64(2.5)), (np.arange(1, 9, dtype=np.int32), np.int32(3)))
def a_loop_carried_numpy_scalar_read_by_array_code_is_returned_as_a_scalar(x0, x1):
    # (seed 35003) the inner loop compiles as a loop node; its final NumPy scalar was made
    # a 0-d array for the kernel that adds it, and that array was returned
    for i1 in range(x0.shape[0]):
        for i2 in range(x0.shape[0]):
            v3 = np.fmin(1 + x1, False)
            w = np.sqrt(x1 + 0.5 * i2)
        x0 += np.add(x0, v3)
    return v3, w, x0 * w


@found((np.array([-4]),), (np.array([3, -1, 2]),), (np.array([1.5, 2.5]),))
def an_element_read_from_a_written_argument_is_returned_as_a_scalar(x0):
    # (seed 36104) x0 after the write is the extern's own value, kept for the caller (a
    # result returned whole, hunt-signal's f69d088); x0[0] of a 1-element x0, a view of
    # that buffer, was given the whole value too: array([-8]) for NumPy's -4
    x0[-2::-2] = -0.0
    for i1 in x0:
        v3 = np.prod(x0)
        print(-1.0, file=_SINK)
    x0 += np.sum(x0, axis=0)
    return i1, v3


@found((np.arange(6.0).reshape(2, 3), np.float64(0.5)), (np.ones((3, 4), np.float32), np.float32(2.0)))
def a_time_stepping_loop_carrying_a_numpy_scalar_returns_it(u, dt):
    # (not a finding: 35003's sibling on a loop that unrolls; it passed before the fix)
    t = dt * 0
    for _ in range(12):
        u = u + dt * (np.roll(u, 1, axis=1) - u)
        t = t + dt
    return t, u * t


@found(*_OUT_CALLS)
def scan_into_an_out_of_another_shape(x, o):
    np.cumsum(x, axis=0, out=o[::-1])
    return o * 2


@found(*_OUT_CALLS)
def reduction_into_an_out_of_another_shape(x, o):
    np.sum(x, axis=0, out=o)
    return o * 2


@found(*_OUT_CALLS)
def ufunc_into_an_out_of_another_shape(x, o):
    np.add(x, 1, out=o)
    return o * 2


@found((np.array([True, False]),), (np.array([[True], [False]])[::-1],), (np.array(True),))
def bool_array_squared_by_the_operator(m):
    # x ** 2 on a bool array (a 0-d one too) is np.square in NumPy (ndarray.__pow__'s fast
    # path for an exact Python int 2): int8, where np.power gives int64; a NumPy bool
    # scalar's ** is power
    return m ** 2, np.power(m, 2), m ** 3, m ** 2.0, m.any() ** 2, m.astype(np.int8) ** 2


@found((np.array([True, False]),))
def bool_array_squared_in_place_raises(m):
    # NumPy's fast path computes np.square(m, out=m): int8 cannot be cast back to bool
    m **= 2
    return m


@found((np.ones((3, 2)),), (np.ones((2, 1)),))
def squeeze_of_an_intermediate_view_is_that_view(x):
    # np.squeeze of a view with no unit axes hands back that view object: one object twice
    w = x.T
    w *= 2
    v = w[::-1]
    return w, np.squeeze(w), v, np.squeeze(v, axis=()), x.T


@found((np.ones((3, 2)),), (np.ones(3),), (np.ones((2, 1, 2)),), (np.array(2.0),))
def atleast_nd_of_an_array_with_enough_dims_is_the_array(x):
    # NumPy returns the array itself (asanyarray), not a new view
    y = x * 2
    return np.atleast_1d(x), np.atleast_2d(x), np.atleast_3d(x), np.atleast_2d(y), y, x


@found((np.array([-0.0, -np.inf, 4.0, np.nan, 0.0, -1.0]),),
       (np.array([-0.0, -np.inf, 2.25], np.float32),))
def power_by_a_computed_half(x):
    # NumPy's power loop takes sqrt for any zero-stride exponent equal to 0.5, also one the
    # program computed: (-0.0) ** 0.5 is -0.0 and (-inf) ** 0.5 is nan there
    y = x ** np.minimum(2.0, 0.5)
    x **= np.maximum(0.25, 0.5)
    return y, x, x ** x.max()


@found((np.arange(36.0).reshape(4, 3, 3) - 10,), (np.arange(12.0).reshape(3, 4) + 0.5,))
def flipped_array_across_a_break_then_reshaped(x):
    # a view of a fresh array handed to Python at a break keeps NumPy's strides (np.flip's
    # negative ones), so the reshape after the break copies, and writing through it leaves
    # the flipped array alone
    v = np.flip(x / 2.0, 0)
    kiln.graph_break()
    w = np.reshape(v, (-1,))
    w += 2
    return v, w


@found((np.array([[3.0, 2.25, 2.0], [2.75, -2.75, -3.5], [3.0, -4.0, 0.25]]),),
       (np.array([-0.25, -0.0, 0.75, -1.5, 2.0], np.float32),))
def float_to_int_and_back_keeps_positive_zero(x):
    # GCC folds (double)(int64_t)v into trunc(v), which is -0.0 for v in (-1, 0]; NumPy's
    # integer 0 converts to +0.0
    return np.maximum(x.astype(np.int64), x), x - x.astype(np.int32), x.astype(np.int16) * 1.0


_MAX_ONCE = np.array([[0.0, -2.0, -1.5], [-3.75, -3.5, -4.0], [-2.75, 2.5, 1.25]])


@found((_MAX_ONCE,), (_MAX_ONCE[::-1, ::2],))
def view_of_a_mask_selection_written_in_place(x):
    # x[mask] is taken after the graph (a graph break at the view): once, so that the
    # local and the view on the stack are one array and the write shows in both
    v = x[x != x.max()]
    w = v[:]
    w *= 2
    return v, w


@found((np.array([[0.0], [-2.0], [-1.5]]),), (_MAX_ONCE,), (np.arange(-2.0, 4.0),))
def mask_selection_updated_in_place_by_a_broadcasting_operand(x):
    # x[m] += x: the selection (a copy) is updated in place, so NumPy's out= rule applies
    # (a 2-d x does not broadcast into the 1-d selection: ValueError); kiln read it as
    # x[m] = x[m] + x and raised NumPy's TypeError of the boolean assignment instead
    x[x > 0] += x
    t = x[x < 0]
    t += 1.0
    return t, x


@found((np.array(5, np.int64), [np.array(0, np.int64)]), (np.array([[3, -1]], np.int8), []),
       (np.array(2.5), []))
def round_of_a_0d_integer_array_is_a_numpy_scalar(x, L):
    # ndarray.round of an integer array is a copy, and for a 0-d array a NumPy scalar
    L.append(np.maximum(x, x))
    return np.round(x.T, 1), x.round(), np.around(x * 2, 3)


@found((np.broadcast_to(np.array([0.5]), (3,)), np.arange(6.0)[::2]),
       (np.arange(6.0).reshape(2, 3)[:, ::-1], np.arange(3.0)[::-1]),
       (np.arange(6.0).reshape(2, 3), np.arange(3.0)))
def ravel_of_a_non_contiguous_array_is_a_copy(x, y):
    # np.ravel is a view only of a C-contiguous array: of a broadcast (read-only), strided
    # or reversed one, even 1-d, it is a writeable copy (kiln kept 1-d windows as views)
    d = {"a": x}
    w = x.ravel()
    w *= 2
    v = np.ravel(y)
    v += d["a"].sum()
    return w, v, y


@found((np.ones((3, 3)),), (np.zeros((0, 0)),))
def in_place_update_of_a_read_only_diagonal(x):
    # x.diagonal() is a read-only view: NumPy's w *= 2 raises ValueError('output array is
    # read-only'); kiln wrote it as a copy into the view, which raises the same type with
    # 'assignment destination is read-only' (seed 314). A write into a view NumPy makes
    # read-only now runs as Python.
    w = x.diagonal()
    w *= 2
    return w


@found((np.array([0.0, -2.0, -1.5]),), (np.arange(3, dtype=np.int32),))
def in_place_update_of_a_broadcast_view_after_a_write(x):
    # (seed 1501) the earlier write stays, as in NumPy
    x += 1
    w = np.broadcast_to(x, (2, 3))
    w *= x
    return w


@found((np.array([[1.75], [0.5], [1.25], [-1.75]], np.float32),))
def in_place_update_of_a_read_only_view_that_cannot_cast(x):
    # (seed 1505) NumPy checks that the output is writeable before the casting: 'output
    # array is read-only'; compiled, the graph before the break at w *= 2 returned w as a
    # fresh writeable array, so the Python segment raised the casting error (bool *= int).
    # A read-only view of an intermediate now leaves the graph as that view of its base.
    w = np.broadcast_to(np.logical_and(x + True, x), (2, 4, 1))
    w *= 2
    return w


@found((np.arange(6.0).reshape(2, 3),))
def item_write_into_a_view_of_a_read_only_view(x):
    w = np.broadcast_to(x[0], (4, 3))[::2, 1:]
    v = x.T[::-1].diagonal()[:, None]
    x[1] = v.sum()          # x itself stays writeable
    w[0] = 1.0
    return w


@found((np.arange(9.0).reshape(3, 3), 1.75), (np.arange(3, dtype=np.float32), -2.0))
def negative_of_a_negative_constant_in_a_kernel(x, s):
    # (seed 1504) the C++ renderer printed np.negative(-1.0) as `--1.0`, a decrement
    x += np.maximum(x, x)
    return np.negative(-1.0), np.negative(x * -2.5), -(x - -np.inf), -np.float32(-0.0) * x, -(s * -1.5)


@found((np.array([-3.25, -3.5, 2.5]), np.ones((4, 1), bool)), (np.arange(3.0), np.ones((2, 1), bool)))
def one_element_array_stored_into_an_element_raises(x, m):
    # (seed 1811) x[1] = <an array of shape (1, 1)>: NumPy raises 'setting an array element
    # with a sequence.'; kiln broadcast it into the element. A slice takes it.
    x[1:2] = m.T @ m
    x[0, ...] = np.float32(2.5)
    x[-1] = m.T @ m
    return x


@found((_MAX_ONCE,), (np.arange(6.0).reshape(2, 3),))
def reshape_of_a_mask_selection_written_in_place(x):
    # functionalization wrote the reshaped value back with the selection's example length
    # (reshape to (9,)) where the data gave 8: a write through a reshaping view of a
    # selection whose size depends on the data now runs as Python
    v = x[x != x.max()]
    w = np.reshape(v, (-1,))
    w *= v
    return v, w


@found((np.arange(4.0), np.array(0.25), 2.0, 1), (np.arange(4.0) + 1, np.array(1.5), 3.0, 2),
       (np.arange(7.0), np.array(-1.0), 0.5, 3))
def arguments_named_like_the_wrappers_own_values(x, s0, buf0, _NT):
    # (seeds 2001, 2005, 2008, 2011) a user's argument `s0` met the wrapper's size symbol
    # s0 = x.shape[0] once the sizes went dynamic: the kernel read the size as the array
    s0[...] = 0.5 * buf0
    return x * s0 + buf0 * _NT, x[1:] * 2


@found((np.array([[10, 6], [2, 0]], np.uint8), {"n": 1, "scale": 1.75}))
def dict_store_before_an_op_that_raises(x, state):
    # (seed 2007) the store was replayed after the graph, so it was lost when a later op of
    # the same graph raised (uint8 *= -1: NumPy's OverflowError); the entry now reruns the
    # function as Python when its graph raises, so the store happens first, as in NumPy
    state["scale"] = x
    w = x[0]
    w *= -1
    return w


def _empty_loop_calls():
    col = lambda *v: np.array([[b] for b in v], np.bool_)
    return ((np.array([[True, False, True, True, False]]), np.array(True), col(False, True, False, True, False),
             np.array(-1.75)),
            (np.array([[False, False, False, False, True]]), np.array(False), col(True, True, True, True, True),
             np.array(1.75)))


@found(*_empty_loop_calls())
def loop_with_an_empty_body_between_writes(x0, x1, x2, s0):
    # (seed 2205) the loop node of `for i in range(n): pass`, run as generated Python
    # (kiln/ops/loop_python.py), printed a `for` with no body: IndentationError
    if x1.ndim == 2:
        s0[...] = True
        x0[0] += x0[0]
    else:
        np.abs(-1, out=s0[...])
    for i4 in range(x2.shape[0]):
        pass
    x0[x0] = -0.0
    x1[...] = True


class _Counter:
    def __init__(self):
        self.calls = 0
        self.last = None


@found((np.arange(4.0), [], {}, _Counter(), 2.0), (np.arange(4.0), [1], {"a": 2}, _Counter(), 0.0),
       (np.ones((3, 3)), [], {}, _Counter(), 1.0), (np.eye(3), [], {}, _Counter(), 1.0))
def stores_of_every_kind_before_an_op_that_raises(x, log, state, counter, d):
    # list, dict and attribute stores before: a float division by zero in an argument the
    # graph is given (call 1), an inverse of a singular matrix inside the graph (call 2)
    log.append(x.sum())
    state["m"] = x * 2
    counter.calls += 1
    counter.last = x[0]
    x += 1.0
    y = x / d * (1.0 / d)
    if x.ndim == 2:
        return np.linalg.inv(x - 1.0) + y
    return y


@found((np.array([[0.25, 0.0]]), np.array([0.75])),
       (np.array([[1.0, 2.0, 3.0], [3.0, 0.5, 3.0]]), np.array([-1.0, 0.0, 2.0])))
def two_selections_of_equal_length_meeting_in_a_join(x, y):
    # seed 2521: np.vstack of two x[mask] selections of the same example length asked
    # whether the two lengths are equal, and the entry guarded it with code that named
    # sizes known only once the graph ran (a SyntaxError building the entry): such
    # lengths now break the graph there
    n = np.count_nonzero(np.vstack((x[x != x.max()], x[x != x.max()])))
    k = 0
    while k < 1:
        x[0] = y
        k += 1
    return n


@found((np.array([1, 3, 6, -3, 0], np.int32),), (np.array([-6, 6, -1, -4, -5], np.int32),),
       (np.array([4, 2, 6], np.int32),), (np.linspace(-1.0, 1.0, 7),))
def slices_of_a_mask_selection(x):
    # seed 2510: np.diff(x[mask]) (and x[mask][1:]) sliced a length known only once the
    # graph ran, and the entry guarded the slice's length with code naming it (a
    # SyntaxError building the entry, every backend): such slices now break the graph
    v = (x % 3)[(x % 3) != (x % 3).max()]
    return np.diff(v), v[1:] * 2, v[::-1][:2]


@found((np.array(-2.25), np.array([[1.25]])), (np.array([1.0, 2.0]), np.array([3.0, -1.0, 4.0])),
       (np.zeros((2, 1)), np.array([[-1.0], [2.0]])),
       (np.linspace(-1.0, 1.0, 5), np.linspace(-1.0, 1.0, 5)[::-1]))
def in_place_update_by_a_mask_selection(x, y):
    # seed 3002: ``x += y[y > 0]`` with a 0-d x rebound x to the selection of x + y
    # (capture took it for the selection's own update) instead of writing into x, where
    # NumPy raises "non-broadcastable output operand"; a selection's own ``s += 1`` is a
    # new selection, and an elementwise op on it computes only the selected elements
    x += y[y > 0]
    s = y[y > 0]
    s += 1
    return x, s, np.sqrt(y[y > 0]) * 2, y


@found((np.arange(3.0), np.zeros((1, 1))), (np.array([4, 1, 4, 2], np.int32), np.zeros((2, 1))))
def a_selection_returned_twice_is_one_array(x, rows):
    # seed 3009: ``v = x[m]; w = v; return v, w`` (a selection taken after the graph)
    # returned two copies where NumPy returns one array twice
    v = x[x != x.max()]
    w = v
    for r in rows:           # (a loop over rows: the fuzzer's program had one)
        pass
    return v, w, r


@found((np.int64(3), np.float64(2.0)), (np.float64(-1.5), np.int64(7)))
def numpy_scalar_math_on_a_computed_scalar_and_a_bool(s, t):
    # seed 3018: ``np.maximum(np.float64(2.5), s) + True`` (NumPy scalar math, an extern
    # when a bool meets the float) read a buffer whose kernel the lowering had taken back
    # with the decomposition it tried first: NameError 'buf0' in the C++ wrapper
    return np.maximum(np.float64(2.5), s) + True, np.sin(t) - False, np.sqrt(abs(s)) * True


@found((np.array([6, 1, 2], np.int32), np.array(0, np.int32)),
       (np.array([0], np.int32), np.array(-6, np.int32)),
       (np.arange(8.0), np.array(1.5)))
def value_written_over_an_argument_that_is_then_filled(x0, x1):
    # seed 7004 (silently wrong): the scatter of ``out=x0[::-1]`` ran in place on the
    # caller's x0, a kernel then wrote ``v3 = x0 + x1`` over that result (so over x0), and
    # the copy of x0's new value (the fill) at the end overwrote v3: v3 came back all 1s
    v1 = (x0 + 0).copy()
    np.add(x0, x0, out=x0[::-1])
    v3 = x0 + x1
    x0.fill(1)
    return v1, v3


@found((np.array([238, 3], np.uint8),), (np.array(4, np.uint8),), (np.array([1, 2], np.int8),),
       (np.arange(3.0),))
def unused_value_whose_python_int_does_not_fit(x1):
    # seed 7267: ``w = x1.flatten(); w += -1`` on a uint8 x1, w never used: NumPy raises
    # OverflowError (NEP 50: -1 does not fit uint8); dead-code elimination dropped the call
    w = x1.flatten()
    w += -1
    v = x1 * 300
    return x1.sum()


@found((np.array([True, False, True]),), (np.array([[True, True], [False, True]]),),
       (np.array([True, True]),))
def square_of_a_bool_selection(x):
    # seed 7287: ``x[m] ** 2`` on a bool array is np.square (int8), as for any bool array;
    # a selection computed it as power (int64). Rows of a 1-d array are NumPy bools, whose
    # selection is still an array (``s[s != s.max()] ** 2``: int8, not scalar math's int64)
    out = [x[x] ** 2, x[x != x.max()] ** 2]
    for s in x:
        out.append(s[s != s.max()] ** 2)
    return out


@found((np.arange(1, 5), np.zeros(4)), (np.array([3, -2, 7], np.int32), np.zeros(5)))
def selection_taken_in_a_loop_the_loop_node_gave_up(x1, x0):
    # seed 8254: ``count_nonzero(w2)`` took the selection w2 inside a loop body that then
    # unrolled (w2 changes type); the taken selection named a node the rollback removed
    # (UnboundLocalError 'getitem_mask' in the graph's code)
    w2 = np.arange(5, dtype=np.float32)[np.arange(5, dtype=np.float32) > 0]
    for i4 in range(x0.shape[0]):
        x1 %= np.count_nonzero(w2)
        w2 = np.arange(3, dtype=np.float64).std(axis=-1, ddof=1) // 1.5
    return np.abs(x1), w2


@found((np.array([[1, -2]]), np.array([[5]])), (np.array([[1, -2]]), np.array([5])),
       (np.array([[1.5, 2.0], [-1.0, 3.0]]), np.array(7.0)))
def mask_write_of_a_2d_value_raises(a, v):
    # seed 9008 (silently wrong): ``b[b > 0] = v`` with a mask over every dim of b and a
    # (1, 1) value: NumPy raises TypeError ("requires a 0 or 1-dimensional input"); the C++
    # lowering wrote it as where(mask, v, b), and dropped it when b was not used
    b = a * 2
    b[b > 0] = v
    c = a + 1
    c[c > 0] = v
    return c


_F_ORDER = np.asfortranarray(np.array([[2, 1, 1, 4, 2], [5, 1, 3, 9, 10], [5, 3, 1, 3, 0]], np.uint8).T)


@found((_F_ORDER,), (np.ascontiguousarray(_F_ORDER),), (_F_ORDER[::-1],))
def ravel_of_a_joined_fortran_array_is_a_view(x0):
    # seed 9011 (silently wrong): NumPy's vstack of a Fortran-ordered operand is
    # Fortran-ordered, so its .T ravels as a view that sees the later write; kiln's alias
    # analysis gave the vstack a C-ordered stand-in (a copy)
    v1 = np.vstack((x0 > 2, (x0 > 2).mean(axis=-2, keepdims=True))).T
    v6 = v1.ravel()
    np.true_divide(v1, v1, out=v1)
    w = np.concatenate([x0 * 2, x0], axis=1).T.reshape(-1)
    x0 += 1
    return v6, w


@found((_F_ORDER, -2), (np.ascontiguousarray(_F_ORDER), 2))
def a_joined_fortran_array_returned_across_a_break(x0, s0):
    # seed 9011 as found: the C++ lowering allocated the vstack (a join) in C order, so
    # the .T that leaves the first graph was not C-contiguous and its ravel, in the graph
    # after the break, copied; the operand is compared with a computed Python int
    v1 = np.swapaxes(np.vstack(((s0 * s0 + s0) > x0, ((s0 * s0 + s0) > x0).mean(axis=-2, keepdims=True))), 0, -1)
    print(v1.shape, file=_SINK)
    v6 = v1.ravel()
    np.true_divide(v1, v1, out=v1)
    c = np.cumsum(x0, axis=0).T.ravel()
    return v6, c


@found((np.array(-6), np.zeros((1, 2), np.int64)), (np.array(2), np.array([[1, 2]])),
       (np.array(7), np.array([[1, 2, 3, 3]])))
def hstack_of_a_mask_selection_and_a_scalar(x0, v1):
    # seed 9111 (eager, cpp: ValueError where NumPy returned): hstack promotes the 0-d x0
    # to (1,) through concatenate's ``shapes``, which baked in the example's length of
    # v1[mask], a size known only when the graph runs; the shape rule now checks each
    # promoted shape against its array, so capture sees the size cannot be followed
    v6 = v1[v1 != v1.max()]
    return np.hstack((v6, x0)) - -1, np.vstack((v6, v6)), np.hstack((x0, v6, x0))


@found((np.array([1.5, -2.0, 4.0], np.float32), -3, 0.5), (np.array([1.5, -2.0, 4.0], np.float32), 3, -1.0),
       (np.array([[1.0, -1.0], [2.0, 0.0]]), 2 ** 40, 2.5))
def masked_update_by_a_number_argument(x1, s1, f):
    # seed 9702 (silently wrong): ``x1[x1 > 0] -= s1`` took s1 as the first call's number,
    # guarded only by its type: the masked ufunc's composite dropped the run-time numbers
    # its arguments were bound with (capture/selections.py)
    x1[x1 > 0] -= s1
    x1[x1 < 0] *= f
    print(x1, file=_SINK)
    y = x1 * 1
    y[y != 0] = y[y != 0] + s1
    return y


@found((np.zeros((1, 0, 1), bool),), (np.ones((2, 3), bool),), (np.zeros((0,), np.int8),))
def cast_of_an_empty_array_is_a_new_array(x0):
    # seed 9307 (aot_eager, cpp: int32 where NumPy gave int64): alias analysis took every
    # empty result of a view-like op for a view, so np.asarray(i2, dtype=np.int32) of an
    # empty int64 i2 "aliased" it and the write through it recast i2
    i2 = x0 * 2
    v6 = np.asarray(i2, dtype=np.int32)
    v6[-1:] = 0
    return i2, v6, np.asarray(x0[:0], dtype=np.float32), x0[:0]


_NAN_GRIDS = (np.array([[-np.inf, 0.109, 2.538, -2.888], [1.628, 1.1, -0.097, 1.659],
                         [np.nan, -0.856, -0.568, np.nan], [-1.915, 2.76, 2.483, 0.994]]),
              np.array([[np.nan, 1.578, -2.217, 0.671], [2.793, 1.341, 0.0, 2.709],
                        [0.439, -1.345, 0.391, 1.712], [-2.596, np.nan, -2.12, 0.092]]))


@found((_NAN_GRIDS[0].copy(), np.array(-1), False, 3), (_NAN_GRIDS[1].copy(), np.array(-3), False, 4))
def in_place_product_through_a_transpose_then_reads(x0, x1, s0, s1):
    # seed 9920 (cpp, silently wrong on AVX-512): NumPy computes ``x0.T *= x0`` as if from
    # a copy; GCC's SLP vectorizer miscompiled the unrolled kernel (kiln/runtime/build.py)
    v2 = x0.ravel().astype(np.float64)
    w3 = x0.T
    w3 *= x0
    v4 = (s1 - s1 - s0 * s0) + x0
    v5 = np.argmax(x0[x0 != x0.max()] != x1, axis=-1)
    print(np.asarray(x0, dtype=np.float64), file=_SINK)
    x0[0] = True
    return v2, w3, v4, v5


@found((np.ones(3, np.float32), -4.0), (np.ones(2), 1.5))
def ufunc_of_a_computed_python_float_and_a_float32(x, s):
    # seed 9431 (every backend: float64 where NumPy gives float32): a NumPy scalar constant
    # is a strong operand, so the computed Python float must stay weak beside it
    return np.add(2.0 + s, np.float32(0.5)), np.hypot(2.0 + s, np.float32(0.5)) // 0.5, x * (s * 2)


@found((np.zeros((0, 0, 3)),), (np.arange(36.0).reshape(3, 3, 4),), (np.arange(24.0).reshape(2, 3, 4),),
       (np.arange(60.0).reshape(3, 4, 5),))
def writes_through_reshapes_of_an_argument_and_of_a_product(p0):
    # seed 10004 (cpp, silently wrong): with run-time sizes the reshapes are extern calls
    # whose results view their operand; the memory plan reused the operand's buffer for
    # ``p0 * 2 - 1`` while the view of ``p0 - 1`` was still to be returned into p0
    for i1 in [p0, p0 * 2]:
        w2 = np.reshape(i1, (-1,))
        w2 -= 1
    n3 = float(p0.sum())
    return i1, n3


_HUGE = np.array([np.inf, -np.inf, np.nan, 3e9, -3e9, 1e19, -1e19, 2147483648.0, -2147483648.0, -0.25, 2.5, 0.0])


@found((_HUGE,), (_HUGE.astype(np.float32),))
def float_to_int_and_back_out_of_the_integers_range(x):
    # seed 13128 (cpp, silently wrong): the float -> int -> float round trip folded into
    # trunc() gave inf (1 / that: 0) where the conversion gives the integer's minimum
    with np.errstate(all="ignore"):
        return 1.0 / np.asarray(x, dtype=np.int32), x / x.astype(np.int64), \
            x.astype(np.int32) * 0.5


def _narrow_round_trips(x):
    # not a fuzzer find (its casts stay in range): 13128's class for the narrow integers.
    # x86 and NumPy convert a float to int8/int16/uint8/uint16 through int32 (300.0 -> 44,
    # NaN -> 0, -1.0 -> 255); the round trip was folded into trunc() (300.0)
    with np.errstate(all="ignore"):
        return x.astype(np.int8).astype(x.dtype), x.astype(np.uint8) * 0.5, \
            np.sqrt(np.abs(x.astype(np.int16))), x.astype(np.uint16).astype(np.float64) + 1, \
            x.astype(np.int32).astype(np.int64) * 1.0, x.astype(np.int16).astype(np.int32) / 2


_NARROW = np.array([300.0, -300.0, 1e10, -1e10, np.nan, np.inf, -np.inf, -1.0, -0.5, 256.0,
                    65537.5, 3e9, -3e9, 255.6, 2.0 ** 31, -0.0] * 3)


@pytest.mark.parametrize("backend", BACKENDS)
def test_float_to_narrow_int_and_back(backend):
    check_program(_narrow_round_trips, [(_NARROW,), (_NARROW.astype(np.float32)[::-1],)], backend)


_GRID = np.arange(32, dtype=np.int32).reshape(8, 4)


@found((_GRID[::2, ::2], -1.0), (_GRID[::-2, 1::2], -1.0), (_GRID[:4], -1.0), (_GRID.T[:, ::3], 1.0),
       (_GRID.T[:, ::3], -1.0))
def loop_writes_through_a_ravel_of_a_strided_argument(x, s):
    # seed 13133 (aot_eager, cpp: silently wrong): a loop node copied its carried arrays
    # contiguous, so np.ravel of x[::2, ::2] became a view there and the writes through it
    # reached the caller's array, where NumPy's ravel copies
    for i in range(x.shape[0]):
        if s > 0:
            pass
        else:
            w = np.ravel(x)
            w -= -1
            v = x.reshape(-1)
            v *= 2
    return x


@found((np.ones(3),), (np.arange(4.0),))
def ufunc_of_a_random_python_float_and_a_float32(x):
    # as seed 9431, for a Python float read from data (np.random.random() is a float)
    rng = np.random.default_rng(3)
    r = rng.random()
    return np.add(r, np.float32(0.5)), np.multiply(r, np.int8(3)), r * np.float32(2), x * r


_SEL = np.arange(-6, 18, dtype=np.int64).reshape(4, 6)


@found((_SEL, np.asfortranarray(np.arange(24).reshape(2, 3, 4))), (_SEL[::-1, ::2].astype(np.int8), np.ones(3, np.int16)))
def inplace_update_of_a_selection_keeps_its_dtype(x, y):
    # seed 13715 (silently wrong): ``v ^= np.sum(y)`` on an int32 selection v, with an
    # int64 sum, gave int64 where NumPy's in-place call casts into v (int32)
    v = x.astype(np.int32)[x > 2]
    v ^= np.sum(y)
    w = x[x < 5]
    w += np.int64(7)
    u = x.astype(np.uint8)[x % 2 == 0]
    u -= np.max(y)
    return v, w, u


@found((np.broadcast_to(np.arange(-2, 6, dtype=np.int32), (3, 8)),),
       (np.linspace(-1, 3, 12, dtype=np.float32).reshape(3, 4),),
       (np.arange(-4, 8, dtype=np.float16).reshape(4, 3).T,))
def mean_of_a_selection_with_a_dtype(x):
    # seed 13225 (silently wrong): np.mean(c[c > 0], dtype=np.float32) was float64 (a
    # float32 sum over an intp count); and x.mean(where=...) of float32 likewise
    c = np.cumsum(x, axis=0)
    s = c[c > 0]
    return np.mean(s, dtype=np.float32), s.mean(), np.mean(s, dtype=np.int64), \
        np.mean(x, where=x > 0), np.mean(x, axis=0, where=x > 1, dtype=np.float32), \
        x.mean(axis=1, keepdims=True, where=x != 0)


_ROW = np.arange(5.0).reshape(1, 1, 5) * 10


@found((np.arange(-3.0, 7.0).reshape(2, 5), _ROW),
       (np.ones((2, 5)), np.ones((1, 2, 5))),
       (np.ones((2, 5)), np.ones((1, 1, 5), bool)))
def copyto_from_a_source_with_leading_unit_axes(x, y):
    # seed 45913 (cpp: ValueError from broadcast_to): np.copyto drops a source's leading
    # unit axes, as x[...] = y does; its where mask keeps them and must broadcast as is
    np.copyto(x, y, where=x > 0)
    np.copyto(x[::-1], y * 2)
    if y.dtype == bool:
        np.copyto(x, 7, where=y)       # a mask of shape (1, 1, 5) into (2, 5): NumPy raises
    return x



@found((np.array([True, False, True]), np.array([2, 3, 1])), (np.arange(3), np.array([1, -1, 2])),
       (np.arange(3), np.array([1, 2, 3])), (np.arange(3, dtype=np.uint8), np.array([1, 2, 0], np.uint8)))
def unused_results_raise_on_their_values(x, y):
    # seed 46101 (every backend returned None): an integer power raises NumPy's ValueError
    # for a negative exponent even when nothing uses its value; dead-code elimination
    # dropped it. So did it a percentile of run-time q outside [0, 100] (a hand probe)
    v = np.power(x, y)             # a run-time exponent: raises on call 1
    if x.dtype == bool:
        w = x ** -1                # a constant one: raises on call 0
    p = np.percentile(x * 1.0, y * 40)     # raises on call 2
    return x + 1


@found((np.array(False),), (np.array(2.5),), (np.arange(3.0),))
def pad_of_a_0d_array_by_a_negative_width(x):
    # seed 46505 (every backend returned None): np.pad checks its widths for negatives
    # before broadcasting them to (ndim, 2), which for a 0-d array leaves none to check
    v = np.pad(x, 1)
    w = np.pad(x, -1)
    return v


@found((np.zeros(0), 0.5), (np.zeros(0, np.complex64), np.array([1.0, 2.0], np.float32)), (np.arange(3.0), 2))
def polyval_of_no_coefficients_is_zeros_like_x(p, x):
    # seed 46531 (3.13, eager: AttributeError on v4.dtype): np.polyval of an empty p is
    # NumPy's zeros_like(asanyarray(x)), an array of x's dtype; kiln returned the int 0
    return np.polyval(p, x)


@found((np.asfortranarray(np.arange(12.0).reshape(3, 4)[::-1]),))
def sort_of_a_fortran_array_updated_through_a_reversed_view_stays_fortran(x):
    # tests/fuzz/views.py seed 1038 (cpp: C-ordered where NumPy's is Fortran-ordered): the
    # kernel read np.sort's result C-ordered (the wrapper copies an extern's result so),
    # and index_put, laid out as its operand, kept that copy's order
    v = np.sort(x)
    v[::-1] += x
    return v


@found((np.arange(4.0)[::-1],))
def ravel_of_a_reversed_argument_updated_in_place_is_a_copy(x):
    # tests/fuzz/views.py seed 5040 (cpp: the result shared memory with x, so a caller's
    # write to it changed x): the kernel was moved to store straight into the caller's
    # reversed x (lowering/inplace.py), and the ravel, a view of the C-ordered buffer it
    # had been, was re-pointed at x with it; NumPy's ravel of a reversed x is a copy
    x += 1
    return x.ravel()


@found((np.broadcast_to(np.arange(1.0), (4,)),), (np.arange(8.0)[::2],), (np.arange(4.0),))
def ravel_of_a_view_of_an_argument_copies_where_numpy_does(y):
    # tests/fuzz/views.py seed 11555 (cpp: a view of the broadcast y, strides (0,)): the
    # extern ``y.view()`` has the argument's layout, not the C order of its buffer, so a
    # ravel of it runs as NumPy's (lowering/views.py ``_aliasing_extern``)
    v = y.view()
    return np.ravel(v), v

def _global_stores(x):
    global _G_LAST
    _G_LAST = x.sum()              # a global store breaks the graph; what follows compiles
    _G_SEEN.append(x[1] * 2)       # a store into a list a global holds
    w = x[0]
    w *= -1                        # OverflowError for uint8
    return w + _G_LAST


@pytest.mark.parametrize("backend", ["cpp", "eager", "aot_eager"])
def test_global_stores_before_an_op_that_raises(backend):
    global _G_SEEN, _G_LAST
    seen = {}
    for who, fn in (("numpy", _global_stores), ("kiln", kiln.compile(_global_stores, backend=backend))):
        _G_SEEN, _G_LAST = [], None
        with pytest.raises(OverflowError) as info:
            fn(np.arange(3, dtype=np.uint8))
        seen[who] = (str(info.value), _G_LAST, _G_SEEN)
    assert seen["kiln"] == seen["numpy"]


@found((np.zeros(3, np.int16), np.array([1.0, 2.0, 3.0], np.float32)),
       (np.zeros(3, np.int16), np.array([1.0, -32767.0, 2.0], np.float32)),
       (np.zeros(3, np.int8), np.array([1, 300, 2], np.int16)),
       (np.zeros(2, np.int32), np.array([1.0, np.nan])),
       (np.zeros(2, np.uint8), np.array([1, -200], np.int64)))
def a_numpy_scalar_stored_into_a_signed_integer_element_is_range_checked(x, y):
    # tests/fuzz/scalar_loops.py seed 100 (cpp): ``x[1] = y[1] * 2`` of float32 -32767.0 into
    # int16 stored -65534 wrapped (2) where NumPy's element store takes the value as int()
    # does and raises OverflowError ("Python integer -65534 out of bounds for int16"), NaN
    # ValueError; an unsigned element wraps (ops/scatter.py ``element_value``)
    x[1] = y[1] * 2
    return x


@found((np.zeros(5, np.int16), np.array([1, 2, 3, 4, 5], np.int64)),
       (np.zeros(5, np.int16), np.array([1, 2, 70000, 4, 5], np.int64)),
       (np.zeros(5, np.int64), np.array([1, 2, 2 ** 63, 4, 5], np.uint64)),
       (np.zeros(5, np.uint8), np.array([1, -2, 3, 300, 5], np.int16)),
       (np.zeros(5, np.int8), np.array([1, 2, 3, 130, 5], np.uint8)))
def a_numpy_integer_stored_into_a_narrower_signed_element_in_a_loop(x, y):
    # tests/fuzz/scalar_loops.py seed 100 (cpp): a loop node's store of an int64 element
    # 70000 into int16 wrapped to 4465 where NumPy raises OverflowError (uint64 2**63 into
    # int64: "Python int too large to convert to C long"); into uint8 NumPy wraps
    # (lowering/loops.py ``op_store_elem``: kiln_int_fits / kiln_uint_fits)
    for i in range(len(x)):
        x[i] = y[i] + y.dtype.type(1)
    return x


@found((np.zeros(0, np.int16),), (np.arange(5, dtype=np.int16),), (np.zeros(0, np.int16),))
def zero_trips_of_a_loop_that_changes_a_carried_values_type(x):
    # tests/fuzz/scalar_loops.py seed 108 (every backend): over an empty x the loop node
    # (its body branches, so even zero constant trips make one) returned np.int16(0), the
    # start value np.int8(0) converted to the type the body gives, where Python's loop
    # never runs and leaves np.int8(0) (capture/loop_node.py ``_build``)
    s = np.int8(0)
    for i in range(len(x)):
        if x[i] > 2:
            for j in range(i):
                if x[j] > 1:
                    break
        s = x[i] * 2
    return s


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", list(FOUND))
def test_found_by_fuzzer(name, backend, request):
    fn, calls, xfail, xfail_backends, strict = FOUND[name]
    if xfail and backend in xfail_backends:
        request.applymarker(pytest.mark.xfail(strict=strict, reason=xfail))
    check_program(fn, calls, backend)


def test_a_loop_node_carrying_nothing_prints_as_runnable_python():
    # the eager backend printed `loop = (,)` (a SyntaxError) for a loop node with no
    # carried values (found by the long fuzz run, seeds 302 and 503)
    from kiln.ops.loops import _print_loop

    class Body:
        arrays, writes_back, name, graph, cont, brk = (), False, "loop_body_1", None, None, None

    class Node:
        name, kwargs, args = "loop", {"body": Body()}, (0, 3, 1, (), ())

    lines = _print_loop(Node(), {}, lambda v, consts: repr(v),
                        lambda graph, consts: "def loop_body_1(i):\n    return ()\n")
    scope: dict = {}
    exec("\n".join(lines), scope)
    assert scope["loop"] == ()


@pytest.mark.parametrize("backend", ["aot_eager", "cpp"])
def test_a_read_only_view_of_an_intermediate_comes_back_read_only(backend):
    # (seed 1505's cause) np.broadcast_to of a value the graph computes is NumPy's read-only
    # view of it (stride 0), not a writeable copy
    def f(x):
        return np.broadcast_to(x * 2, (4, 3)), np.diagonal(x + np.ones((3, 3)))

    x = np.arange(3.0)
    for got, want in zip(kiln.compile(f, backend=backend)(x), f(x)):
        np.testing.assert_array_equal(got, want)
        assert got.flags.writeable == want.flags.writeable == False  # noqa: E712
        assert got.strides == want.strides


_F32_REDUCTIONS = {
    "mean over a middle axis": lambda x: x.mean(axis=-2, keepdims=True),   # seed 15507
    "mean over rows": lambda x: x.mean(axis=-1),
    "mean of everything": lambda x: x.mean(),
    "sum of everything": lambda x: x.sum(),
    "sum over rows": lambda x: x.sum(axis=-1),
    "mean of a product": lambda x: (x * x).mean(axis=-1),
    "var": lambda x: x.var(axis=0),
    "std": lambda x: x.std(axis=-1, ddof=1),
    "var of everything": lambda x: x.var(),
    "mean in float64": lambda x: x.mean(axis=-1, dtype=np.float64),
}


@pytest.mark.parametrize("name", sorted(_F32_REDUCTIONS))
@pytest.mark.parametrize("shape", [(5, 5, 3), (3, 7), (2, 40, 130), (3, 1000)])
def test_float32_means_and_sums_are_numpys_to_the_bit(name, shape):
    # (seed 15507) a float32 mean summed in float64 where NumPy sums in float32: up to 1 ulp
    # apart, which x // mean turned into different integers. NumPy's _mean/_var sum in the
    # input's dtype (pairwise along a contiguous run, row by row over leading axes, a whole
    # array in memory order), divide by the count in float64 and round back; so does kiln.
    # (x and a transposed copy in one compiled call, one build: no shape here is square,
    # so the two reductions iterate different frames and stay two kernels)
    f = _F32_REDUCTIONS[name]
    x = (np.random.default_rng(1).standard_normal(shape) * 100 + 7).astype(np.float32)
    xt = x.copy().T

    def both(a, b):
        return f(a), f(b)

    got = kiln.compile(both, backend="cpp")(x, xt)
    for g, arg, layout in zip(got, (x, xt), ("C", "transposed")):
        want = f(arg)
        assert np.asarray(g).dtype == np.asarray(want).dtype, layout
        np.testing.assert_array_equal(g, want, err_msg=layout)


def test_a_kernel_with_no_array_arguments_builds():
    # (seed 16012) np.exp(3, out=x) of an empty x, then an empty slice of it written: a
    # kernel with no buffer left printed `body(, 0, 1, nthreads)` and g++ failed (the
    # function then ran in the NumPy interpreter, with a warning)
    def f(x):
        np.exp(3, out=x)
        x[2:-2:1] = -0.0
        return x

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = kiln.compile(f, backend="cpp")(np.zeros((0,)))
    assert got.shape == (0,) and got.dtype == np.float64


@pytest.mark.parametrize("backend", ["aot_eager", "cpp"])
@pytest.mark.parametrize("like", ["full_like", "zeros_like", "ones_like"])
def test_a_like_array_is_laid_out_as_its_prototype_when_written_through_a_view(backend, like):
    # (seed 17029) np.full_like of a broadcast x is Fortran-ordered in NumPy (empty_like's
    # order='K'), so .ravel() of it is a copy and writing that copy leaves it alone;
    # functionalization's stand-in for it was C-ordered, so kiln wrote through a "view"
    make = {"full_like": lambda x: np.full_like(x, 2), "zeros_like": np.zeros_like,
            "ones_like": np.ones_like}[like]

    def f(x):
        v = make(x)
        w = v.ravel()
        w[...] = 7
        return v, w

    row = np.array([[5, -3, -6]], np.int64)
    for x in (np.broadcast_to(row, (4, 3)), np.asfortranarray(np.arange(12.0).reshape(4, 3)),
              np.arange(12.0).reshape(4, 3)):
        for got, want in zip(kiln.compile(f, backend=backend)(x), f(x)):
            np.testing.assert_array_equal(got, want)
            assert got.strides == want.strides


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "cpp"])
def test_a_numpy_scalar_inf_stays_a_numpy_scalar(backend):
    # (seed 18501) np.maximum(2.0, np.inf) is np.float64(inf), a NumPy scalar, so adding a
    # float32 array gives float64 (NEP 50); the eager graph's printed code wrote it as
    # float('inf'), a Python float (np.float64 is a float subclass), giving float32
    def f(x):
        return np.maximum(2.0, np.inf) + x, np.add(np.nan, 1.0) * x, np.multiply(-2.0, np.inf) - x

    x = np.zeros(5, np.float32)
    for got, want in zip(kiln.compile(f, backend=backend)(x), f(x)):
        assert got.dtype == want.dtype == np.float64
        np.testing.assert_array_equal(got, want)


# NumPy's maximum/minimum return the second operand on ties on x86 (its scalar loop is
# _mm_max_ss too), so a reduction that runs in order keeps the last of equal values. Over
# a contiguous row NumPy's answer depends on its SIMD tree (docs/fuzzing.md), not tested.
x86 = pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"),
                         reason="other CPUs' max instructions order signed zeros")


@x86
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("fn", ["max", "min"])
def test_the_max_of_signed_zeros_over_a_leading_axis_is_numpys(fn, dtype):
    # (seed 19519) the column max of -0.0, 0.0, 0.0 is +0.0 in NumPy; kiln kept the first
    rng = np.random.default_rng(19519)
    cases = [((3, 2), 0), ((3, 2), -2), ((7, 19), 0), ((4, 3, 5), 0), ((4, 3, 5), 1),
             ((4, 3, 5), (0, 1)), ((40, 33), 0)]
    for shape, axis in cases:
        f = kiln.compile(lambda x: getattr(x, fn)(axis=axis, keepdims=True), backend="cpp")
        for trial in range(4):
            x = rng.choice(np.array([-0.0, 0.0, -1.0, 1.0][:2 + trial % 3], dtype), size=shape)
            got, want = f(x), getattr(x, fn)(axis=axis, keepdims=True)
            np.testing.assert_array_equal(got, want)
            assert np.signbit(got).tolist() == np.signbit(want).tolist(), (shape, axis, x)


@x86
@pytest.mark.parametrize("ufunc", [np.maximum, np.minimum])
def test_elementwise_max_of_signed_zeros_is_the_second_operand(ufunc):
    # NumPy: np.maximum(-0.0, 0.0) is 0.0 and np.maximum(0.0, -0.0) is -0.0, on arrays
    # and scalars; kiln's Python-loop backend gave the first
    def pairs(x, y):
        out = np.empty_like(x)
        for i in range(x.shape[0]):
            out[i] = ufunc(x[i], y[i])
        return out

    x = np.array([-0.0, 0.0, -0.0, 0.0, np.nan, 1.0] * 3)
    y = np.array([0.0, -0.0, -0.0, 0.0, 0.0, np.nan] * 3)
    for f in (kiln.compile(pairs), kiln.compile(lambda x, y: ufunc(x, y), backend="cpp")):
        for a, b in ((x, y), (y, x), (x.astype(np.float32), y.astype(np.float32))):
            got, want = f(a, b), pairs(a, b)
            np.testing.assert_array_equal(got, want)
            assert np.signbit(got).tolist() == np.signbit(want).tolist()


def _out_into_a_slice(x0):
    y = x0 * 2
    np.negative(x0[1:], out=y[1:])          # a scatter into y: a copy of y, laid out as y
    return y, y.ravel()


def _out_into_a_slice_in_a_loop(x0):
    for i5 in [x0, x0 * 2]:
        np.floor_divide(-1.0, x0, out=i5[1:])
    w12 = i5.ravel()                         # Fortran-ordered i5: a copy in NumPy
    w12[...] = i5.ravel().sum(axis=-1, keepdims=True)
    return i5, w12


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", [_out_into_a_slice, _out_into_a_slice_in_a_loop])
def test_an_array_written_through_out_keeps_numpys_layout(fn, backend):
    # (seed 20522) y = x0 * 2 of a Fortran-ordered x0 is Fortran-ordered; after
    # np.negative(..., out=y[1:]) kiln's y was C-ordered (the scatter's operand realized in
    # C order, its result converted to C), so y.ravel() was a view of y, not NumPy's copy
    calls = [(np.asfortranarray(np.arange(1.0, 26.0).reshape(1, 5, 5)),),
             (np.asfortranarray(np.arange(1.0, 13.0).reshape(4, 3)),),
             (np.arange(1.0, 13.0).reshape(3, 4).T,)]
    if fn is _out_into_a_slice_in_a_loop:
        calls = calls[:1]                    # (NumPy raises for the others: out= shape)
    check_program(fn, calls, backend)


def _write_through_a_flip(x1, x2):
    v1 = x1 // x2                  # a fresh array
    w5 = np.flip(v1)               # a view of it with negative strides
    w5 -= v1                       # written through the view: v1 keeps its own layout
    return v1, w5


def _write_through_a_transpose_and_slice(x1, x2):
    v1 = x1 * 2
    v1.T[0] += 1
    w = v1[::-1, 1:]
    w *= x2
    return v1, w, v1.ravel()


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", [_write_through_a_flip, _write_through_a_transpose_and_slice])
def test_a_fresh_array_written_through_a_view_keeps_its_layout(fn, backend):
    # (seed 22002) functionalization wrote v1's new value as flip(v1 - flip(v1) ...), whose
    # layout (negative strides) kiln returned; NumPy wrote into v1's own memory
    calls = [(np.arange(1, 31, dtype=np.int64).reshape(5, 3, 2), np.array([2, 3], np.int32)),
             (np.asfortranarray(np.arange(1.0, 25.0).reshape(4, 3, 2)), np.array([3.0, 0.5])),
             (np.arange(1, 25, dtype=np.int64).reshape(3, 4, 2).transpose(1, 0, 2), np.array([2, 1]))]
    check_program(fn, calls, backend)


def _selected(k: int, dtype=np.float64) -> np.ndarray:
    x = -np.ones((4, 1), dtype)
    x[:k, 0] = np.arange(1, k + 1)
    return x


def _squeeze_a_selection(x):
    return x[x > 0].squeeze() + 1.0, np.squeeze(np.unique(x)) * 2


def _squeeze_a_selection_by_axis(x):
    return x[x > 0][None, :].squeeze(0) - 1, x[x > 0].reshape(-1, 1).squeeze(1) * 3


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", [_squeeze_a_selection, _squeeze_a_selection_by_axis])
@pytest.mark.parametrize("counts", [(1, 0, 3), (3, 1, 0), (0, 2, 1)])
def test_squeeze_of_a_selection_follows_its_run_time_length(fn, counts, backend):
    # (seed 23025) a mask selection's length is known only when the graph runs; squeeze
    # drops its axis when that length is 1 (a ufunc on it then gives a NumPy scalar), and
    # kiln had planned the squeeze on the example's (largest) length
    check_program(fn, [(_selected(k),) for k in counts] + [(_selected(1, np.float32),)], backend)


def _mean_of_nothing_then_a_reduction_numpy_runs(x):
    v = x.mean(axis=(0,), where=x > 0)          # NaN: a NumPy scalar the break specializes
    return np.max(v, axis=-1, initial=-5, where=v > 0), v


def test_a_nan_numpy_scalar_specialized_at_a_break_matches_itself(monkeypatch):
    # (fuzz5, alias seed 60005) the resume function's guard was ``___stack0 ==
    # np.complex128(nan+nanj)``, which no NaN passes: the entry just compiled rejected its
    # own call (with debug_checks; a user's call ran as Python, recompiling every time)
    monkeypatch.setattr(kiln.config, "debug_checks", True)
    f = kiln.compile(_mean_of_nothing_then_a_reduction_numpy_runs, backend="eager")
    for dtype in (np.complex128, np.float64):
        x = np.zeros(0, dtype)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got, exp = f(x), _mean_of_nothing_then_a_reduction_numpy_runs(x)
        assert type(got[0]) is type(exp[0]) and got[0] == exp[0] and np.isnan(got[1])


def _nonzero_of_a_0d_array(x, how):
    if how == 0:
        x[x.nonzero()] *= 2
    elif how == 1:
        return np.nonzero(x)
    return np.where(x)


def test_nonzero_of_a_0d_array_raises_numpys_message(monkeypatch):
    # (fuzz5, alias seed 60268) kiln's message had a sentence NumPy 2.4 no longer writes
    monkeypatch.setattr(kiln.config, "debug_checks", True)
    f = kiln.compile(_nonzero_of_a_0d_array, backend="eager")
    for how in range(3):
        with pytest.raises(ValueError) as exp:
            _nonzero_of_a_0d_array(np.array(2.0), how)
        with pytest.raises(ValueError) as got:
            f(np.array(2.0), how)
        assert str(got.value) == str(exp.value)


def _select_with_python_numbers(x, refused):
    if refused:                   # (np.copyto's same_kind: a Python int choice into uint8)
        return np.select([x > 1], [-3], default=x)
    return (np.select([x > 0, x < -1], [x, x * 2], default=-1), np.select([x > 1], [x], default=1e300),
            np.select([x > 1], [2.5], default=x), np.select([x > 1], [x], default=300))


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_select_casts_python_number_choices_as_numpy(backend):
    # (fuzz5, seed 51504 on NumPy 2.5) np.select makes each Python number an array of its
    # own dtype and copies it into the result, the default unsafely (-1 into uint8 is 255);
    # kiln spelled it as np.where(cond, x, -1), which NumPy 2.5 refuses ("Python integer -1
    # out of bounds for uint8"), and NumPy 2.4 took where NumPy's select raises
    x = np.array([[231, 99, 0], [1, 2, 3]], np.uint8)
    f = kiln.compile(_select_with_python_numbers, backend=backend)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for got, exp in zip(f(x, False), _select_with_python_numbers(x, False)):
            assert got.dtype == exp.dtype and np.array_equal(got, exp)
    with pytest.raises(TypeError) as exp:
        _select_with_python_numbers(x, True)
    with pytest.raises(TypeError) as got:
        f(x, True)
    assert str(got.value) == str(exp.value)


def _broadcast_a_numpy_scalar(x, write):
    v = x.sum()
    w = np.broadcast_to(v, (2,))
    if write:
        w[...] = 1
    return v, w


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_broadcast_to_of_a_numpy_scalar_is_read_only(backend):
    # (fuzz5, alias seed 61371) a view of a NumPy scalar became a copy (stop 47), which
    # was writeable: np.broadcast_to(s, shape)[...] = 1 wrote the copy where NumPy raises
    f = kiln.compile(_broadcast_a_numpy_scalar, backend=backend)
    v, w = f(np.arange(3.0), False)
    assert type(v) is np.float64 and v == 3.0 and w.tolist() == [3.0, 3.0] and not w.flags.writeable
    with pytest.raises(ValueError, match="assignment destination is read-only"):
        f(np.arange(3.0), True)


def _insert_python_values(x, v):
    return np.insert(x, 0, v)


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_insert_converts_python_values_as_numpy(backend):
    # (fuzz5 probe) np.insert converts Python values with the array's dtype, which refuses
    # what a cast wraps: np.insert(uint8_x, 0, -1) raises OverflowError, NaN into an int
    # array ValueError; kiln cast them (255, and whatever the cast of NaN gave)
    f = kiln.compile(_insert_python_values, backend=backend)
    for x, v in [(np.array([3, 0], np.uint8), -1), (np.arange(2), float("nan")), (np.arange(2, dtype=np.int8), [300]),
                 (np.array([3, 0], np.uint8), 2.5)]:
        try:
            exp = _insert_python_values(x, v)
        except (OverflowError, ValueError) as e:
            with pytest.raises(type(e)) as got:
                f(x, v)
            assert str(got.value) == str(e)
        else:
            got = f(x, v)
            assert got.dtype == exp.dtype and got.tolist() == exp.tolist()


def _arg_reduction_into(x, out, how):
    if how == 0:
        return np.argmax(x, axis=0, out=out)
    if how == 1:
        return x.argmin(axis=0, out=out)
    if how == 2:
        return np.nansum(x, ddof=1)
    if how == 3:
        return np.nanargmax(x, axis=0, out=out)
    return np.average(x, axis=how - 7)          # (how 4: axis=-3, NumPy's AxisError; 5: -2)


def test_keywords_numpy_refuses_on_reductions_raise():
    # (fuzz5 probe) np.argmax's (and nanargmax's) out= must cast safely to intp (a float or
    # uint64 one raises TypeError; an int8 one wraps), np.nansum, np.nanprod, np.nanmean
    # take no ddof=, and np.average names its axis in its AxisError: kiln wrote the indices
    # into the float out, ignored the ddof, and raised its own AxisError
    f = kiln.compile(_arg_reduction_into, backend="eager")
    x = np.array([[1.0, -2.0, 0.0], [3.0, 0.0, -1.0]])
    for out, how in [(np.zeros(3), 0), (np.zeros(3, np.uint64), 1), (None, 2), (np.zeros(3, np.int8), 0),
                     (np.zeros(3, np.int32), 1), (np.zeros(3, np.float32), 3), (None, 3), (None, 4), (None, 5)]:
        try:
            exp = _arg_reduction_into(x, None if out is None else out.copy(), how)
        except (TypeError, ValueError) as e:
            with pytest.raises(type(e)) as got:
                f(x, out, how)
            assert str(got.value) == str(e)
        else:
            got = f(x, None if out is None else out.copy(), how)
            assert got.dtype == exp.dtype and got.tolist() == exp.tolist()


def _update_then_a_composite_numpy_refuses(x, y):
    x += x
    return np.all(y, axis=(0,), where=y < 3)      # (a 0-d y: NumPy's AxisError)


def test_numpys_error_inside_a_composite_is_the_users(monkeypatch):
    # (fuzz5, alias seeds 65331, 65367, with debug_checks) an error a composite spelling
    # raises as NumPy would (here a reduction's AxisError under np.all(where=)) was taken
    # for kiln's own: with debug_checks it came out of capture before the update of x ran;
    # a user's run broke the graph as "internal_error, a kiln bug". It is the user's error
    # now (a graph break that runs the line as Python), as an error at bind is
    monkeypatch.setattr(kiln.config, "debug_checks", True)
    f = kiln.compile(_update_then_a_composite_numpy_refuses, backend="eager")
    x, y = np.array([1.0, 2.0]), np.array(-2.75, np.float32)
    with pytest.raises(np.exceptions.AxisError) as exp:
        _update_then_a_composite_numpy_refuses(x.copy(), y)
    with pytest.raises(np.exceptions.AxisError) as got:
        f(x, y)
    assert str(got.value) == str(exp.value) and x.tolist() == [2.0, 4.0]


def _ufunc_outs_numpy_refuses(x, how):
    if how == 0:
        return np.divmod(x, 3, out=None)        # (NumPy: "'out' must be a tuple of arrays")
    if how == 1:
        return np.modf(x, out=None)
    return np.add(x, x, out=np.zeros(2))        # (NumPy: "operands could not be broadcast ...")


def test_ufunc_outs_numpy_refuses_raise_its_errors(monkeypatch):
    # (fuzz5 probe) np.divmod(x, 3, out=None) ran (NumPy raises TypeError for a two-output
    # ufunc's out=None); an out= a ufunc's result does not broadcast into made kiln's capture
    # fail in np.broadcast_shapes (an internal error, with debug_checks its message)
    monkeypatch.setattr(kiln.config, "debug_checks", True)
    f = kiln.compile(_ufunc_outs_numpy_refuses, backend="eager")
    for how in range(3):
        with pytest.raises((TypeError, ValueError)) as exp:
            _ufunc_outs_numpy_refuses(np.ones(3), how)
        with pytest.raises(exp.type) as got:
            f(np.ones(3), how)
        assert str(got.value) == str(exp.value)


def _masked_update_none_selected(x):
    v = x * 1.0
    v[v > 0] -= 3.0                     # (breaks the graph: the selection's length is data)
    w = x * 1.0
    w[:, x[0] > 0] *= 2.0
    return np.sum(np.sin(v)) + np.sum(np.cos(w))


def test_grad_of_a_masked_update_that_selects_nothing():
    # (fuzz6, grads.py seed 25) kiln.grad of a compiled function: the value's cotangent for
    # `v[m] -= c` scattered every masked-out position's zero at rank 0, which a value of
    # length 0 (m all False) does not have: IndexError in the backward graph
    from test_programs_grads import _fd
    x = -np.array([[1.0, 2.0, 0.5], [0.25, 3.0, 1.5]])
    want = _fd(_masked_update_none_selected, (x,), 0)
    got = kiln.grad(kiln.compile(_masked_update_none_selected, backend="aot_eager"))(x)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)


def _ufunc_out_into_a_reversed_window(x, r):
    np.add(r, 0, out=x[::-1])
    return x[0] * 2


def test_ufunc_out_into_a_reversed_view_of_a_window_on_eager():
    # (fuzz6, seed 96003) x an as_strided window whose elements overlap (x[i, j] is
    # base[i + j]): NumPy's ufunc with out=x[::-1] keeps, of aliased elements, the write of
    # the last index in C order; the eager graph's np.copyto(out, result) flipped the
    # negative stride and kept another. An eager graph writing its inputs now runs the
    # function as Python for such an argument, as aot's do
    def window():
        return np.lib.stride_tricks.as_strided(np.arange(1.0, 10.0), (5, 5), (8, 8))
    r = np.linspace(-1, 2, 25).reshape(5, 5)
    f = kiln.compile(_ufunc_out_into_a_reversed_window, backend="eager")
    for _ in range(2):
        want, got = window(), window()
        _ufunc_out_into_a_reversed_window(want, r)
        f(got, r)
        assert got.tolist() == want.tolist()


def _two_gathers(x):
    return np.sum(x[[0, -1, 1]] ** 2) + np.sum(x[[0, -1]] * 3)


def test_grad_of_gathers_summed_on_a_dynamic_size():
    # (fuzz6 probe of dynamic sizes in backward graphs) cpp: the backward's
    # zeros_like(g, shape=(x.shape[0], 2)) (each gather's cotangent) took the first
    # dynamic call's size for its buffer, as no input of it had a dynamic size (the size
    # was in its params), so the kernel adding the two scatters ran over 5 rows of 6: the
    # last row's gradient was 3.0, not 2 * x[-1] + 3
    from test_programs_grads import _fd
    g = kiln.grad(kiln.compile(_two_gathers))
    for n in (3, 5, 6):
        x = np.arange(2.0 * n).reshape(n, 2)
        np.testing.assert_allclose(g(x), _fd(_two_gathers, (x,), 0), rtol=1e-6, atol=1e-8)


def _while_with_a_continue_on_data(x, y, s):
    out = []
    cnt = 0
    k = 0
    while k < cnt + 1 and y.sum() > s:
        k += 1
        del out[:1]
        if np.any(x > 1):
            continue
    else:
        out.append(list(map(float, x)))
    return out, k


def test_a_continue_on_data_in_a_graph_while_loop_is_not_its_test(monkeypatch):
    # (fuzz6, lang.py seed 96150) `if np.any(x > 1): continue` in a while loop's body jumps
    # to the head, so capture took it for the loop's test and tried a graph while node of
    # the same loop inside the trace of its body, and so on: a RecursionError inside kiln
    # (with debug_checks raised; a user's run broke the graph and ran Python)
    monkeypatch.setattr(kiln.config, "debug_checks", True)
    f = kiln.compile(_while_with_a_continue_on_data, backend="eager")
    x, y = np.array([1.25, 2.0, -0.75]), np.array([-1.75, -0.25, -1.75])
    for s in (1.25, -9.0):
        assert f(x, y, s) == _while_with_a_continue_on_data(x, y, s)


def _in_compares_earlier_items_first(x, d):
    # ``d in [x, d]``: Python compares ``x == d`` before it meets ``d`` itself (seed 211 of
    # tests/fuzz/pysem.py: kiln answered True from the identity alone)
    return d in [x, d], x in (x, d)


def test_in_a_list_of_arrays_compares_the_items_before_an_identical_one():
    compiled = kiln.compile(_in_compares_earlier_items_first, backend="eager")
    for x, d in ((np.arange(3.0), np.zeros(4)), (np.array([2.0]), np.array([1.0])),
                 (np.arange(3.0), np.arange(3.0))):
        try:
            expected = _in_compares_earlier_items_first(x, d)
        except ValueError as e:
            with pytest.raises(ValueError, match=str(e)[:30]):
                compiled(x, d)
        else:
            assert compiled(x, d) == expected


def _unused_cast_of_complex_values(x):
    y = x.astype(np.int8)       # (unused: NumPy still casts, and warns)
    return x * 2


@pytest.mark.parametrize("backend", ["eager", "cpp"])
def test_an_unused_cast_of_complex_values_to_real_still_warns(backend):
    # tests/fuzz/pysem.py seed 2032: dead-code elimination dropped the cast and its
    # ComplexWarning ("Casting complex values to real discards the imaginary part")
    x = np.array([1 + 2j, -0.5j])
    with pytest.warns(np.exceptions.ComplexWarning, match="discards the imaginary part"):
        got = kiln.compile(_unused_cast_of_complex_values, backend=backend)(x)
    np.testing.assert_array_equal(got, x * 2)


def _bool_scalar_math(x):
    # NumPy has no bool scalar math: where np.bool_'s method runs, the ufunc does
    return x[1] // 0, x[0] + np.int8(127), 1 // x[1], x[0] - np.int8(-128)


@pytest.mark.parametrize("backend", ["eager", "cpp"])
def test_arithmetic_on_a_bool_scalar_runs_numpys_ufunc_not_its_scalar_math(backend):
    # tests/fuzz/pysem.py seed 3155: 'True // x[0]' of a bool array warned "divide by zero
    # encountered in scalar floor_divide" where NumPy says "... in floor_divide", and
    # np.True_ + np.int8(127) warned an overflow NumPy does not check
    x = np.array([True, False])
    with warnings.catch_warnings(record=True) as want:
        warnings.simplefilter("always")
        expected = _bool_scalar_math(x)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        got = kiln.compile(_bool_scalar_math, backend=backend)(x)
    assert [(type(v), v) for v in got] == [(type(v), v) for v in expected]
    assert [(str(w.message), w.lineno) for w in seen] == [(str(w.message), w.lineno) for w in want]


def _list_of_a_numpy_scalar_compared(x):
    a = x.sum() - True
    return x.tolist() == [a], [x[0]] != [a]


def test_lists_holding_numpy_scalars_compare_to_a_python_bool():
    # tests/fuzz/pysem.py seed 5033: 'x.tolist() == [a]' with a an np.int64 gave np.False_
    # (the item's comparison), where a list's == is always a Python bool
    compiled = kiln.compile(_list_of_a_numpy_scalar_compared, backend="eager")
    for x in (np.array([-4], np.int16), np.array([3]), np.array([2, 1])):
        got, expected = compiled(x), _list_of_a_numpy_scalar_compared(x)
        assert [(type(v), v) for v in got] == [(type(v), v) for v in expected]


def _numpy_scalar_times_a_python_int(x, t):
    return x[0] * t


def test_a_first_call_whose_python_int_is_out_of_bounds_still_returns_numpy_scalars():
    # tests/fuzz/pysem.py seed 4126 (cpp): the first call's t = 2**40 raised NumPy's
    # OverflowError (out of bounds for uint8), and the wrapper, which asks NumPy on
    # stand-ins whether a 0-d result is a scalar, asked with that t: the later calls
    # returned array(64, dtype=uint8) where NumPy returns np.uint8(64)
    compiled = kiln.compile(_numpy_scalar_times_a_python_int, backend="cpp")
    x = np.array([8], np.uint8)
    with pytest.raises(OverflowError, match="out of bounds for uint8"):
        compiled(x, 2 ** 40)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # (200 * 8 overflows: NumPy's warning, tested elsewhere)
        for t in (200, 3):
            got, expected = compiled(x, t), _numpy_scalar_times_a_python_int(x, t)
            assert type(got) is type(expected) and got == expected


def test_a_class_made_by_exec_without_a_module_name_has_its_attributes_guarded():
    # hand probe beside tests/fuzz/pysem.py: a class statement run by exec(source, {}) has
    # __module__ == "builtins", and capture took it for a C type whose attributes never
    # change: C.scale = -1.0 between calls was not seen
    ns: dict = {}
    exec("class C:\n    scale = 2.0\ndef f(x):\n    return x * C.scale\n", ns)
    compiled = kiln.compile(ns["f"], backend="eager")
    x = np.ones(2)
    np.testing.assert_array_equal(compiled(x), x * 2)
    ns["C"].scale = -1.0
    np.testing.assert_array_equal(compiled(x), -x)


def _scaled_by_a_default(x, scale=1.5):
    return x * scale


def test_new_defaults_given_to_a_compiled_function_are_used():
    # hand probe beside tests/fuzz/pysem.py: after f.__defaults__ = (-2.0,) the entry
    # checked in C (fastcheck SimpleEntry) still bound the defaults it had copied; the
    # Python entry checks that they are the same tuple, and now the C one does too
    compiled = kiln.compile(_scaled_by_a_default, backend="eager")
    x = np.array([1.0, 2.0])
    try:
        for _ in range(2):
            np.testing.assert_array_equal(compiled(x), x * 1.5)
        _scaled_by_a_default.__defaults__ = (-2.0,)
        np.testing.assert_array_equal(compiled(x), x * -2.0)
        np.testing.assert_array_equal(compiled(x, 3), x * 3)
    finally:
        _scaled_by_a_default.__defaults__ = (1.5,)


@dataclasses.dataclass
class _Record:
    a: np.ndarray
    k: float = 2.0


def _replaces_a_dataclass(x, d):
    d.k *= 2
    return dataclasses.replace(d, k=1.0).k


def test_kilns_own_calls_while_it_compiles_a_helper_are_not_intercepted(monkeypatch):
    from kiln.config import config
    monkeypatch.setattr(config, "cost_model", False)
    monkeypatch.setattr(config, "debug_checks", True)
    # hand probe beside tests/fuzz/pysem.py (3.13): dataclasses.replace, a helper that
    # broke, was compiled on its own when the segment called it; compiling it, kiln called
    # dataclasses.replace itself (capture/newer_opcodes.py), the frame hook intercepted that
    # call too, and so on: RecursionError on the first call (frame_hook.paused)
    compiled = kiln.compile(_replaces_a_dataclass, backend="eager")
    for _ in range(2):
        d, e = _Record(np.ones(2)), _Record(np.ones(2))
        assert compiled(np.ones(2), d) == _replaces_a_dataclass(np.ones(2), e)
        assert d.k == e.k and np.array_equal(d.a, e.a)


def _element_read_then_updated_in_place(x):
    a = x[1]
    x[1:] += 1
    return a


def test_an_element_read_before_its_window_is_updated_in_place_keeps_its_value():
    # tests/fuzz/pysem.py seed 8123 (cpp): 'a = x[0]; x[0] += 1; return a' returned the new
    # element: the kernel stored x[0] + 1 straight into the caller's x (window_writes.py)
    # and the wrapper read the output x[0] from x after it
    compiled = kiln.compile(_element_read_then_updated_in_place, backend="cpp")
    x, y = np.arange(3.0), np.arange(3.0)
    got, expected = compiled(x), _element_read_then_updated_in_place(y)
    assert type(got) is type(expected) and got == expected
    np.testing.assert_array_equal(x, y)


def _negative_into(x, y):
    np.negative(y, out=x)
    return x


def test_an_out_whose_sizes_the_result_no_longer_meets_raises_numpys_error_under_dynamic():
    # tests/fuzz/views.py seed 7015 (eager, dynamic=True): compiled for f(x, x + 1), the
    # entry took f(x, x.T) (no guard tied y's sizes to x's) and raised copyto's "could not
    # broadcast input array from shape (3,2) into shape (2,3)"; the sizes are guarded equal
    # now (capture/array_writes.py), so that call recompiles and NumPy raises its own
    compiled = kiln.compile(_negative_into, backend="eager", dynamic=True)
    x = np.arange(6).reshape(2, 3)
    np.testing.assert_array_equal(compiled(x, x + 1), -(np.arange(6).reshape(2, 3) + 1))
    with pytest.raises(ValueError, match=r"^operands could not be broadcast together with shapes \(3,2\) \(2,3\) $"):
        compiled(x, x.T)


def _unused_where(x, y):
    np.where(x > 0, y, 0)
    return len(x)


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "cpp"])
def test_an_unused_elementwise_call_whose_run_time_sizes_may_not_broadcast_stays(backend):
    # tests/fuzz/views.py seed 7263 (dynamic=True, every backend): compiled for f(x, x + 1),
    # f(x, x.T) returned where NumPy raises: the unused np.where was dropped as dead code,
    # and its operands' sizes are separate symbols no guard ties (capture/dims.py
    # ``sizes_meet``; ir/passes.py ``must_stay``)
    compiled = kiln.compile(_unused_where, backend=backend, dynamic=True)
    x = np.arange(12.0).reshape(3, 4)
    assert compiled(x, x + 1) == 3
    with pytest.raises(ValueError, match=r"^operands could not be broadcast together with shapes \(3,4\) \(4,3\) \(\) $"):
        compiled(x, x.T)


def _fill_a_copy(y, s):
    v = y.copy()
    v.fill(s)
    return y


@pytest.mark.parametrize("dtype", [np.int8, np.float32])
def test_an_unused_fill_with_a_complex_value_into_a_real_array_raises(dtype):
    # tests/fuzz/views.py seed 7375 (every backend): x.fill(1.5 - 0.5j) converts with int()
    # or float(), a TypeError; the filled copy unused, dead-code elimination dropped the
    # fill (ops/meta.py fill_may_raise said nothing of complex values)
    with pytest.raises(TypeError) as expected:
        _fill_a_copy(np.ones(2, dtype), 1.5 - 0.5j)
    with pytest.raises(TypeError) as got:
        kiln.compile(_fill_a_copy, backend="eager")(np.ones(2, dtype), 1.5 - 0.5j)
    assert str(got.value) == str(expected.value)


def _flatten_then_reshape(y):
    v = y.flatten()
    return v.reshape(v.shape), v * 2


def test_flatten_of_run_time_sizes_has_their_product_for_its_size():
    # tests/fuzz/views.py seed 7308 (dynamic=True, every backend): v = y.flatten() of a
    # (3, 4) y took y.shape[1] for its one size (flatten is declared pointwise, and its
    # dims were broadcast from y's): v.reshape(v.shape) raised "cannot reshape array of
    # size 12 into shape (4,)" (capture/dims.py ``_broadcast_result``)
    compiled = kiln.compile(_flatten_then_reshape, backend="eager", dynamic=True)
    for shape in ((3, 4), (2, 5)):
        y = np.arange(np.prod(shape)).reshape(shape)
        for got, expected in zip(compiled(y), _flatten_then_reshape(y)):
            np.testing.assert_array_equal(got, expected)


def _write_into_a_broadcast_scalar(s):
    v = np.broadcast_to(s, (2,))
    v += s
    return v


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_broadcast_to_of_a_numpy_scalar_argument_is_read_only(backend):
    # tests/fuzz/views.py seed 12180: np.broadcast_to(s, (2,)) of a NumPy scalar argument
    # (no array input, so no base to take read-only from) was written by ``v += s`` and
    # ``v[0] = 1`` where NumPy raises "output array is read-only" (capture/opcall.py)
    with pytest.raises(ValueError, match="^output array is read-only$"):
        _write_into_a_broadcast_scalar(np.float64(1.0))
    with pytest.raises(ValueError, match="^output array is read-only$"):
        kiln.compile(_write_into_a_broadcast_scalar, backend=backend)(np.float64(1.0))


def _selection_cast_to_its_own_dtype(x):
    v2 = x[x > 0]
    v5 = v2.astype(np.float64, copy=False)
    v6 = x.astype(x.dtype, copy=False)
    return v5, v2, v6


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_astype_to_the_same_dtype_without_a_copy_is_the_array_itself(backend):
    # tests/fuzz/views.py seed 7791 (every backend): ``v5 = v2.astype(np.float64,
    # copy=False)`` of a float64 boolean selection ``v2 = x[x > 0]`` returned a second
    # array where NumPy returns v2 itself (the selection is applied after the graph, to
    # each output on its own): capture now answers NumPy's no-op astype with its operand
    compiled = kiln.compile(_selection_cast_to_its_own_dtype, backend=backend)
    for x in (np.array([1.0, -2.0, 3.0]), np.array([-1.0, 2.0, 0.5, 4.0])):
        v5, v2, v6 = compiled(x)
        assert v5 is v2 and v6 is x
        np.testing.assert_array_equal(v2, x[x > 0])


def _flat_item_writes(x, s):
    x.flat[::2] = 0
    x.flat[0] = s
    return x


def _flat_item_of_an_array(x):
    x.flat[1] = x[1:2] * 2
    return x


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_a_flat_item_write_that_numpy_cannot_convert_raises_its_value_error(backend):
    # tests/fuzz/methods.py seed 21 (every backend): ``v.flat[0] = s`` of an int8 ``v`` and
    # ``s = 1.5 - 0.5j`` raised TypeError("int() argument must be ...") where NumPy's
    # single-item write raises ValueError("Error setting single item of array."), also for
    # 300 into int8 (a[i] = 300: OverflowError), NaN, and a value of one or more dims
    compiled = kiln.compile(_flat_item_writes, backend=backend)

    def outcome(fn, x, s):
        try:
            return fn(x.copy(), s).tolist()
        except ValueError as e:
            return str(e)
    for x, s in ((np.ones(3, np.int8), 1.5 - 0.5j), (np.ones(3, np.int8), 300), (np.ones(3, np.uint8), -1),
                 (np.ones(3), 1j), (np.ones(3, np.int8), np.float32("nan")), (np.ones(3, np.int8), 7),
                 (np.ones(3, np.int16), np.int8(-3))):
        assert outcome(compiled, x, s) == outcome(_flat_item_writes, x, s)
    with pytest.raises(ValueError, match=r"^Error setting single item of array\.$"):
        kiln.compile(_flat_item_of_an_array, backend=backend)(np.ones(3))


def _write_the_real_part_then_compare(x, y, s):
    y.real[...] = s
    y.imag[:, :1] = s
    return y > s, y * 2


def test_a_write_through_real_keeps_the_layout_of_the_array_it_writes():
    # tests/fuzz/methods.py seed 345 (aot_eager, cpp): ``y.real[...] = s; return y > s`` of
    # a transposed complex ``y`` returned a C-ordered result where NumPy's follows y's
    # Fortran order: the value put back through .real/.imag (complex_parts) had its own
    # layout, not that of y's memory (ops/complex.py ``put_back_real``)
    compiled = kiln.compile(_write_the_real_part_then_compare, backend="aot_eager")
    x, x2 = (np.arange(6.0).reshape(2, 3).astype(np.complex64) for _ in range(2))
    for got, want in zip(compiled(x, x.T, 2), _write_the_real_part_then_compare(x2, x2.T, 2)):
        np.testing.assert_array_equal(got, want)
        assert got.strides == want.strides


def _initial_and_decimals(x, s, d):
    return x.max(initial=s, where=x > 0), x.min(initial=s), x.round(d)


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_reduction_initial_and_round_decimals_are_converted_as_numpy_converts_them(backend):
    # stop 57 hand probe beside tests/fuzz/methods.py: ``x.max(initial=np.uint8(200))`` of an
    # int8 x cast 200 to -56 where NumPy converts initial as a single item's write (a NumPy
    # scalar range-checked as its Python value: OverflowError; a 0-d array casts), and
    # ``x.round(2**63 - 1)`` of an integer x returned x where NumPy raises OverflowError
    # (decimals is a C int)
    def outcome(fn, s, d):
        try:
            return repr(fn(np.arange(-2, 4, dtype=np.int8), s, d))
        except (OverflowError, ValueError) as e:
            return f"{type(e).__name__}: {e}"
    compiled = kiln.compile(_initial_and_decimals, backend=backend)
    for s, d in ((np.uint8(200), 0), (np.float64(300.5), 0), (np.array(200), 1), (2.5, 2**63 - 1),
                 (np.int16(-3), -2**31 - 1), (np.int16(-3), 2**31 - 1)):
        assert outcome(compiled, s, d) == outcome(_initial_and_decimals, s, d)
    # methods.py seed 3111: an initial computed at run time (x.argmax(): 0) was cast while
    # capturing from a stand-in: a bool min's initial became True
    x, y = np.array([7, 3, 5], np.uint32), np.array([[True, False, True]])
    got = kiln.compile(_computed_initial, backend=backend)(x, y)
    assert repr(got) == repr(_computed_initial(x, y))


def _computed_initial(x, y):
    return np.minimum.reduce(y, axis=-1, where=y > 0, initial=x.argmax()), y.max(initial=x.argmax())


def _fortran_like_plus(x, s):
    return np.zeros_like(x, order="F") + s, np.full_like(x, s, order="F") * x


def test_a_fortran_ordered_like_array_computed_on_keeps_fortran_order():
    # stop 57 hand probe beside tests/fuzz/methods.py (cpp): ``np.zeros_like(x, order='F') +
    # s`` of a C-ordered x returned a C-ordered result where NumPy's is Fortran-ordered: the
    # layout rule took C-ordered operands for a C-ordered result (ops/result_layout.py)
    compiled = kiln.compile(_fortran_like_plus, backend="cpp")
    for got, want in zip(compiled(np.ones((2, 3)), 2.0), _fortran_like_plus(np.ones((2, 3)), 2.0)):
        np.testing.assert_array_equal(got, want)
        assert got.strides == want.strides


def _flat_of_a_numpy_scalar_after_a_break(x, s):
    y = x * 2
    kiln.graph_break()
    return y, [v for v in s.flat], list(x.take(-1, axis=-1).flat)


def test_the_flat_iterator_of_a_constant_scalar_is_made_on_each_call():
    # tests/fuzz/methods.py seed 1435 (every backend): ``[v for v in s.flat]`` of a NumPy
    # scalar ``s`` (specialized, so a constant) returned [] from the second call on: the
    # flatiter made while capturing was held as a constant and the first call consumed it
    # (capture/variables/builder.py ``wrap_constant_attr``). And ``x.take(-1, axis=-1)`` of
    # a 0-d x, which NumPy takes as from a 1-d array, broke the graph with an AxisError
    # (ops/take.py)
    compiled = kiln.compile(_flat_of_a_numpy_scalar_after_a_break, backend="eager")
    x = np.array(1, np.int16)
    for _ in range(3):
        assert repr(compiled(x, np.int8(3))) == repr(_flat_of_a_numpy_scalar_after_a_break(x, np.int8(3)))
    report = kiln.explain(lambda a: a.take(-1, axis=-1) + np.take(a, [0, 0], axis=0))(x)
    assert report.graph_break_count == 0, report.break_reasons


def _round_complex(x):
    return x.round(1), np.round(x.T, -1), x[0, 0].round(2)


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_round_of_complex_values_rounds_each_part_on_its_own(backend):
    # tests/fuzz/methods.py seed 3083 (every backend): x.round(1) of complex64 1.75 - 0.875j
    # gave 1.8000001 - 0.90000004j (a complex division by 10) where NumPy rounds the real
    # and imaginary parts each on its own: 1.8 - 0.9j (ops/numeric.py ``_round``)
    x = (np.array([1.75, -0.875, 12.5, 0.05, 3.14159, 25.0]).reshape(2, 3) * (1 - 0.5j)).astype(np.complex64)
    for got, want in zip(kiln.compile(_round_complex, backend=backend)(x), _round_complex(x)):
        assert repr(got) == repr(want) and type(got) is type(want)
    # seed 2751: rounded into a copy of x in x's memory order (order='K'), not np.round's 'A';
    # seed 3350: an integer array's round is such a copy too (a broadcast one's is not C)
    y = np.asfortranarray(x)[::-1]
    b = np.broadcast_to(np.arange(3, dtype=np.uint16), (2, 3))
    assert kiln.compile(lambda v: v.round(1), backend=backend)(b).strides == b.round(1).strides
    for got, want in zip(kiln.compile(_round_complex, backend=backend)(y), _round_complex(y)):
        assert repr(got) == repr(want) and getattr(got, "strides", None) == getattr(want, "strides", None)


def _real_of_a_real_array(x):
    return x.real.astype(np.int8), x.real is x, np.real(x) * 2


def test_the_real_part_of_a_real_array_is_the_array_itself():
    # tests/fuzz/methods.py seed 3274 (cpp): ``x.real.astype(np.int8)`` of a transposed int16
    # x returned a C-ordered array where NumPy's follows x's Fortran order: ``.real`` of a
    # real array, NumPy's x itself, was a view op whose value the kernel read C-ordered
    # (ops/complex.py ``_part_normalizer``)
    compiled = kiln.compile(_real_of_a_real_array, backend="cpp")
    x = np.arange(6, dtype=np.int16).reshape(3, 2).T
    got, want = compiled(x), _real_of_a_real_array(x)
    assert repr(got) == repr(want)
    assert [v.strides for v in got[::2]] == [v.strides for v in want[::2]]



def _complex_carried_from_a_float(x):
    acc = -1.5
    n = len(x)
    for i in range(n - 1, -1, -1):
        acc = x[n - 1 - i]
    return acc


def _division_that_promotes(x, y):
    return x[0] / y[0], x[1] ** 0.5, np.int8(-2) ** 0.5


def _a_branch_not_taken_would_warn(x, acc):
    out = np.float32(0)
    for i in range(len(x)):
        v = x[i]
        if v < 0:
            out += np.float32(1)
        else:
            out += v * acc      # -inf * 0 on the path not taken: NumPy never computes it
    return out


def _warnings_of(fn, args):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = fn(*args)
    return result, sorted({str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)})


@pytest.mark.parametrize("backend", ["eager", "cpp"])
def test_a_carried_value_that_becomes_complex_starts_as_python(backend, monkeypatch):
    # tests/fuzz/scalar_loops.py seed 145 (every backend): a float start value the body
    # rebinds to a complex128 element raised KeyError('np.complex128') (no scalar function
    # converts to it; with KILN_DEBUG_CHECKS, else the loop unrolled on the error): the
    # loop unrolls on purpose now (capture/loop_node.py ``_enclosing_value``)
    from kiln.config import config
    monkeypatch.setattr(config, "debug_checks", True)
    x = np.array([1 + 2j, 3, 4, 5j])
    assert repr(kiln.compile(_complex_carried_from_a_float, backend=backend)(x)) == \
        repr(_complex_carried_from_a_float(x))


@pytest.mark.parametrize("backend", ["eager", "cpp"])
@pytest.mark.parametrize("fn, args", [
    (_division_that_promotes, (np.array([0, -2]), np.array([0.0], np.float32))),
    (_a_branch_not_taken_would_warn, (np.array([-np.inf, 1.0, 2.0, -0.5, 3.0], np.float32), 0)),
])
def test_scalar_warnings_as_numpy_names_them(fn, args, backend):
    # tests/fuzz/scalar_loops.py seeds 204, 256, 299, 320 (cpp): ``np.int64(0) /
    # np.float32(0)`` warned "invalid value encountered in scalar divide" where NumPy,
    # whose scalar math promotes neither operand to the other's type, runs the ufunc:
    # "... in divide"; so does a Python float with a NumPy integer (``np.int8(-2) ** 0.5``:
    # "... in power") (ops/scalar_math.py ``uses_scalar_math``). Seeds 217, 324 (eager): a
    # loop body's operation on a path not taken (``v * acc`` of -inf and 0 where ``v < 0``
    # went the other way) warned "invalid value encountered in scalar multiply": its
    # operands are 1 off the path now, as those of an operation that may raise
    # (capture/loop_predicates.py ``may_warn``)
    got = _warnings_of(kiln.compile(fn, backend=backend), args)
    want = _warnings_of(fn, args)
    assert repr(got[0]) == repr(want[0])
    assert got[1] == want[1]


def _python_float_against_a_complex_scalar(x):
    for i in range(len(x)):
        if math.exp(x[i].real) >= x[i]:     # (a Python float the graph computes)
            return i, math.exp(x[0].real) * x[1]
    return -1, math.exp(x[0].real) < x[1]


@pytest.mark.parametrize("backend", ["eager", "cpp"])
def test_a_python_float_meets_a_complex_scalar_in_its_scalar_math(backend):
    # tests/fuzz/scalar_loops.py seed 1176 (eager): a Python float the graph computes
    # (``math.exp(x[i].real)``, a PyValueVariable) met the complex128 scalar as a 0-d
    # array, so ``>=`` was np.greater_equal, which warns "invalid value encountered in
    # greater_equal" of NaN, where Python's complex scalar math is silent: beside NumPy
    # scalars alone it is now a NumPy scalar operand (capture/opcall.py ``_weak_values``)
    for x in (np.array([complex(np.nan, 0.0), 1j, 2.0]), np.array([1 + 1j, complex(np.nan, 1.0)])):
        got = _warnings_of(kiln.compile(_python_float_against_a_complex_scalar, backend=backend), (x,))
        want = _warnings_of(_python_float_against_a_complex_scalar, (x,))
        assert repr(got[0]) == repr(want[0])
        assert got[1] == want[1]


def _complex_scalar_quotient(x):
    return 2**40 / x[1] + 1.5


def test_complex_scalar_division_of_a_nan_warns_as_numpys_scalar_math():
    # tests/fuzz/scalar_loops.py seed 1176 (cpp): ``2**40 / x[1]`` of complex nan+0j gave no
    # "invalid value encountered in scalar divide": kiln_cdiv's ordered compare of the NaN
    # raises the flag as NumPy's scalar math does, but NumPy's complex scalar math was not
    # claimed (ops/fp_errors.py _COMPLEX_SCALAR) and a NaN the kernel read dropped "invalid"
    # (fp_flags.py nan_quiet); a zero divisor's "divide by zero" and an inf's too
    calls = [(np.array([1 + 1j, complex(np.nan, 0.0)]),), (np.array([1 + 1j, 0j]),),
             (np.array([complex(np.inf, 1.0), complex(np.inf, 0.0)]),), (np.array([2 + 1j, 1 - 1j]),),
             (np.array([1 + 1j, complex(0.0, np.nan)], np.complex64),)]
    check_program(_complex_scalar_quotient, calls, "cpp")
