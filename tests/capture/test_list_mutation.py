"""Python lists (and dicts) mutated in place inside a captured function: ``+=``, ``*=``,
slice assignment and ``del`` follow Python, keep aliases, and are replayed on lists
passed in. None of them breaks the graph (the counting backend: no C++ built)."""
import numpy as np
import pytest

import kiln

from .conftest import same_as_numpy

X = np.arange(3.0)


def no_breaks(compiled):
    assert [r.graph_break for r in compiled.records if r.graph_break is not None] == []


def list_iadd(x):
    l = [x]
    m = l                    # an alias sees the in-place change
    l += [x * 2]
    l += (x + 1,)            # any iterable
    l *= 2
    l.extend([x])
    return l, m, len(m), l is m


def list_concat(x):
    a, b = [x], [x * 2]
    c = a + b
    c += [x * 3]
    return c, a, b, 3 * a


def slice_assign(x):
    l = [x, x + 1, x + 2, x + 3]
    l[0:2] = [x * 3, x * 4, x * 5]   # a different length
    l[1:] = (x * 6,)
    l[:0] = [x * 7]
    return l


def deletions(x):
    l = [x, x + 1, x + 2, x + 3, x + 4]
    del l[1]
    del l[-1]
    del l[::2]
    d = {"a": x, "b": x * 2}
    del d["a"]
    return l, d


def argument_mutations(x, l, d):
    l += [x * 2]
    l[0:1] = [x * 3, x * 4]
    del l[-1]
    l *= 2
    del d["a"]
    return l[0] + 1


@pytest.mark.parametrize("fn,args", [
    (list_iadd, (X,)), (list_concat, (X,)), (slice_assign, (X,)), (deletions, (X,)),
    (argument_mutations, (X, [X, X + 1], {"a": 1, "b": 2})),
], ids=lambda v: getattr(v, "__name__", ""))
def test_list_mutations_are_captured(probe, fn, args):
    compiled, _, _ = probe(fn, *args, graphs=1)
    no_breaks(compiled)


def items_read_then_replaced(l, d, x):
    v = l[0]
    l[0] = x                  # v is still the array that was there
    w = d["a"]
    d["a"] = x
    return v, w, l[0]


def items_moved_by_list_methods(l, x):
    l.insert(0, x)
    a = l[1]                  # the array that was at l[0]
    l.reverse()
    b = l[0]                  # ... at l[1]
    l.pop()
    return a, b, l[-1]


@pytest.mark.parametrize("fn,args", [
    (items_read_then_replaced, ([X, X + 1], {"a": X * 2}, X * 3)),
    (items_moved_by_list_methods, ([X, X + 1], X * 3)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_items_of_mutated_arguments_returned_are_those_read(probe, fn, args):
    """An array item of a list or dict passed in, returned after the list was changed,
    used to be read again by its entry path after the replayed change (``v = l[0];
    l[0] = x; return v`` gave x; ``l.pop(0); return l[0]`` raised IndexError). No array work: an empty graph, the stores replayed."""
    compiled, _, _ = probe(fn, *args, graphs=0)
    no_breaks(compiled)


def test_list_mutation_errors_are_the_users():
    def f(x, k):
        l = [x, x]
        if k == 0:
            del l[5]
        elif k == 1:
            l[::2] = [x, x, x]
        else:
            d = {"a": x}
            del d["b"]
        return l
    compiled = kiln.compile(f, backend="eager")
    for k in range(3):
        same_as_numpy(compiled, f, X, k)
