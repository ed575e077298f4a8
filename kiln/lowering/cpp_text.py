"""The fixed text of a C++ module: the jinja2 templates (kiln/codegen_templates/), the
prelude with the helper sections a module's kernels name, and the support objects' sources
a module links (kiln/runtime/build.py ``support_object``)."""
from __future__ import annotations

import functools
import os
import re

import jinja2
import jinja2.bccache

from ..config import config
from .cpp_ops import SCALAR_F64, SCALAR_MATH2, VECTOR_MATH, VECTOR_MATH2, calls_svml
from .svml import SUFFIX, SVML, numpy_own_f32_loops, numpy_scalar_libm

TEMPLATE_DIR = os.path.join(os.path.dirname(os.path.dirname(__file__)), "codegen_templates")


@functools.lru_cache(maxsize=None)
def templates() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATE_DIR), keep_trailing_newline=True,
                              undefined=jinja2.StrictUndefined, bytecode_cache=CompiledTemplates())


class CompiledTemplates(jinja2.BytecodeCache):
    """The templates' Python code as jinja compiled it, kept in ``<cache_dir>/templates/``
    (``kiln.config.cache_dir`` when it is read): a process's first compile parsed and
    compiled the seven C++ templates, ~40 ms of a first softmax's ~130 ms of Python CPU
    (loaded); loading them back takes ~1 ms. jinja keys a file by the template's path and
    takes it only where its checksum of the template's source, its own format version and
    Python's bytecode version match (else compiles anew and writes it again). A directory
    it cannot write leaves the templates compiled in the process, as before."""

    def _path(self, bucket: jinja2.bccache.Bucket) -> str:
        return os.path.join(config.cache_dir, "templates", bucket.key + ".jinja")

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        try:
            with open(self._path(bucket), "rb") as f:
                bucket.load_bytecode(f)
        except OSError:
            pass

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        path = self._path(bucket)
        tmp = f"{path}.{os.getpid()}.tmp"
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(tmp, "wb") as f:
                bucket.write_bytecode(f)
            os.replace(tmp, path)
        except OSError:
            if os.path.exists(tmp):
                os.remove(tmp)


# The prelude's helper sections (cpp_prelude.h) and the names that call for each: a module
# gets the sections its kernels' text names. Parsing all of them costs ~6 ms of g++ per
# module (a softmax: ~28 -> ~22 ms to parse, loaded), for helpers most kernels never call.
HELPERS = {"fmod": ("kiln_fmod(",),   # (the prelude includes it with 'divide' too, whose helpers call it)
           "divide": ("kiln_floor_divide", "kiln_remainder", "kiln_int_by_zero"), "divide_by": ("kiln_div",),
           "shift": ("kiln_lshift", "kiln_rshift"), "logaddexp": ("kiln_logaddexp",),
           "clip": ("kiln_clip",), "complex": ("kiln_c64", "kiln_c128"),
           "pairwise": ("kiln_pairwise", "kiln_selected_sum"), "exp": ("kiln_exp(",),
           "select": ("kiln_select", "kiln_c64", "kiln_c128"),   # (complex's kiln_cselect too)
           "fp_own": ("kiln_fp_own(", "kiln_owned_word"), "fp_spoils": ("kiln_fp_spoils<",), "svml": ("kiln_np_", "kiln_exp("), "hypot": ("kiln_hypot(",),
           "ftoi": ("kiln_ftoi<",)}


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
        numpy_svml=numpy_svml, numpy_explog_f32=numpy_own_f32_loops(), libm_scalar=numpy_scalar_libm(),
        helpers=helpers)


def support_sources(kernels: list[str]) -> tuple[str, ...]:
    """The sources of the support objects a module of ``kernels`` (their texts) links
    (runtime/build.py ``support_object``: each compiled once per compiler and flags, kept
    on disk): the base (cpp_support.cpp: the fork handler and the busy-core state every
    module links), then, where the module's prelude declares NumPy's vector math functions
    (the 'svml' section and :func:`calls_svml`), the objects (cpp_support_math.cpp) of
    those the kernels call: one per SVML function, one for NumPy's own float32 loops. All
    in one object cost ~1.1-1.5 s of g++, which a first softmax (~100 ms of its own)
    waited for; an SVML function's costs ~50 ms."""
    if not (calls_svml() and "svml" in helpers_named(kernels)):
        return (_support(),)
    objects = math_objects()
    called = {objects[name] for name in math_called(kernels)}
    return (_support(),) + tuple(_math_support(key) for key in sorted(called))


# a kernel's call of one of NumPy's vector math functions (the prelude declares them); its
# float64 kiln_exp is kiln_np_exp (cpp_prelude.h 'exp'; float32's is kiln_np_expf: cpp_ops.py)
_MATH_CALL = re.compile(r"\bkiln_(?:np_([a-z0-9]+)|exp)\(")


def math_called(kernels: list[str]) -> list[str]:
    """The ``kiln_np_<name>`` functions of :func:`math_objects` that ``kernels`` call,
    sorted."""
    known = math_objects()
    return sorted({name or "exp" for text in kernels for name in _MATH_CALL.findall(text)} & known.keys())


# NumPy's own float32 loops kernels call (svml.py NUMPY_OWN_F32), with the value NumPy
# loads into a short vector's unused lanes: one object (cpp_support_math.cpp)
_OWN_F32 = (("exp", 0), ("log", 1), ("sin", 0), ("cos", 0))


@functools.lru_cache(maxsize=None)
def math_objects() -> dict:
    """``kiln_np_<name>`` -> the object that defines it: ``(SVML name, its suffix,
    ((name, C type, "f" or "", operands, fill), ...))`` for cpp_support_math.cpp. One per
    NumPy SVML function and C type (svml.py :data:`SVML`), one for NumPy's own float32
    loops where it takes them (``numpy_own_f32_loops``: SVML name "")."""
    out = {}
    for name, (svml, n, fill, ctypes) in SVML.items():
        for ctype, f in (("float", "f"), ("double", "")):
            if ctype in ctypes:
                out[name + f] = (svml, SUFFIX[ctype], ((name, ctype, f, n, fill),))
    if numpy_own_f32_loops():
        own = ("", "", tuple((name, "float", "f", 1, fill) for name, fill in _OWN_F32))
        out.update((name + "f", own) for name, _fill in _OWN_F32)
    return out


@functools.lru_cache(maxsize=None)
def _support() -> str:
    return templates().get_template("cpp_support.cpp").render()


@functools.lru_cache(maxsize=None)
def _math_support(key: tuple) -> str:
    svml, suffix, fns = key
    return templates().get_template("cpp_support_math.cpp").render(svml=svml, suffix=suffix, fns=fns)
