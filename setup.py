"""kiln's C extensions, built at install time (everything else is in pyproject.toml).

Each extension kiln ships as C source (kiln/_native/__init__.py lists them) is built into
``kiln._native`` so that a fresh process does not compile them at first use (~0.35-0.7 s
of g++ each, per cache directory). They are optional: without a C compiler, Python
headers or NumPy the install still succeeds and kiln builds them into its cache when
first needed, as it does for a module that is stale or does not import.
"""
import importlib.util
import os

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.errors import CompileError

ROOT = os.path.dirname(os.path.abspath(__file__))


def _load_native():
    """kiln/_native/__init__.py by path (importing kiln would import NumPy and the rest)."""
    spec = importlib.util.spec_from_file_location(
        "_kiln_native_setup", os.path.join(ROOT, "kiln", "_native", "__init__.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


native = _load_native()


def _relative(path):
    return os.path.relpath(path, ROOT)


def _extension(name, source, numpy_api, cffi_module):
    digest = native.extension_hash(name)
    if cffi_module:
        # The C file cffi writes from the hook's source is made in build_ext (below).
        return Extension(f"kiln._native.{name}", [_relative(source)], optional=True,
                         include_dirs=[_relative(os.path.dirname(native.HEADER))],
                         depends=[_relative(native.HEADER)],
                         define_macros=[("_CFFI_NO_LIMITED_API", None)],
                         extra_compile_args=["-O2"])
    parts = native.PARTS.get(name, ())
    return Extension(
        f"kiln._native.{name}", [_relative(p) for p in (source, *parts) if p.endswith(".c")],
        optional=True,
        include_dirs=[_relative(os.path.dirname(native.HEADER))],
        depends=[_relative(p) for p in (native.HEADER, *parts) if p.endswith(".h")],
        define_macros=[("KILN_MODULE_NAME", name), ("KILN_MODULE_NAME_STR", f'"{name}"'),
                       ("KILN_SOURCE_HASH", f'"{digest}"')],
        # As kiln's own cache build (kiln/cext.py build_extension).
        extra_compile_args=["-O2", "-Werror=implicit-function-declaration"])


class BuildNative(build_ext):
    """build_ext that adds NumPy's include folder to the extensions that need it and
    writes the frame hook's cffi C file first; a failure there skips that extension like
    a failed compile (they are optional)."""

    def build_extension(self, ext):
        name = ext.name.rsplit(".", 1)[1]
        source, numpy_api, cffi_module = native.EXTENSIONS[name]
        try:
            if numpy_api:
                import numpy
                ext.include_dirs.append(numpy.get_include())
            if cffi_module:
                os.makedirs(self.build_temp, exist_ok=True)
                c_path = os.path.join(self.build_temp, f"kiln_native_{name}.c")
                text = native.read(source)
                ffi = native.frame_hook_ffi(ext.name, text, native.extension_hash(name))
                ffi.emit_c_code(c_path)
                ext.sources = [c_path]
        except Exception as e:   # no NumPy or cffi in the build environment
            raise CompileError(f"cannot prepare {ext.name}: {type(e).__name__}: {e}") from e
        super().build_extension(ext)


setup(ext_modules=[_extension(name, *spec) for name, spec in native.EXTENSIONS.items()],
      cmdclass={"build_ext": BuildNative})
