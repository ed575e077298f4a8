"""The fixed text of a C++ module: the jinja2 templates (kiln/codegen_templates/), the
prelude with the helper sections a module's kernels name, and the support object's source
every module links (kiln/runtime/build.py ``support_object``)."""
from __future__ import annotations

import functools
import os

import jinja2

from .cpp_ops import SCALAR_F64, SCALAR_MATH2, VECTOR_MATH, VECTOR_MATH2
from .svml import SVML, numpy_own_f32_loops

TEMPLATE_DIR = os.path.join(os.path.dirname(os.path.dirname(__file__)), "codegen_templates")


@functools.lru_cache(maxsize=None)
def templates() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATE_DIR), keep_trailing_newline=True,
                              undefined=jinja2.StrictUndefined)


# The prelude's helper sections (cpp_prelude.h) and the names that call for each: a module
# gets the sections its kernels' text names. Parsing all of them costs ~6 ms of g++ per
# module (a softmax: ~28 -> ~22 ms to parse, loaded), for helpers most kernels never call.
HELPERS = {"divide": ("kiln_floor_divide", "kiln_remainder", "kiln_int_by_zero"), "divide_by": ("kiln_div",),
           "shift": ("kiln_lshift", "kiln_rshift"), "logaddexp": ("kiln_logaddexp",),
           "clip": ("kiln_clip",), "complex": ("kiln_c64", "kiln_c128"),
           "pairwise": ("kiln_pairwise", "kiln_selected_sum"), "exp": ("kiln_exp(",),
           "select": ("kiln_select", "kiln_c64", "kiln_c128"),   # (complex's kiln_cselect too)
           "fp_own": ("kiln_fp_own(", "kiln_owned_word"), "svml": ("kiln_np_", "kiln_exp("), "hypot": ("kiln_hypot(",)}


def helpers_named(sources: list[str]) -> frozenset:
    """The prelude sections whose helpers ``sources`` (kernel texts) name."""
    text = "\n".join(sources)
    return frozenset(section for section, names in HELPERS.items()
                     if any(name in text for name in names))


@functools.lru_cache(maxsize=None)
def prelude(helpers: frozenset = frozenset(HELPERS), numpy_svml: bool = False) -> str:
    """``numpy_svml``: the ``kiln_np_`` names are NumPy's SVML functions (cpp_ops.py
    ``calls_svml``), not glibc's."""
    return templates().get_template("cpp_prelude.h").render(
        vector_math=VECTOR_MATH, vector_math2=VECTOR_MATH2, scalar_math2=SCALAR_MATH2, scalar_f64=SCALAR_F64, svml=SVML,
        numpy_svml=numpy_svml, numpy_explog_f32=numpy_own_f32_loops(), helpers=helpers)


def support_source(source: str = "") -> str:
    """The support object's source (cpp_support.cpp): the fork handler and the busy-core
    state every module links, compiled once per compiler and flags
    (runtime/build.py ``support_object``); for a module ``source`` whose prelude declares
    NumPy's SVML functions (the 'svml' section), with their definitions too (~45 KB of code
    other modules need not carry, nor look up as they load)."""
    return _support(_SVML_DECLARED in source)


_SVML_DECLARED = "KILN_SIMD float kiln_np_"


@functools.lru_cache(maxsize=None)
def _support(svml: bool) -> str:
    own = ((("exp", 0), ("log", 1), ("sin", 0), ("cos", 0)) if numpy_own_f32_loops() else ()) if svml else ()
    return templates().get_template("cpp_support.cpp").render(svml=SVML if svml else {}, own_f32=own)
