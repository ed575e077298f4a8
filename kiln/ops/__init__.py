"""THE operator inventory: every op kiln knows, declared once.

Import :data:`F` to call ops (``F.sin(x)``), :func:`lookup` to map a NumPy callable or
method to its op, :data:`REGISTRY` to list them. Each family lives in its own module.
"""
from .registry import (REGISTRY, SPELLINGS, Bound, Category, Composite, F, Op, Spelling, declare,
                       defined_in_numpy, describe_callable, find_spelling, get_op, lookup, method_key,
                       ufunc_method_key, fit_grad, is_float_like)
from .meta import TensorMeta, infer_meta
from . import pointwise, ufunc_pairs, masked, scalar_math, broadcast, relayout  # noqa: F401  (declarations register themselves)
from . import reduction, shape, indexing, scatter, take, join, creation, linalg, mutation  # noqa: F401
from . import complex, numeric, rolls, grids, from_data, statistics, sorting, histograms, matrix, signal, selection, factorizations  # noqa: F401
from . import loops, loop_vectors, predicates, sets, flat_index, polynomials, splice, random, reinterpret  # noqa: F401
from . import graph_loops, loop_cost, appended_lists, python_numbers, running, ufunc_methods, value_warnings, norms, array_api, bits  # noqa: F401

__all__ = ["REGISTRY", "SPELLINGS", "Bound", "Category", "Composite", "F", "Op", "Spelling", "declare",
           "defined_in_numpy", "describe_callable", "find_spelling", "get_op", "lookup", "method_key",
           "ufunc_method_key", "TensorMeta", "infer_meta", "fit_grad", "is_float_like"]
