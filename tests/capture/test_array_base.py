"""``a.base`` read in a compiled function (kiln/capture/array_base.py): answered while
capturing where NumPy's answer is known (an argument's own ``.base``, guarded; views of an
argument that owns its memory: NumPy collapses the chain to it), a graph break elsewhere."""
import numpy as np

import kiln

from .conftest import assert_same


def _bases(x, y):
    v = x[1:]
    w = v.T[::-1]
    return (x.base is None, v.base is x, w.base is x, w.base is None, y.base is x, y.base is None,
            np.broadcast_to(x, (2,) + x.shape).base is x, x.sum().base, x * 2.0)


def test_base_is_known_for_arguments_and_their_views():
    compiled = kiln.compile(_bases, backend="eager")
    own = np.arange(12.0).reshape(4, 3).copy()   # (owns its memory: the reshape did not)
    for x, y, breaks in ((own, own[::2], 0), (own, own.copy(), 0), (own[1:], own, 2)):
        assert_same(compiled(x, y), _bases(x, y))
        # (a view of a view passed in: NumPy's base is further up, kiln runs it as Python)
        reasons = [b.reason for b in kiln.explain(_bases)(x, y).break_reasons]
        assert len(reasons) == breaks and all("depends on how NumPy made it" in r for r in reasons)


def _returned_base(x):
    return x[:, ::-1].base


def test_returned_base_is_the_argument_itself():
    x = np.ones((2, 3))
    out = kiln.explain(_returned_base)(x)
    assert out.graph_break_count == 0
    assert kiln.compile(_returned_base, backend="eager")(x) is x


def _made_here(x):
    # NumPy decides these: a ufunc's result owns its memory, a reshape may copy, a squeeze
    # of nothing returns x itself: kiln does not guess, it runs them as Python
    return ((x * 2.0)[1:].base is None, x.reshape(-1).base is x, np.squeeze(x).base is x)


def test_base_of_arrays_numpy_made_breaks_the_graph():
    for x in (np.ones((2, 3)), np.ones((3, 2)).T):
        reasons = [b.reason for b in kiln.explain(_made_here)(x).break_reasons]
        assert reasons and all(".base of" in r for r in reasons)
        assert kiln.compile(_made_here, backend="eager")(x) == _made_here(x)


def _itself(x):
    c, f = np.ascontiguousarray(x), np.asfortranarray(x)
    return c is x, x is f, c * 2.0, f.sum()


def test_ascontiguousarray_is_its_argument_as_the_guarded_layout_says():
    # np.ascontiguousarray(x) is x exactly when x is C-contiguous (asfortranarray: F): the
    # layout is guarded and the identity answered while capturing (a graph break before,
    # which made layout_dependent_views 1.95x NumPy's time compiled)
    compiled = kiln.compile(_itself, backend="eager")
    a = np.arange(12.0).reshape(3, 4)
    for x in (a, np.asfortranarray(a), a[:, ::2], a.T, a[0]):
        assert_same(compiled(x), _itself(x))
        assert kiln.explain(_itself)(x).graph_break_count == 0
