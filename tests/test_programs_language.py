"""Programs written to hunt bugs in what capture does with Python itself, checked like
tests/test_programs.py (values, dtypes, shapes, exceptions, argument states, aliasing):
generators, closures and recursion, lazy zip/enumerate, argument forwarding, user objects,
textbook algorithms written with index loops, and writes into arguments between reads.
Stop 36 found with them: a recursive helper broken at depth 32 (RecursionError), zip read
eagerly (stale reads, 0.10x NumPy), an iterator rebuilt twice after a break. Each program
runs on cpp and eager (every distinct graph costs one g++ build).
"""
from __future__ import annotations

import enum
import inspect
import sys

import numpy as np

from tests.test_programs import program_registry, program_test

_rng = np.random.default_rng(3636)
PROGRAMS, program = program_registry()   # name -> (fn, the calls it is checked on)


def rn(*shape):
    return _rng.standard_normal(shape)


# ----------------- Python features: generators, closures, recursion, dicts, while loops


@program((rn(5),), (np.arange(4.0),))
def genexpr_sum(x):
    return sum(v * v for v in x), max(x), sorted(x.tolist())[:2]


@program((rn(3, 4),))
def iterate_rows(m):
    out = []
    for i, row in enumerate(m):
        out.append(row.sum() * i)
    return np.array(out), [r.max() for r in m]


@program((rn(6),))
def try_except_linalg(x):
    try:
        m = np.outer(x, x)
        inv = np.linalg.inv(m)
    except np.linalg.LinAlgError as e:
        return "singular", str(e)
    return "ok", inv


@program((rn(4),))
def closure_and_lambda(x):
    k = 3.0
    f = lambda v: np.sin(v) * k
    def g(v):
        return f(v) + x.mean()
    return g(x), list(map(float, x[:2]))


@program((rn(3, 3),))
def dict_accumulate(m):
    stats = {}
    for name, fn in (("mean", np.mean), ("std", np.std), ("max", np.max)):
        stats[name] = fn(m, axis=0)
    return stats


@program((rn(5),))
def recursion_helper(x):
    def fib_weights(n):
        return [1.0] if n == 1 else fib_weights(n - 1) + [float(n)]
    w = np.array(fib_weights(len(x)))
    return (w * x).sum()


@program((rn(5), rn(5)))
def walrus_and_ternary(a, b):
    if (n := np.count_nonzero(a > 0)) > 2:
        return a[a > 0].mean() if n else 0.0
    return (b if b.sum() > 0 else -b).cumsum()


@program((rn(4, 3),))
def unpack_shape(x):
    n, d = x.shape
    *lead, last = x.shape
    mu, sd = x.mean(0), x.std(0)
    return (x - mu) / sd, n * d, lead, last


@program((rn(3),))
def generator_fn(x):
    def pairs(a):
        for i in range(len(a) - 1):
            yield a[i], a[i + 1]
    return [p * q for p, q in pairs(x)]


@program((rn(6),))
def while_with_break(x):
    i, tot = 0, 0.0
    while True:
        if i >= len(x) or tot > 1.0:
            break
        tot += abs(x[i])
        i += 1
    return i, tot


# ---------------------------------- zip and enumerate (lazy iterators) and user objects


@program((rn(4), rn(4)))
def dict_of_zip(a, b):
    d = dict(zip(["w", "x", "y", "z"], a * b))
    return d, sorted(zip(a.tolist(), b.tolist()))


@program((rn(3, 2),))
def unzip_pairs(m):
    xs, ys = zip(*m)
    return np.array(xs), np.array(ys)


class Acc:
    def __init__(self):
        self.total = np.zeros(3)
        self.n = 0
    def add(self, v):
        self.total += v
        self.n += 1
        return self


@program((rn(4, 3),))
def object_state(m):
    acc = Acc()
    for row in m:
        acc.add(row)
    return acc.total / acc.n, acc.n


@program((rn(8),))
def nested_zip_enumerate(x):
    s = 0.0
    for i, (a, b) in enumerate(zip(x[:-1], x[1:])):
        s += (b - a) * i
    return s


@program((rn(6),))
def zip_strict_unequal(x):
    try:
        return [a + b for a, b in zip(x, x[1:], strict=True)]
    except ValueError as e:
        return str(e)


