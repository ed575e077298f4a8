"""Python numbers meeting NumPy scalars: the result's exact type is Python's operator
protocol's. ``complex + np.float64`` is a Python complex (np.float64 is a Python float,
so complex.__add__ takes it), ``float + np.float64`` an np.float64 (a subclass's
reflected method goes first), ``int + np.float32`` an np.float32 (NumPy's, NEP 50).
Compiled vs plain Python, for every operator and both orders, with the Python number a
constant and a run-time argument: the result's type and bits, or the exception."""
import math
import warnings

import numpy as np
import pytest

import kiln

OPERATORS = {"add": "+", "sub": "-", "mul": "*", "truediv": "/", "floordiv": "//", "mod": "%",
             "pow": "**", "lt": "<", "eq": "==", "ne": "!="}
PYTHON = {"complex": 1.5 - 2j, "float": 2.5, "int": 3, "bool": True}
NUMPY = {"float64": np.float64, "float32": np.float32, "int64": np.int64,
         "complex128": np.complex128, "bool": np.bool_}


def _make(symbol, python_first, constant):
    """A function of (x, p) applying the operator (written as Python code, as users do)
    to the NumPy scalar x.max() and the Python number p or ``constant``."""
    p = "p" if constant is None else repr(constant)
    body = f"{p} {symbol} n" if python_first else f"n {symbol} {p}"
    ns: dict = {}
    exec(compile(f"def f(x, p):\n    n = x.max()\n    return {body}\n", __file__, "exec"), ns)
    return ns["f"]


def _bits(v):
    if isinstance(v, (complex, np.complexfloating)):
        return _bits(v.real), _bits(v.imag)
    if isinstance(v, (float, np.floating)):
        return "nan" if math.isnan(v) else (float(v), math.copysign(1.0, float(v)))
    return v


def _outcome(fn, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            r = fn(*args)
        except Exception as e:   # (TypeError: complex // ..., ZeroDivisionError)
            return type(e), str(e)
    return type(r), _bits(r)


# every Python type on the eager backend (capture decides the types); the C++ backend's
# kernels for the two whose results Python's own operators can give
BACKEND_CASES = [(p, "eager") for p in sorted(PYTHON)] + [("complex", "cpp"), ("float", "cpp")]


def _make_all(symbol, python_first, cases):
    """One function of (x0, ..., x4, p) computing ``_make``'s expression for each
    (constant, NumPy dtype) of ``cases`` and returning them as a tuple: one build for all."""
    names = list(NUMPY)
    lines = [f"def f({', '.join(f'x{k}' for k in range(len(names)))}, p):"]
    lines += [f"    n{k} = x{k}.max()" for k in range(len(names))]
    terms = []
    for constant, name in cases:
        p, n = "p" if constant is None else repr(constant), f"n{names.index(name)}"
        terms.append(f"{p} {symbol} {n}" if python_first else f"{n} {symbol} {p}")
    lines.append(f"    return ({''.join(t + ', ' for t in terms)})")
    ns: dict = {}
    exec(compile("\n".join(lines) + "\n", __file__, "exec"), ns)
    return ns["f"]


@pytest.mark.parametrize("python_first", [True, False], ids=["python_first", "numpy_first"])
@pytest.mark.parametrize("op", sorted(OPERATORS))
@pytest.mark.parametrize("python,backend", BACKEND_CASES)
def test_result_type_is_pythons_protocol(python, backend, op, python_first, monkeypatch):
    monkeypatch.setenv("KILN_COST_MODEL", "0")
    monkeypatch.setenv("KILN_RECOMPILE_LIMIT", "1000")
    p = PYTHON[python]
    xs = [np.array([0.5, 2.0]).astype(dtype) for dtype in NUMPY.values()]
    wants, raising = {}, []
    for constant in (None, p):
        fn = _make(OPERATORS[op], python_first, constant)
        for name, x in zip(NUMPY, xs):
            wants[constant, name] = _outcome(fn, x, p)
            if issubclass(wants[constant, name][0], Exception):
                raising.append((constant, name))
    # the cases that raise, one function per constant called with each dtype (as users do)
    for constant in {c for c, _ in raising}:
        compiled = kiln.compile(_make(OPERATORS[op], python_first, constant), backend=backend)
        for name, x in zip(NUMPY, xs):
            if (constant, name) in raising:
                assert _outcome(compiled, x, p) == wants[constant, name], (name, constant)
    # the rest: one function computing all of them (one build), each result checked
    cases = [c for c in wants if c not in raising]
    if cases:
        compiled = kiln.compile(_make_all(OPERATORS[op], python_first, cases), backend=backend)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = compiled(*xs, p)
        assert len(got) == len(cases)
        for (constant, name), g in zip(cases, got):
            assert (type(g), _bits(g)) == wants[constant, name], (name, constant)


@pytest.mark.parametrize("op", ["add", "sub", "mul", "eq", "truediv"])
def test_complex_and_float64_compiled(op, monkeypatch):
    # the C++ backend computes + - * == in the kernel and reads back Python's type
    monkeypatch.setenv("KILN_COST_MODEL", "0")
    fn = _make(OPERATORS[op], True, 1.5 - 2j)
    compiled = kiln.compile(fn)
    for data in ([0.5, 2.0], [np.inf, 1.0], [-0.0, -1.0]):
        x = np.array(data)
        assert _outcome(compiled, x, 0) == _outcome(fn, x, 0), data


def test_complex_sum_still_feeds_array_work():
    # the Python complex the graph computed is an operand of an array op, in the graph
    def f(x):
        return ((2 + 4j) + x.sum()) * x
    x = np.array([1.0, -2.5])
    np.testing.assert_array_equal(kiln.compile(f)(x), f(x))
    assert kiln.explain(f)(x).graph_break_count == 0
