"""Attributes set on a function object (``self.regularization.grad = lambda w: 0``, in
ML-From-Scratch's regressions): read like an object's attributes, and guarded."""
import inspect
import types

import numpy as np
import pytest

import kiln


class _Model:
    def __init__(self):
        self.reg = lambda w: 0
        self.reg.grad = lambda w: 0.5 * w
        self.reg.alpha = 0.1
        self.w = np.ones(3)

    def step(self, g):
        self.w = self.w - 0.1 * (g + self.reg.grad(self.w)) * self.reg.alpha
        return self.w


def _run(m, g):
    return m.step(g)


def test_function_attributes_are_read_in_the_graph(probe):
    compiled, _, _ = probe(_run, _Model(), np.arange(3.0), graphs=1)
    assert not [r for r in compiled.records if r.graph_break is not None]


def test_changing_a_function_attribute_is_seen():
    compiled = kiln.compile(_run)
    g = np.arange(3.0)
    want, got = _Model(), _Model()
    for change in (None, ("alpha", 0.5), ("grad", lambda w: w * 0)):
        if change is not None:
            setattr(want.reg, *change)
            setattr(got.reg, *change)
        np.testing.assert_array_equal(compiled(got, g), _run(want, g))


def test_a_lambda_made_per_instance_does_not_recompile():
    # self.reg = lambda w: 0 in __init__: every model holds another function object of
    # the same code. Guarded by its code (closure, defaults and attributes are read
    # through sources), a new model hits the cache; by identity each one recompiled
    # (ML-From-Scratch's LinearRegression: 79 ms a call against NumPy's 0.7 ms).
    compiled = kiln.compile(_run)
    g = np.arange(3.0)
    for _ in range(4):
        want, got = _Model(), _Model()
        np.testing.assert_array_equal(compiled(got, g), _run(want, g))
    assert len(compiled.cache_entries) == 1


def test_a_lambda_of_other_code_or_closure_is_not_taken_for_the_first():
    compiled = kiln.compile(_run)
    g = np.arange(3.0)
    for k in (0.5, 2.0):
        want, got = _Model(), _Model()
        for m in (want, got):
            m.reg.grad = (lambda k: (lambda w: k * w))(k)   # same code, another closure
        np.testing.assert_array_equal(compiled(got, g), _run(want, g))
    want, got = _Model(), _Model()
    for m in (want, got):
        m.reg.grad = lambda w: -w                           # another code
    np.testing.assert_array_equal(compiled(got, g), _run(want, g))


def _advertise(signature_of):
    """array-api-compat's get_xp (scipy's ``xp.zeros``): a ``*args, **kwargs`` wrapper
    whose ``__signature__`` names the wrapped function's parameters."""
    def deco(fn):
        def wrapped(*args, **kwargs):
            return fn(*args, xp=np, **kwargs)
        wrapped.__signature__ = inspect.signature(signature_of)
        return wrapped
    return deco


def _zeros_params(shape, *, dtype=None):
    pass


@_advertise(_zeros_params)
def _zeros(shape, xp, *, dtype=None):
    return xp.zeros(shape, dtype=dtype)


def _zeros_after_a_break(a):
    kiln.graph_break()
    return _zeros(a.shape, dtype=a.dtype) + a


@pytest.mark.parametrize("fn, args", [(_zeros, ((2, 3),)), (_zeros_after_a_break, (np.ones(3),))])
def test_a_signature_attribute_does_not_rename_the_frame_parameters(fn, args):
    # The frame binds the code's own parameters; binding the advertised ones left
    # ``args`` unset (UnboundLocalError in scipy.linalg.block_diag).
    np.testing.assert_array_equal(kiln.compile(fn, backend="eager")(*args), fn(*args))


def _in_module(module_name):
    """A module ``module_name`` holding a helper defined in it."""
    module = types.ModuleType(module_name)

    def scaled_sum(x):
        return (x * 2.0).sum(axis=0)
    scaled_sum.__module__ = module_name
    module.scaled_sum = scaled_sum
    return module


@pytest.mark.parametrize("module_name", ["numpy_ml.neural_nets.utils", "numpy_financial._financial",
                                         "numpyro.distributions"])
def test_helpers_of_packages_named_like_numpy_are_inlined(probe, module_name):
    # Only ``numpy`` and ``numpy.*`` hold NumPy's functions: numpy_ml's conv2D was taken for
    # one ("numpy_ml...conv2D has no kiln op") and broke the graph.
    lib = _in_module(module_name)
    compiled, _, _ = probe(lambda x: lib.scaled_sum(x * 3.0) + 1.0, np.arange(6.0).reshape(2, 3), graphs=1)
    assert not [r for r in compiled.records if r.graph_break is not None]
