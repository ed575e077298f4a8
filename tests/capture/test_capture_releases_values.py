import gc, weakref
import numpy as np
import kiln


def _plain(x, l):
    return np.exp(x) * 2 + l[0]


def _with_break(x, l):
    y = x * 2
    print(end="")
    return y + l[0]


def _with_loop(x, l):
    s = x + 0.0
    for v in l:
        s = s + v
    return s.sum()


def _with_generator(x, l):
    return x * sum(v for v in l)


def test_the_first_calls_arrays_are_freed_when_it_returns():
    """Capture keeps the call's values in the OutputGraph, which the translator refers to
    and which refers back: without drop_values, the first call's input array lived until
    the cycle collector ran (gc disabled here: until gc.collect())."""
    was = gc.isenabled()
    gc.disable()
    try:
        for fn in (_plain, _with_break, _with_loop, _with_generator):
            for backend in ("eager", "aot_eager"):
                f = kiln.compile(fn, backend=backend)
                x = np.ones(16)
                ref = weakref.ref(x)
                f(x, [1.0, 2.0])
                del x
                assert ref() is None, (fn.__name__, backend)
    finally:
        if was:
            gc.enable()