# ---------------- arguments: **kwargs and *args forwarding, enums, methods, __getitem__


@program((rn(3),))
def nonlocal_counter(x):
    n = 0
    def bump(v):
        nonlocal n
        n += 1
        return v + n
    y = bump(x)
    y = bump(y)
    return y, n


def _opts_helper(x, *, alpha=1.0, beta=0.0, **rest):
    return alpha * x + beta + rest.get("gamma", 0.0)


@program((rn(4),))
def kwargs_forwarding(x):
    opts = {"alpha": 2.0, "gamma": 0.5}
    return _opts_helper(x, beta=1.0, **opts)


def _varargs_helper(*arrays, axis=0):
    return np.concatenate(arrays, axis=axis)


@program((rn(2, 2), rn(2, 2)))
def varargs_forwarding(a, b):
    parts = [a, b, a + b]
    return _varargs_helper(*parts, axis=1), _varargs_helper(a, b)


class Mode(enum.Enum):
    SUM = 1
    MEAN = 2


@program((rn(4), Mode.SUM), (rn(4), Mode.MEAN))
def enum_arg(x, mode):
    if mode is Mode.SUM:
        return x.sum()
    return x.mean()


class Model:
    def __init__(self, w):
        self.w = w
        self.steps = 0
    @property
    def norm(self):
        return np.linalg.norm(self.w)
    def step(self, g, lr=0.1):
        self.w = self.w - lr * g
        self.steps += 1
        return self.norm


@program((Model(rn(4)), rn(4)))
def method_calls_and_property(m, g):
    a = m.step(g)
    b = m.step(g, lr=0.2)
    return a, b, m.steps, m.w


class Grid:
    def __init__(self, a):
        self.a = a
    def __getitem__(self, ij):
        i, j = ij
        return self.a[i % self.a.shape[0], j % self.a.shape[1]]
    def __len__(self):
        return self.a.shape[0]


@program((Grid(rn(3, 3)),))
def user_getitem(g):
    return g[4, -1] + g[0, 0], len(g)


# ----------- textbook algorithms written with index loops (loop nodes and scalar loops)


@program((_rng.integers(0, 50, 12),), (np.array([3.0, 1.0, 2.0]),))
def bubble_sort(a):
    a = a.copy()
    n = len(a)
    for i in range(n):
        for j in range(n - 1 - i):
            if a[j] > a[j + 1]:
                a[j], a[j + 1] = a[j + 1], a[j]
    return a


@program((np.array([1, 2, 3, 1, 2]), np.array([2, 3, 1, 2])))
def edit_distance(s, t):
    m, n = len(s), len(t)
    D = np.zeros((m + 1, n + 1), dtype=np.int64)
    D[:, 0] = np.arange(m + 1)
    D[0, :] = np.arange(n + 1)
    for i in range(1, m + 1):
        for j in range(1, n + 1):
            cost = 0 if s[i - 1] == t[j - 1] else 1
            D[i, j] = min(D[i - 1, j] + 1, D[i, j - 1] + 1, D[i - 1, j - 1] + cost)
    return D[m, n]


@program((np.log(np.abs(rn(4, 3)) + 0.1), np.log(np.abs(rn(3, 3)) + 0.1), np.log(np.full(3, 1 / 3))))
def viterbi(logB, logA, logpi):
    T, S = logB.shape
    delta = logpi + logB[0]
    back = np.zeros((T, S), dtype=np.int64)
    for t in range(1, T):
        scores = delta[:, None] + logA
        back[t] = scores.argmax(axis=0)
        delta = scores.max(axis=0) + logB[t]
    path = [int(delta.argmax())]
    for t in range(T - 1, 0, -1):
        path.append(int(back[t, path[-1]]))
    return path[::-1], delta.max()


@program((rn(6), 0.5))
def two_pointer_pairs(x, tol):
    s = np.sort(x)
    i, j, count = 0, 1, 0
    n = len(s)
    while j < n:
        if s[j] - s[i] <= tol:
            count += j - i
            j += 1
        else:
            i += 1
            if i == j:
                j += 1
    return count


