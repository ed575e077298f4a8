"""NumPy's DeprecationWarning / FutureWarning for a spelling kiln captures (np.fix on
NumPy 2.5, np.cross of 2-vectors, np.linalg.qr(mode='full'), a float k in np.rot90,
np.tri or np.triu_indices on 2.5, ``out`` passed positionally to np.maximum, ``a.shape =``
on 2.5): a compiled op never calls NumPy's function, so capture asks NumPy
(ops/value_warnings.py may_deprecate and setting_warns, capture/call_inputs.py
numpy_deprecation) and runs a call that warns as NumPy. Compiled vs plain NumPy on the
installed version: values, the warnings (category, message, the user's line)."""
import warnings

import numpy as np
import pytest

import kiln
from kiln.ops.registry import SPELLINGS
from kiln.ops.value_warnings import may_deprecate


def _run(fn, *args):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        try:
            out = fn(*args)
        except ValueError as e:   # (np.cross of 2-vectors on NumPy 2.5)
            out = (type(e), str(e))
    return out, [(w.category, str(w.message), w.filename, w.lineno) for w in seen]


def _fix(a):
    return np.fix(a * 0.3) + 1


def _cross_2d(a):
    return np.cross(a[:, :2], a[:, 1:]) * 2


def _cross_3d(a):
    return np.cross(a, a[::-1]) * 2


def _qr_full(a):
    return np.linalg.qr(a, mode="full")[1] + 1


def _rot90(a, k):
    return np.rot90(a, k) + 1


def _tri(a, n):
    return np.tri(n) + a[:3, :3]


def _upper(a, k):
    return a[np.triu_indices(3, k)] * 2


def _set_shape(a):
    b = a * 2
    b.shape = (3, 4)   # (deprecated on NumPy 2.5)
    return b + 1


def _out_positional(a):
    out = np.empty_like(a)
    np.maximum(a, 1.0, out)   # (ufunc's C code: more than 2 positional arguments)
    return out + 1


def _out_keyword(a):
    out = np.empty_like(a)
    np.maximum(a, 1.0, out=out)
    return out + 1


def _irfftn_sized(a):
    # (``s`` without ``axes``: NumPy's helper _cook_nd_args warns, not irfftn itself)
    return np.fft.irfftn(np.fft.rfftn(a), s=a.shape) * 2


def _irfftn_axes(a):
    return np.fft.irfftn(np.fft.rfftn(a), s=a.shape, axes=(0, 1)) * 2


CASES = [(_set_shape, ()), (_irfftn_sized, ()), (_irfftn_axes, ()), (_out_positional, ()), (_out_keyword, ()), (_fix, ()), (_cross_2d, ()), (_cross_3d, ()), (_qr_full, ()), (_rot90, (1,)),
         (_rot90, (1.0,)), (_tri, (3,)), (_tri, (3.0,)), (_upper, (1,)), (_upper, (1.0,))]


@pytest.mark.parametrize("fn,extra", CASES, ids=lambda v: getattr(v, "__name__", repr(v)))
@pytest.mark.parametrize("backend", ["eager", "cpp"])
def test_deprecation_warnings_as_numpy(fn, extra, backend, monkeypatch):
    monkeypatch.setenv("KILN_COST_MODEL", "0")
    a = np.arange(12.0).reshape(4, 3) - 5
    expected, want = _run(fn, a, *extra)
    got, seen = _run(kiln.compile(fn, backend=backend), a, *extra)
    np.testing.assert_array_equal(got, expected)
    assert seen == want


def _warning_cases():
    """The cases whose NumPy call gives a DeprecationWarning on the installed NumPy."""
    a = np.arange(12.0).reshape(4, 3) - 5
    return [(fn, extra) for fn, extra in CASES
            if any(w[0] is DeprecationWarning for w in _run(fn, a, *extra)[1])]


def test_some_case_warns_on_this_numpy():
    # (np.cross of 2-vectors on 2.4, np.fix and a float k on 2.5: the table tests something)
    assert _warning_cases()


@pytest.mark.parametrize("fn,extra", _warning_cases(), ids=lambda v: getattr(v, "__name__", repr(v)))
def test_deprecated_call_under_error_filter_raises_as_numpy(fn, extra, monkeypatch):
    # -W error: NumPy raises the warning; the call runs as NumPy, so it raises it too
    monkeypatch.setenv("KILN_COST_MODEL", "0")
    a = np.arange(12.0).reshape(4, 3) - 5
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        with pytest.raises(DeprecationWarning):
            fn(a, *extra)
        with pytest.raises(DeprecationWarning):
            kiln.compile(fn)(a, *extra)


def test_calls_that_do_not_warn_stay_in_the_graph():
    # only a call that warns for its arguments leaves the graph
    a = np.arange(12.0).reshape(4, 3)
    assert kiln.explain(_cross_3d)(a).graph_break_count == 0
    assert kiln.explain(_rot90)(a, 1).graph_break_count == 0
    assert kiln.explain(_tri)(a, 3).graph_break_count == 0
    assert kiln.explain(_out_keyword)(a).graph_break_count == 0
    assert kiln.explain(_irfftn_axes)(a).graph_break_count == 0


def test_may_deprecate_is_read_off_numpy():
    # NumPy's Python functions that can warn so are found by reading their code
    assert may_deprecate(np.linalg.qr) and may_deprecate(np.fft.irfftn)   # (a helper warns)
    assert may_deprecate(np.fix) == (np.lib.NumpyVersion(np.__version__) >= "2.5.0")
    assert not may_deprecate(np.sin) and not may_deprecate(np.concatenate)
    assert not may_deprecate(("method", "sum"))
    found = [s.text for s in SPELLINGS.values() if may_deprecate(s.key)]
    assert "numpy.linalg.qr" in found and len(found) < 20, found


@pytest.mark.parametrize("fn,extra", [c for c in _warning_cases() if c[0] not in (_set_shape, _tri, _upper)],
                         ids=lambda v: getattr(v, "__name__", repr(v)))
def test_large_arrays_are_tried_cut_down(fn, extra, monkeypatch):
    # (a call on large arrays is tried on its arrays cut to 3 along every dimension;
    # the functions of fixed shapes left out)
    monkeypatch.setenv("KILN_COST_MODEL", "0")
    a = np.tile(np.arange(12.0).reshape(4, 3) - 5, (2000, 1))
    expected, want = _run(fn, a, *extra)
    got, seen = _run(kiln.compile(fn), a, *extra)
    np.testing.assert_array_equal(got, expected)
    assert seen == want and want
