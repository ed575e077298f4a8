"""Guards built from sources, one generated check function per cache entry, cache
entries, recompile reasons and automatic dynamic dimensions."""
from .cache import CacheEntry, describe_failure, scalar_only, size_only
from .codegen import MISS, RUN_EAGER, make_body, make_entry, make_explainer
from .guard import Guard, GuardSet

__all__ = ["CacheEntry", "describe_failure", "scalar_only", "size_only", "MISS", "RUN_EAGER", "make_entry",
           "make_body", "make_explainer", "Guard", "GuardSet"]
