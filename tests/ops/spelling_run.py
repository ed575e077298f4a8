"""Running one spelling test case both ways: the function as NumPy and compiled by kiln
(each on its own copies of the arguments, warnings silenced), with kiln's explain report."""
import warnings

import numpy as np

import kiln


def explain_and_run(fn, args, backend="cpp"):
    """(explain output, kiln's result, NumPy's result, the arguments kiln's call got, the
    arguments NumPy's call got): the last two show what each call wrote."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plain = [np.copy(a) for a in args]
        want = fn(*plain)
        out = kiln.explain(fn)(*[np.copy(a) for a in args])
        mine = [np.copy(a) for a in args]
        got = kiln.compile(fn, backend=backend)(*mine)
    return out, got, want, mine, plain