@program((np.array([5, 3, 8, 1, 9, 2]),))
def running_max_index(a):
    best, idx = a[0], 0
    out = []
    for i, v in enumerate(a):
        if v > best:
            best, idx = v, i
        out.append(idx)
    return np.array(out)


# --- writes into arguments: snapshots between writes, raises after them, aliasing arguments


@program((rn(6),))
def snapshot_between_writes(x):
    x[1:] += 1
    y = x * 2
    x[:2] = 0
    z = x.sum()
    x[3:] *= y[3:]
    return y, z


@program((rn(6), 1), (rn(6), 0))
def raise_after_writes(x, k):
    x[:3] += 10
    x[3:] -= 10
    if k:
        raise ValueError("after writes")
    return x


@program(lambda: (lambda b: (b, b[1:]))(np.arange(8.0)))
def aliasing_args(a, v):
    a[:4] += 1
    v[:] *= 2
    return a.sum(), v.sum()


@program((rn(5, 4),))
def view_returned_after_writes(x):
    x[0] += 1
    x[:, 1] = x[:, 0]
    r = x[1:, ::2]
    x[1:, 0] = -1
    return r


@program((rn(10),))
def write_chain_with_reads_of_old(x):
    old = x.copy()
    x[::2] += x[1::2]
    x[1::2] = old[::2] * 3
    x[-1] = x[0]
    return old, x


@program((rn(4, 4),))
def write_then_extern_then_write(m):
    m[0] += 1
    inv = np.linalg.inv(m + 5 * np.eye(4))
    m[1] = inv[0]
    m[2:] *= 2
    return inv


@program((rn(6), rn(6)))
def two_args_both_written(a, b):
    a[1:] += b[:-1]
    b[:3] = a[3:]
    a[0] = b.sum()
    return a, b


@program((rn(8),))
def in_place_in_loop(x):
    for i in range(3):
        x[i:] += i
        x[:i] -= 1
    return x.max()


@program((np.arange(12.0).reshape(3, 4),))
def transpose_view_write(m):
    t = m.T
    t[0] += 100
    m[:, -1] = t[1]
    return m, t


@program((rn(6),))
def write_via_out_param(x):
    np.multiply(x[:3], 2, out=x[3:])
    np.add(x, 1, out=x)
    return x


# ----------------- functions that read their own frame: locals(), vars(), eval()
# (a break ran them in a segment's frame: locals() gave {'___stack1': <built-in function
# locals>} where Python gives the user's names)

@program((rn(4), 0.5), (rn(3, 2), 2.0))
def results_from_locals(x, scale):
    y = np.tanh(x) * scale
    z = y.sum(axis=0)
    return {k: v for k, v in locals().items() if k != "scale"}


@program((rn(4),), (rn(2, 3),))
def report_vars_after_work(x):
    centred = x - x.mean()
    spread = float(np.abs(centred).max())
    names = sorted(vars())
    return names, centred * 2, spread


@program((rn(5), "x * 2 + y"), (rn(3), "np.sqrt(np.abs(y)) - x"))
def eval_a_formula_on_locals(x, formula):
    y = np.cos(x)
    return eval(formula), y


# ... and calls that read the caller's frame: np.bmat of a string looks its names up there
# (numpy/matrixlib/tests/test_defmatrix.py TestCtor.test_basic), a helper reads
# sys._getframe(1) or inspect.currentframe().f_back; compiled they saw a segment's frame
# (NameError: name 'A' is not defined; a missing local)

def _caller_local(name):
    return sys._getframe(1).f_locals.get(name, "missing")


def _caller_local_by_inspect(name):
    return inspect.currentframe().f_back.f_locals.get(name, "missing")


@program((rn(2, 2),), (np.eye(3),))
def block_matrix_from_names(x):
    A = x * 2
    B = x + 1
    return np.bmat("A,B;B,A"), x.sum()


@program((rn(3), "y"), (rn(2, 2), "x"))
def helpers_read_the_callers_locals(x, name):
    y = np.tanh(x)
    return _caller_local(name), _caller_local_by_inspect(name), y * 2


@program((rn(3),))
def read_its_own_frame(x):
    y = np.exp(x)
    return sys._getframe().f_locals["y"] + 1


test_program = program_test(PROGRAMS, ["cpp", "eager"])
