"""Programs drawn from other libraries' own test suites, run through kiln
(docs/numpy_tests.md, "Other libraries' tests": benchmarks/library_tests.py runs a
package's tests with its functions compiled). Each is a case where kiln differed from
Python, written without the library; checked like tests/test_programs.py on cpp and eager.
"""
from __future__ import annotations

import numpy as np

from tests.test_programs import program_registry, program_test

PROGRAMS, program = program_registry()   # name -> (fn, the calls it is checked on)


# opt_einsum test_backends.py::test_dask (contract_path): input_list = subscripts.split(",")
# was folded into one list the cache entry held, and the contraction loop's
# input_list.pop() emptied it; the next call hitting the entry read ['ca'] and failed with
# KeyError 'b'. A folded list (str.split, sorted) or dict (str.maketrans) is a new one on
# every call; the calls repeat so that later ones hit the entry.
@program(("ab,bc,cd", np.ones(3)), ("ab,bc,cd", np.ones(3)), ("ab,bc,cd", np.ones(3)),
         ("ab,bc", np.arange(3.0)), ("ab,bc", np.arange(3.0)))
def folded_list_popped(s, x):
    parts = s.split(",")
    last = parts.pop()
    order = sorted(s)
    order.append(last)
    table = str.maketrans("ab", "xy")
    table[ord("c")] = "z"
    return parts, order, table, x * len(parts)


# The same list living on across a graph break (a comprehension over frozensets breaks, as
# contract_path's did): the resume function took the entry's list, already popped.
@program(("ab,bc,ca", np.ones(2)), ("ab,bc,ca", np.ones(2)), ("ab,bc,ca", np.ones(2)))
def folded_list_across_a_break(s, x):
    parts = s.split(",")
    sets = [frozenset(p) for p in parts]
    while len(parts) > 1:
        parts.pop(0)
    return parts, len(sets), x + len(parts)


test_program = program_test(PROGRAMS, ["cpp", "eager"])
