"""Probe harness: run a function compiled and uncompiled on copies of the same arguments
and compare results (values, dtypes, shapes, types), argument state, and graph counts."""
import copy
import re

import numpy as np
import pytest

import kiln


class CountingBackend:
    """A backend callable that records every graph handed to it and runs it as is."""

    def __init__(self):
        self.graphs = []

    def __call__(self, graph, example_inputs):
        self.graphs.append(graph)
        return graph


def assert_same(got, expected, path="result"):
    assert type(got) is type(expected), f"{path}: {type(got).__name__} != {type(expected).__name__}"
    if isinstance(expected, np.ndarray):
        assert got.shape == expected.shape, f"{path}: shape {got.shape} != {expected.shape}"
        assert got.dtype == expected.dtype, f"{path}: dtype {got.dtype} != {expected.dtype}"
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=0, equal_nan=True, err_msg=path)
    elif isinstance(expected, np.generic):
        assert got.dtype == expected.dtype, f"{path}: dtype {got.dtype} != {expected.dtype}"
        np.testing.assert_allclose(got, expected, rtol=1e-12, equal_nan=True, err_msg=path)
    elif isinstance(expected, (list, tuple)):
        assert len(got) == len(expected), f"{path}: length {len(got)} != {len(expected)}"
        for i, (g, e) in enumerate(zip(got, expected)):
            assert_same(g, e, f"{path}[{i}]")
    elif isinstance(expected, dict):
        assert list(got) == list(expected), f"{path}: keys {list(got)} != {list(expected)}"
        for k in expected:
            assert_same(got[k], expected[k], f"{path}[{k!r}]")
    elif hasattr(expected, "__dict__") and not callable(expected):
        assert_same(vars(got), vars(expected), f"{path}.__dict__")
    else:
        assert got == expected or (got != got and expected != expected), f"{path}: {got!r} != {expected!r}"


def same_as_numpy(compiled, fn, *args, errors=Exception):
    """``compiled(*args)`` gives what ``fn(*args)`` gives, or raises its error (one of
    ``errors``) with the same message."""
    try:
        want = fn(*args)
    except errors as e:
        with pytest.raises(type(e), match=re.escape(str(e))):
            compiled(*args)
        return
    assert_same(compiled(*args), want)


def run_probe(fn, *args, graphs=1, kwargs=None, calls=2, **compile_kwargs):
    """Compile ``fn`` with a counting backend, compare against plain ``fn`` ``calls`` times."""
    kwargs = kwargs or {}
    backend = CountingBackend()
    compiled = kiln.compile(fn, backend=backend, **compile_kwargs)
    got = None
    for _ in range(calls):
        eager_args, eager_kwargs = copy.deepcopy((args, kwargs))
        kiln_args, kiln_kwargs = copy.deepcopy((args, kwargs))
        expected = fn(*eager_args, **eager_kwargs)
        got = compiled(*kiln_args, **kiln_kwargs)
        assert_same(got, expected)
        assert_same(list(kiln_args), list(eager_args), "arguments after the call")
        assert_same(kiln_kwargs, eager_kwargs, "keyword arguments after the call")
    breaks = [str(r.graph_break) for r in compiled.records if r.graph_break is not None]
    assert len(backend.graphs) == graphs, \
        f"expected {graphs} graph(s), got {len(backend.graphs)}; breaks: {breaks}"
    return compiled, backend, got


@pytest.fixture
def probe():
    return run_probe


@pytest.fixture(autouse=True)
def _fresh_kiln():
    kiln.reset()
    kiln.set_logs()
    debug, kiln.config.debug_checks = kiln.config.debug_checks, True
    yield
    kiln.config.debug_checks = debug
    kiln.set_logs()
