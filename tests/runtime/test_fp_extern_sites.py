"""A ufunc op no kernel computes (np.log of a complex array, np.ldexp) runs as NumPy's
ufunc, which warns at the Python frame calling it: compiled code calls it from a frame at
the user's line (ops/value_warnings.py ufunc_at), so the warning names the user's file
and line, as NumPy's call does, on every backend."""
import warnings

import numpy as np
import pytest

import kiln


def _log_complex(z):
    return np.log(z) + 1


def _ldexp(a, b):
    return np.ldexp(a, b) + 1


def _record(fn, *args):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        out = fn(*args)
    return out, [(w.category, str(w.message), w.filename, w.lineno) for w in seen]


def _same_as_numpy(fn, backend, args, warned):
    """``fn`` compiled on ``backend`` gives NumPy's results and its warnings (the same
    messages, at the same file:line, in the same order); NumPy gives ``warned`` of them
    (an int: exactly; a range: within it)."""
    exp, want = _record(fn, *(a.copy() for a in args))
    got, seen = _record(kiln.compile(fn, backend=backend), *(a.copy() for a in args))
    for g, e in zip(got, exp):
        np.testing.assert_array_equal(g, e)
    assert (len(want) in warned if isinstance(warned, range) else len(want) == warned) and seen == want


CASES = {"log_complex": (_log_complex, (np.array([0j, 1 + 1j]),)),
         "ldexp": (_ldexp, (np.array([1e300, 1.0]), np.array([100, 1])))}


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "cpp"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_extern_ufunc_warns_at_the_users_line(name, backend, monkeypatch):
    monkeypatch.setenv("KILN_COST_MODEL", "0")
    fn, args = CASES[name]
    exp, want = _record(fn, *args)
    got, seen = _record(kiln.compile(fn, backend=backend), *args)
    np.testing.assert_array_equal(got, exp)
    assert want and seen == want


def test_default_filter_shows_it_once_per_line():
    # the user's module registry: the default filter shows it once, as NumPy's
    compiled = kiln.compile(_ldexp)
    args = CASES["ldexp"][1]
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("default")
        globals().pop("__warningregistry__", None)
        for _ in range(3):
            compiled(*args)
    assert len(seen) == 1 and seen[0].filename == __file__


# NumPy calls kiln makes for the user from its own Python (scalar math, x[i] = v,
# np.add.at, np.copyto, astype): each runs from a frame at the user's line (Op.impl_at,
# ir/graph.py numpy_call_at), so its warnings name that line as NumPy's do.

def _scalar_divide(x):
    return np.float64(1.0) / x[0]


def _stores(x, v, z):
    y = x.copy()
    np.add.at(y, [0, 0], v[:2])          # invalid value encountered in at
    w = np.zeros(2)
    np.copyto(w, z, casting="unsafe")    # ComplexWarning
    u = v.copy()
    np.multiply.at(u, [2, 2], 1e300)     # overflow encountered in multiply
    return y, w, z.astype(np.float64), u  # ComplexWarning


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "cpp"])
def test_numpy_calls_kiln_makes_warn_at_the_users_line(backend, monkeypatch):
    monkeypatch.setenv("KILN_COST_MODEL", "0")
    x = np.array([0.0, 1.0])
    exp, want = _record(_scalar_divide, x)
    got, seen = _record(kiln.compile(_scalar_divide, backend=backend), x)
    assert got == exp and want and seen == want
    args = (np.zeros(3, np.int8), np.array([np.nan, np.inf, 2.0]), np.array([1 + 1j, 2 + 0j]))
    _same_as_numpy(_stores, backend, args, 4)


def _methods(x):
    return x.sum(), x.cumprod(), x.mean()


def _setitems(x, v, z):
    y = x.copy()
    y[1:] = v[1:]                        # NaN, inf into int8: invalid value in cast
    w = np.zeros(2)
    w[:1] = z[:1]                        # ComplexWarning
    return y, w


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_a_write_warns_at_the_users_line(backend):
    """``x[i] = v`` runs NumPy's write from the user's line (cpp: see docs/fuzzing.md,
    stop 49, what is left)."""
    args = (np.zeros(3, np.int8), np.array([np.nan, np.inf, 2.0]), np.array([1 + 1j, 2 + 0j]))
    _same_as_numpy(_setitems, backend, args, 2)


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_a_method_runs_as_the_method(backend):
    """x.sum() warns from NumPy's _methods.py, x.cumprod() at the user's line (a C
    method), np.sum() and np.cumprod() in fromnumeric.py: a NumPy run of a method spelling
    calls the method (Bound.method)."""
    x = np.array([1e308, 1e308, -np.inf])
    _same_as_numpy(_methods, backend, (x,), range(3, 100))


def _place_huge(a):
    np.place(a, [True, False, True], [1e300])
    return a


def test_a_sequence_np_place_converts_with_a_warning_warns_on_every_call():
    """np.place converts a list to the array's dtype on every call ("overflow encountered
    in cast" for 1e300 into float32, in NumPy's file): the call runs as NumPy."""
    compiled = kiln.compile(_place_huge, backend="eager")
    for _ in range(2):
        exp, want = _record(_place_huge, np.zeros(3, np.float32))
        got, seen = _record(compiled, np.zeros(3, np.float32))
        np.testing.assert_array_equal(got, exp)
        assert want and seen == want


def _vdot_and_dot(a, b, c):
    return np.vdot(a, b), np.vdot(c, c), np.dot(a, b)


@pytest.mark.parametrize("backend", ["eager", "cpp"])
def test_vdot_warns_of_nothing_as_numpy(backend, monkeypatch):
    # np.vdot checks no floating-point flag (np.dot of the same operands warns "overflow"
    # or "invalid value encountered in dot"): its composite's dot ran as np.dot from the
    # user's line and warned where NumPy does not (a quiet Composite now)
    monkeypatch.setenv("KILN_COST_MODEL", "0")
    compiled = kiln.compile(_vdot_and_dot, backend=backend)
    for a, b in ((np.full(8, 1e200), np.full(8, 1e200)), (np.full(8, np.inf), np.zeros(8))):
        args = (a, b, (a + 1j).reshape(2, 4))
        exp, want = _record(_vdot_and_dot, *args)
        got, seen = _record(compiled, *args)
        np.testing.assert_array_equal(got, exp)
        assert len(want) == 1 and seen == want
        assert _record(np.vdot, kiln.tensor(a), kiln.tensor(b))[1] == []   # the eager Tensor's


def _matvec_plus_one(A, x):
    return A @ x + 1


def test_a_positional_only_site_frame_takes_no_keyword_dict(tmp_path, monkeypatch):
    """A matmul site is called with its operands only: its user-line frame is made
    without ``**params`` (a dict built and unpacked every call, ~60 ns of a 2x2 matmul's
    ~850: an unrolled state-space loop of 75 of them ran 1.09x NumPy's time, 1.04x
    after), and still warns as NumPy's call does, at the user's line."""
    monkeypatch.setenv("KILN_COST_MODEL", "0")
    monkeypatch.setattr(kiln.config, "debug_dir", str(tmp_path))
    args = (np.full((2, 2), 1e308), np.array([10.0, 10.0]))
    _same_as_numpy(_matvec_plus_one, "cpp", args, 1)
    sites = [line for p in tmp_path.glob("*/wrapper.py") for line in p.read_text().splitlines()
             if "_ufunc_at(REGISTRY['matmul']" in line]
    assert sites and all(line.endswith("keywords=False)") for line in sites)
