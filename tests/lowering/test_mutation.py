"""Mutation ops stay extern calls, and lazily evaluated closures never read memory after
a later op overwrote it."""
import numpy as np

from kiln.ir import Graph
from kiln.ops import F, REGISTRY, TensorMeta
from kiln.runtime import cpp_backend


def test_closure_reading_a_mutated_input_is_computed_before_the_write():
    g = Graph()
    x = g.placeholder("x", TensorMeta((6,), np.float64))
    before = g.call(F.sin, (x,))                     # must see the old x
    total = g.call(F.sum, (g.call(F.exp, (x,)),), {"axis": None, "keepdims": False})
    g.call(REGISTRY["setitem"], (x, (slice(0, 3, None),), 5.0), val=None)
    after = g.call(F.cos, (x,))                      # must see the new x
    g.output((before, total, after))
    a = np.arange(6.0)
    b = a.copy()
    fn = cpp_backend(g, [a.copy()])
    got, expected = fn(a), g(b)
    for r, e in zip(got, expected):
        np.testing.assert_allclose(r, e, rtol=1e-13)
    np.testing.assert_array_equal(a, b)             # the input was mutated the same way
