"""The op table: one spec row per op in kiln's inventory (see spec.Row), by family.

test_op_table.py runs every row through the same checks. An op that cannot be a row is
listed in NOT_ROWS with the reason and the test that covers it instead.
"""
from __future__ import annotations

from .rows_creation_shape import creation_rows, mutation_rows, shape_rows, spelling_rows
from .rows_indexing_join import indexing_rows, join_rows
from .rows_numeric import numeric_rows
from .rows_coverage import coverage_rows
from .rows_pointwise import pointwise_rows
from .rows_reduction_linalg import linalg_rows, reduction_rows
from .spec import Row
from kiln.ops import REGISTRY

__all__ = ["ROWS", "NOT_ROWS", "Row"]

ROWS: list[Row] = (pointwise_rows() + reduction_rows() + linalg_rows() + indexing_rows()
                   + join_rows() + creation_rows() + mutation_rows() + shape_rows()
                   + spelling_rows() + numeric_rows() + coverage_rows())

# Ops that cannot be a row of this table, and why; each is tested on its own.
_SIZED = ("its result's length is known only after it ran, so a traced graph's meta holds "
          "an example size, not NumPy's (tests/ops/test_data_dependent_ops.py)")
NOT_ROWS: dict[str, str] = {
    "getitem_mask": f"x[mask]: {_SIZED}; test_boolean_mask_indexing",
    **{name: f"{name}: {_SIZED}" for name in ("argwhere", "unique", "unique_counts",
                                              "unique_counts_of", "unique_index",
                                              "unique_inverse", "bincount", "lstsq_residuals",
                                              "set_op", "polydiv_r", "polymul", "trim_zeros",
                                              "histogram_auto")},
    # Result dtypes that depend on the values: the graph's meta holds the dtype capture
    # speculated (kiln/ops/speculation.py), which a traced graph without it cannot know.
    **{name: f"{name}: its result dtype depends on the values; "
             f"tests/ops/test_speculated_dtypes.py" for name in ("poly_of", "real_if_close_check")},
    "roots": f"roots: {_SIZED}; its dtype depends on the values: tests/ops/test_speculated_dtypes.py",
    # A check with no NumPy spelling and no value of its own (a warning NumPy gives for
    # some values): checked through the nan reductions that use it.
    "warn_if_any": "NumPy's value-dependent warnings of the nan reductions: "
                   "tests/ops/test_value_warnings.py",
    "warn_if_zero": "'Mean of empty slice' of a mean over a where= mask or a selection: "
                    "tests/ops/test_reduction_params.py",
    "scalar_int_check": "integer overflow of NumPy scalar math (x.max() - x.min() on int8): "
                        "tests/test_scalar_int_warnings.py",
    "element_value": "NumPy's element store of a NumPy scalar into a signed integer array "
                     "(x[i] = v; no NumPy spelling of its own): tests/test_fuzz_found.py "
                     "a_numpy_scalar_stored_into_a_signed_integer_element_is_range_checked",
    # Derivative helpers with no NumPy spelling: checked against finite differences
    # through the rows of the op they differentiate (put_values, placed).
    "complex_parts": "the value of z after a write through z.real/z.imag (no NumPy "
                     "spelling): tests/lowering/test_complex_parts.py",
    "put_values_grad": "np.put's values cotangent: the put_values gradient row",
    "placed_grad": "np.place's values cotangent: the placed gradient row",
    # Loop nodes and the scalar element code of their bodies: built by capture, not by a
    # NumPy spelling; tests/capture/test_loops.py checks every form against plain Python
    # and tests/lowering/test_loops.py the C++ loops against the reference.
    # Python-float arithmetic on run-time numbers (kiln/ops/python_numbers.py): built by
    # capture from Python operators on floats, no NumPy spelling; checked against plain
    # Python bit for bit, with NumPy's error modes, in tests/capture/test_python_numbers.py.
    **{name: f"{name}: Python float arithmetic; tests/capture/test_python_numbers.py"
       for name in ("python_add", "python_subtract", "python_multiply", "python_negative")},
    # math.<fn> of numbers read from data: Python's own call, checked against plain Python
    # (values bit for bit, ValueError/OverflowError) in tests/capture/test_python_math.py.
    **{name: f"{name}: Python's math module on numbers; tests/capture/test_python_math.py"
       for name in ("python_math1", "python_math2")},
    # Python's float / and NumPy's scalar types on numbers read from data, and a.flat[i] of
    # a run-time index: built by capture, no NumPy spelling; checked against plain Python
    # (values, types, ZeroDivisionError/OverflowError/IndexError) in
    # tests/capture/test_data_reads.py.
    **{name: f"{name}: built by capture from numbers read from data; "
             f"tests/capture/test_data_reads.py"
       for name in ("python_true_divide", "python_scalar_type", "flat_item")},
    "loop": "a loop node (kiln/ops/loops.py): tests/capture/test_loops.py",
    "loop_item": "a loop node's result: tests/capture/test_loops.py",
    "graph_loop": "a time-stepping loop over whole arrays (kiln/ops/graph_loops.py): "
                  "tests/capture/test_graph_loops.py",
    "graph_while": "a while loop over whole arrays (kiln/ops/graph_loops.py): "
                   "tests/capture/test_graph_while.py",
    "loop_rows": "the rows a while loop (or a range of a run-time count) appended to a list: "
                 "tests/capture/test_graph_loop_lists.py",
    "loop_count": "len() of such a list: tests/capture/test_graph_loop_lists.py",
    "loop_head": "the numbers an element loop appended to a list under a test: "
                 "tests/capture/test_loop_appends.py",
    **{name: f"{name}: a use of such a list after the loop: tests/capture/test_appended_uses.py"
       for name in ("appended_array", "list_fold", "list_item", "list_truth")},
    "scalar_fn": "scalar code in a loop body: tests/capture/test_loops.py",
    "load_elem": "an element read in a loop body: tests/capture/test_loops.py",
    "store_elem": "an element write in a loop body: tests/capture/test_loops.py",
    "store_elem_if": "an element write under a data-dependent branch in a loop body: "
                     "tests/capture/test_loop_breaks.py",
    **{name: f"{name}: a run-time-length slice in a loop body: tests/capture/test_loop_vectors.py"
       for name in ("vec_view", "vec_flip", "vec_fn", "vec_reduce", "vec_store")},
    # Draws from a random generator: each run of a row draws other numbers; every
    # spelling is checked against NumPy from the same seed in tests/ops/test_random.py.
    **{name: f"{name}: draws random numbers; tests/ops/test_random.py"
       for name in REGISTRY if name.startswith("random_")},
    "view_dtype": "x.view(dtype) depends on the argument's memory layout (another itemsize); "
                  "tests/ops/test_numba_list.py",
}
