"""Runtime of the C++ backend: build and cache shared libraries, load them with cffi,
run the generated wrapper; fall back to the NumPy interpreter when no compiler works."""
from .backend import cpp_backend, compile_graph

__all__ = ["cpp_backend", "compile_graph"]
