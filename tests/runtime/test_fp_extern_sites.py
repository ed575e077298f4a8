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
