"""The floating-point flags a kernel's helper threads raise reach its launch (and so
NumPy's warnings), from each kind of parallel region: a stage's own region inside the
body (lowering/cpp_loops.py ``region_start``: a loop that stores and reduces one point,
the decided any/all loop), beside the entry's and the pairwise sum's
(test_fp_numpy_warnings.py ``test_a_threaded_kernel_reports_its_threads_flags``)."""
from __future__ import annotations

import warnings

import numpy as np
import kiln
from kiln import config


def stored_sum_max(x):
    y = np.log(x)
    return y, np.sum(y * y), y.max()


def any_of_log(x):
    return np.any(np.log(x) > 0.5)


def _messages(fn, x):
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        try:
            fn(x)
        except FloatingPointError as error:
            return ["raised: " + str(error)]
    return [str(w.message) for w in got if w.category is RuntimeWarning]


def test_a_stage_region_hands_its_threads_flags_to_the_launch(monkeypatch):
    # past the parallel grain on two threads (no helper counts as late: the machine may
    # be loaded); the zero in the second thread's half, the -1 in the first's
    monkeypatch.setenv("KILN_LATE_US", "1000000000")   # (read when the library loads)
    monkeypatch.setattr(config, "num_threads", 2)
    x = np.linspace(1.0, 2.0, 400_000)
    x[-3] = 0.0
    x[5] = -1.0
    for fn in (stored_sum_max, any_of_log):
        compiled = kiln.compile(fn)
        for mode in ("warn", "raise"):
            with np.errstate(divide=mode, invalid=mode):
                want = _messages(fn, x)
                assert want == (["divide by zero encountered in log", "invalid value encountered in log"]
                                if mode == "warn" else ["raised: divide by zero encountered in log"])
                for _ in range(2):
                    assert _messages(compiled, x) == want, (fn.__name__, mode)

