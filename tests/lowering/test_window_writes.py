"""Writes into a window of the caller's array (kiln/lowering/window_writes.py): the kernel
computing ``u[1:] + x`` stores it into ``u[1:]`` itself, rather than into a temporary the
wrapper then copies there. Each function is checked like tests/test_programs.py (values,
the final state of the arguments, aliasing, exceptions), and the generated wrapper says
whether the window write happened."""
import os
import re

import numpy as np
import pytest

import kiln
from kiln.config import config
from tests.test_programs import check_program

RNG = np.random.default_rng(37)


def rn(*shape, dtype=np.float64):
    return RNG.standard_normal(shape).astype(dtype)


def _wrapper_calls(path) -> str:
    """The ``call`` functions of every wrapper written under ``path`` (KILN_DEBUG_DIR)."""
    text = ""
    for d in sorted(os.listdir(path)):
        with open(os.path.join(path, d, "wrapper.py")) as f:
            text += f.read().split("def call", 1)[1].split("\ndef ", 1)[0]
    return text


def _scatters(calls_text: str) -> list[str]:
    """The wrapper's scatters: index_put calls, or the in-place ones it writes as
    subscripts (``u[1:] = buf0``, lowering/wrapper.py)."""
    return re.findall(r"^\s+(?:\w+\[.*\] = .*|.*index_put\(.*)$", calls_text, re.M)


def _check(fn, calls, tmp_path, monkeypatch) -> str:
    monkeypatch.setattr(config, "debug_dir", str(tmp_path / "d"))
    check_program(fn, calls, "cpp")
    return _wrapper_calls(tmp_path / "d")


def shift_add(u, x):
    u[1:] += x
    return u


def column_update(p, v, dt):
    p[:, 0] += v * dt
    return p


def row_scale(a):
    a[2] *= 3.0


def every_other(u, x):
    u[1::2] = np.sin(x) + u[1::2]


def corner_block(a, b):
    a[1:3, 2:] -= b
    return a.shape


def int_window(c, k):
    c[:, 1:] += k
    return c


def leapfrog(u, v, dt):
    u[1:-1] += dt * v[1:-1]          # read on, shifted, by the next line: u's new value
    v[1:-1] += dt * (u[2:] - 2 * u[1:-1] + u[:-2])


def read_after(u, x):
    u[1:] += x
    return u.sum()       # the new u, read after the write


WINDOWED = [
    (leapfrog, [(rn(12), rn(12), 0.1), (rn(12), rn(12), 0.3)]),
    (read_after, [(rn(9), rn(8))]),
    (shift_add, [(rn(9), rn(8)), (rn(9, dtype=np.float32), rn(8, dtype=np.float32))]),
    (column_update, [(rn(6, 3), rn(6), 0.1), (rn(6, 3), rn(6), 0.5)]),
    (row_scale, [(rn(4, 5),), (rn(5, 4).T,)]),
    (every_other, [(rn(10), rn(5))]),
    (corner_block, [(rn(4, 5), rn(2, 3))]),
    (int_window, [(np.arange(12).reshape(3, 4), 7)]),
]


@pytest.mark.parametrize("fn,calls", WINDOWED, ids=[f.__name__ for f, _ in WINDOWED])
def test_the_kernel_stores_into_the_callers_window(fn, calls, tmp_path, monkeypatch):
    calls_text = _check(fn, calls, tmp_path, monkeypatch)
    assert not _scatters(calls_text), calls_text
    assert "  # in place" in calls_text, calls_text


def shifted_read(u):
    u[1:] += u[:-1]      # NumPy reads the whole right side first: each element's old value
    return u


def view_returned(u, x):
    w = u[1:]
    u[1:] += x
    return w             # a view of the caller's array, seen after the write


def then_may_raise(u, x, idx):
    u[1:] += x
    return x[idx]        # IndexError after the write: NumPy's write happened


def two_windows(u, x):
    u[1:] += x
    u[:-1] *= 2.0        # reads the first write's result, shifted
    return u


KEPT = [
    (shifted_read, [(rn(9),)]),
    (view_returned, [(rn(9), rn(8))]),
    (then_may_raise, [(rn(9), rn(8), np.array([1, 2])), (rn(9), rn(8), np.array([1, 20]))]),
    (two_windows, [(rn(9), rn(8))]),
]


@pytest.mark.parametrize("fn,calls", KEPT, ids=[f.__name__ for f, _ in KEPT])
def test_writes_that_cannot_go_straight_into_the_window_stay_numpys(fn, calls, tmp_path, monkeypatch):
    """Values and argument states as NumPy's, whichever way the write is made."""
    _check(fn, calls, tmp_path, monkeypatch)


def test_shifted_read_keeps_its_temporary(tmp_path, monkeypatch):
    """``u[1:] += u[:-1]`` reads elements a window store would already have overwritten."""
    calls_text = _check(shifted_read, [(rn(9),)], tmp_path, monkeypatch)
    assert _scatters(calls_text), calls_text


def test_a_large_window_update_is_one_pass(tmp_path, monkeypatch):
    """No buffer the size of the window: the wrapper allocates nothing."""
    monkeypatch.setattr(config, "debug_dir", str(tmp_path / "d"))
    u, x = rn(100_001), rn(100_000)
    want = u.copy()
    want[1:] += x
    f = kiln.compile(shift_add)
    assert f(u, x) is u
    np.testing.assert_array_equal(u, want)
    calls_text = _wrapper_calls(tmp_path / "d")
    assert "_empty" not in calls_text and "_pool" not in calls_text, calls_text
