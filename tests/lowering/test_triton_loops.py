"""Graph loop nodes (kiln/ops/graph_loops.py: ``for t in range(T): u = step(u)``, jacobi,
while loops to convergence) on backend="triton", through Triton's interpreter on NumPy
arrays: the body is Triton kernels built once whatever the trip count (not the body's
NumPy program), and the loop gives what NumPy gives (values, dtypes, written arguments:
tests/test_programs.py's oracle); and the ops capture builds from Python numbers and
appending element loops, which have no op-table row."""
import numpy as np
import pytest

pytest.importorskip("triton")

import kiln
from kiln.runtime import triton_backend as tbk
from tests.test_programs import check_program

from capture.test_graph_loops import _heat, _jacobi, _ping_pong
from capture.test_graph_while import heat_until, relax_or

from .triton_kit import interpret  # noqa: F401  (autouse: Triton's interpreter on NumPy arrays)


@pytest.fixture
def builds(monkeypatch):
    """``(graph name, kernel names)`` of each Triton module the backend builds, in order
    (a loop body's graph is named ``graph_loop_body_N``)."""
    seen = _Builds()
    build = tbk.TritonLoader.build

    def recording(self, gen, graph_name):
        seen.append((graph_name, sorted(gen.kernel_names)))
        path = build(self, gen, graph_name)
        sources[graph_name] = (gen.cpp, self.renderer.rendered)
        return path
    sources = {}
    seen.sources = sources
    monkeypatch.setattr(tbk.TritonLoader, "build", recording)
    return seen


class _Builds(list):
    sources: dict


def _bodies(builds):
    return [kernels for name, kernels in builds if name.startswith("graph_loop_body") and kernels]


def test_a_range_loop_body_is_triton_kernels_built_once(builds):
    rng = np.random.default_rng(0)
    u = rng.random(40)
    f = kiln.compile(_heat, backend="triton")
    np.testing.assert_array_equal(f(u, 0.1, 7), _heat(u, 0.1, 7))
    assert len(_bodies(builds)) == 1, builds
    for steps in (3, 1, 0, 12):
        got, want = f(u, 0.1, steps), _heat(u, 0.1, steps)
        np.testing.assert_array_equal(got, want)
        assert (got is u) == (want is u)     # no trip: u itself, as NumPy
    assert len(_bodies(builds)) == 1, f"a new trip count built the body again: {builds}"


@pytest.mark.parametrize("fn, calls", [
    (_jacobi, [(5, np.random.default_rng(1).random((10, 10)), np.random.default_rng(2).random((10, 10)))]),
    (_ping_pong, [(np.arange(9.0), np.zeros(9), 4), (np.arange(9.0), np.zeros(9), 3)]),
    (heat_until, [(np.random.default_rng(3).random(16), 0.1, 0.55)]),
    (relax_or, [(np.random.default_rng(4).random(16), 1e-3)]),
], ids=["jacobi", "ping_pong", "heat_until", "relax_or"])
def test_graph_loops_on_triton_match_numpy(fn, calls, builds):
    """In-place writes of the caller's arrays (jacobi), carried arrays changing places
    (ping_pong), while loops testing a carried float or a reduction each trip."""
    check_program(fn, calls, "triton")
    assert _bodies(builds), f"{fn.__name__}: the loop body ran as NumPy: {builds}"


def test_a_loop_body_compiles_for_sm90(builds):
    """The body's kernels (heat's step: rolls, scalars, carried u) compile ahead of time
    for sm_90, as the GPU would build them at the first trip."""
    from kiln.runtime import triton_build as tb
    kiln.compile(_heat, backend="triton")(np.ones(33), 0.1, 3)
    ((name, (source, rendered)),) = [(n, s) for n, s in builds.sources.items() if n.startswith("graph_loop_body")]
    module = tb.load_module(source, name, interpret=False)
    for kname, rk in rendered.items():
        _, constexprs, warps = rk.config()
        compiled = tb.TritonKernel(module, kname, rk.signature, constexprs, warps).compile(tb.SM90)
        assert compiled.asm["cubin"]


def test_capture_built_ops_on_triton():
    """The ops capture builds from Python numbers and element loops, which have no op-table
    row (python_true_divide, python_scalar_type, flat_item; loop_head of an appending
    loop), on backend="triton": values, types and Python's own exceptions as NumPy's.
    (NumPy's floating-point warnings are not given on Triton: docs/triton.md.)"""
    from capture.test_data_reads import _cases, _outcome, reads
    from capture.test_loop_appends import _same, picks
    compiled = kiln.compile(reads, backend="triton")
    for args in _cases():
        (got, _), (want, _) = _outcome(compiled, *args), _outcome(reads, *args)
        assert got[0] == want[0], (got, want)
        if want[0] == "raise":
            assert got == want
        else:
            _same(got[1], want[1])
    x = np.random.default_rng(4).standard_normal(48)
    f = kiln.compile(picks, backend="triton")
    for t in (0.5, 100.0, 0.0):
        _same(f(x, t), picks(x, t))
