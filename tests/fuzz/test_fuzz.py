"""The program fuzzer: random NumPy programs (programs.py, exprs.py, stmts.py) run without
kiln and through every backend, compared as test_programs.py compares (runner.py).

In the normal suite a fixed, derandomized slice of ``KILN_FUZZ_PROGRAMS`` programs runs
(default 40). A long run (docs/fuzzing.md)::

    KILN_FUZZ_PROGRAMS=20000 KILN_FUZZ_SEED=1 python -m pytest tests/fuzz -p no:cacheprovider -x \
        --hypothesis-show-statistics

A failure shrinks to a short program and prints it as a runnable script.
"""
from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, Phase, given, seed, settings

import kiln

from .programs import build_function
from .runner import BACKENDS, Mismatch, check
from .stmts import programs

PROGRAMS = int(os.environ.get("KILN_FUZZ_PROGRAMS") or 40)
SEED = os.environ.get("KILN_FUZZ_SEED")
# Long runs on a loaded machine: shrinking a failure re-generates and re-runs programs for
# tens of minutes; KILN_FUZZ_SHRINK=0 reports the first failing program as it was drawn.
SHRINK = os.environ.get("KILN_FUZZ_SHRINK", "1") != "0"
# The suite runs with the cost model off (tests/conftest.py); KILN_FUZZ_COST_MODEL=1 turns
# it on for the generated programs, so the cpp backend runs small graphs as Python.
COST_MODEL = os.environ.get("KILN_FUZZ_COST_MODEL") == "1"

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def _fuzz_settings(fn):
    fn = settings(max_examples=PROGRAMS, deadline=None, database=None, derandomize=SEED is None,
                  suppress_health_check=list(HealthCheck), print_blob=SEED is not None,
                  phases=[Phase.generate, Phase.shrink] if SHRINK else [Phase.generate])(fn)
    return seed(int(SEED))(fn) if SEED is not None else fn


@pytest.fixture
def _cost_model_as_asked(monkeypatch):
    from kiln.config import config
    monkeypatch.setattr(config, "cost_model", COST_MODEL)


@_fuzz_settings
@given(programs())
def test_random_programs_match_numpy(_cost_model_as_asked, program):
    check(program)


def test_the_oracle_catches_a_wrong_backend():
    """A backend that changes a value by one part in 1e9 or drops a write is caught."""
    def nudge(graph, example_inputs):
        def run(*args):
            outs = graph(*args)
            return type(outs)(o * (1 + 1e-9) if hasattr(o, "dtype") and o.dtype.kind == "f" else o
                              for o in outs)
        return run

    from .programs import Program
    prog = Program(["x0"], [], ["    v1 = x0 * 3.0"], "v1", ["x0 = np.array([1.0, 2.0])\nargs = (x0,)\n"])
    check(prog)                      # the real backends agree
    with pytest.raises(Mismatch, match="Not equal to tolerance"):
        check(prog, backends=[nudge])
    fn, _ = build_function(prog.source())
    assert kiln.compile(fn, backend="eager")(*prog.args(0)).tolist() == [3.0, 6.0]
    assert set(BACKENDS) == {"eager", "aot_eager", "cpp"}


def test_a_program_past_the_time_limit_is_a_finding_with_its_source():
    from .programs import Program
    from .runner import ProgramTimeout
    prog = Program(["x0"], [], ["    while x0.sum() > -1.0:", "        x0 = x0 + 0.0"], "x0",
                   ["x0 = np.array([1.0, 2.0])\nargs = (x0,)\n"])
    with pytest.raises(ProgramTimeout, match=r"time limit of 0.3 s[\s\S]*def prog\(x0\)"):
        check(prog, backends=["eager"], time_limit=0.3)
    check(Program(["x0"], [], [], "x0", ["x0 = np.ones(2)\nargs = (x0,)\n"]), time_limit=60)


def test_a_program_hung_in_native_code_ends_the_run_with_its_source(tmp_path):
    """SIGALRM blocked (as a kernel looping in C never returns to the interpreter): the
    watchdog writes the reproducer and ends the process instead of hanging the run."""
    import subprocess
    import sys
    # (kiln's C helper is built first: a first build of it, after its source changed, can
    # take longer than the program's time limit on a loaded machine)
    script = (
        "from kiln.guards import fastcheck\nfastcheck.module()\n"
        "from tests.fuzz.programs import Program\nfrom tests.fuzz.runner import check\n"
        "body = ['    import signal, time', '    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGALRM])',"
        " '    time.sleep(30)']\n"
        "check(Program(['x0'], [], body, 'x0', ['x0 = 1.0\\nargs = (x0,)\\n']), backends=['eager'], time_limit=0.5)\n")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    done = subprocess.run([sys.executable, "-c", script], cwd=root, capture_output=True, text=True,
                          timeout=120, env={**os.environ, "TMPDIR": str(tmp_path)})
    assert done.returncode == 3, done.stderr
    assert "past twice the time limit" in done.stderr and "time.sleep(30)" in done.stderr
    [written] = tmp_path.glob("kiln-fuzz-hang-*.py")
    assert "def prog(x0):" in written.read_text()


def test_what_numpy_leaves_unspecified_is_not_drawn():
    """Which zero a min/max tie of +0.0 and -0.0 returns, and the sign of a NaN from a
    min/max reduction, differ between NumPy's own paths (docs/fuzzing.md): the generator
    recognizes both on any run's values and draws neither."""
    import numpy as np

    from .exprs import has_nan, mixed_zeros, zero_tie
    zeros, negzeros = np.zeros(3), -np.zeros(3)
    assert zero_tie([np.ones(3), zeros], [np.ones(3), negzeros])        # the second run ties
    assert zero_tie([np.float64(-0.0)], [0])                            # an int 0 is +0.0
    assert zero_tie([np.array([[-0.0], [1.0]])], [np.zeros(2)])         # after broadcasting
    assert not zero_tie([zeros, negzeros], [zeros, negzeros])           # same signs
    assert not zero_tie([np.array([0.0, -0.0])], [np.array([1.0, 2.0])])
    assert not zero_tie([np.ones(2)], [np.ones(3)])                     # does not broadcast
    assert mixed_zeros([np.ones(2), np.array([[0.0, 5.0], [-0.0, 1.0]])])
    assert not mixed_zeros([np.array([0.0, 0.0, 1.0]), negzeros, np.arange(3)])
    assert has_nan([np.ones(2), np.array([1.0, np.nan])]) and not has_nan([np.arange(3), np.ones(2)])


def test_numpy_bugs_and_ill_conditioned_chains_are_not_drawn():
    """NumPy 2.4's strided in-place ``np.negative`` and float32 exp of large arguments
    (docs/fuzzing.md, "NumPy's own bugs", "Ill-conditioned chains")."""
    import numpy as np

    from .exprs import ill_conditioned, shares_memory, strided_both
    x = np.arange(1.0, 33.0)[::8]
    assert strided_both([np.ones(2), x], [np.ones(2), x])             # the second run
    assert not strided_both([x], [np.ones(4)]) and not strided_both([np.ones(4)], [x])
    assert not strided_both([np.float64(1.0)], [np.float64(2.0)])
    y = np.array([15, 62], np.uint8)
    y[y > 0] = np.flip(y, 0)             # if NumPy starts buffering, the draw can come back
    assert y.tolist() == [62, 62]
    assert shares_memory([np.ones(2), y], [np.ones(2), np.flip(y, 0)])
    assert not shares_memory([y], [np.flip(y, 0).copy()]) and not shares_memory([y], [1.5])
    f32 = np.float32
    assert ill_conditioned("np.exp", [np.ones(2, f32), np.array([-20.0, 1.0], f32)])
    assert not ill_conditioned("np.exp", [np.array([-20.0, 1.0])])      # float64: 1e-16 per ulp
    assert not ill_conditioned("np.sin", [np.array([-20.0, 1.0], f32)])
    assert not ill_conditioned("np.exp", [np.array([1.5], f32)])
    assert ill_conditioned("np.exp", [np.array([1.5], f32)], repeats=3)  # exp(exp(1.5)) = 88


def test_ill_conditioned_float32_powers_are_not_drawn():
    """A float32 ``x ** y`` multiplies a last-bit difference by |y ln x| (seed 35504:
    ``v2 **= x0`` in a loop and after it); NumPy's float32 power and powf differ in
    the last bit, so no power amplifying more than POWER_CONDITION is drawn, on the
    first pass or later ones."""
    import numpy as np

    from .exprs import ill_conditioned_power, power_condition
    from .repeats import unspecified
    f32 = np.float32
    assert power_condition(np.array([2.0, 3.0], f32), np.array([4.0, -20.0], f32)) == 20 * np.log(3)
    assert power_condition(np.array([2.0]), 50.0) == 0.0                  # float64: not amplified
    assert power_condition(np.array([0.0, 1.0], f32), 3.0) == 3.0         # a base of 0 is exact
    assert not ill_conditioned_power([np.array([0.25, 4.0], f32)], [np.array([-4.0, 3.5], f32)])
    assert ill_conditioned_power([np.ones(2, f32), np.array([30.0, 2.0], f32)], [f32(1.0), f32(5.0)])
    assert ill_conditioned_power([np.array([2.0], f32)], [np.array([[1.0], [17.0]], f32)])
    # a later pass of a loop: the values its names have then, and the literals in its text
    assert unspecified("    v2 **= x0", {"v2": np.array([1.0, 2.0, 30.0], f32), "x0": np.ones(2, f32)})
    assert not unspecified("    v2 **= x0", {"v2": np.array([1.0, 2.0, 3.0], f32), "x0": np.ones(2, f32)})
    assert not unspecified("    v2 **= x0", {"v2": np.array([1.0, 2.0, 30.0]), "x0": np.ones(2)})
    assert unspecified("    v2 = v2 ** 20.0", {"v2": np.array([1.5], f32)})


def test_the_slack_sees_floats_in_dicts():
    """A float32 sum returned as a Python float in a dict counts for the slack's scale."""
    import numpy as np

    from .runner import _floats
    found = list(_floats({"a": [1.5, {"b": np.float32(2.0)}], "c": np.arange(3.0), "d": 3}))
    assert [float(np.max(f)) for f in found] == [1.5, 2.0, 2.0]


def test_the_slack_takes_eps_from_numpy_scalar_arguments():
    """Seeds 35029, 35525: float32 math from a np.float32 argument written into a float64
    array (``s0 *= np.arctan2(1.5, s1)``, ``np.exp(s1, out=x0)``) differs in float32's last
    bit; the slack's eps was float64's because only array arguments counted."""
    import numpy as np

    from .runner import _reduction_slack
    got, exp = [np.array(0.19635)], [np.array(0.19635 + 1.49e-8)]
    assert _reduction_slack(got, exp, [exp[0], np.float32(-1.0)])
    assert not _reduction_slack(got, exp, [exp[0], np.float64(-1.0)])


def test_what_numpy_leaves_unspecified_is_not_drawn_on_a_later_pass():
    """A loop body is drawn against its first iteration's values; the probe checks the
    later passes too (tests/fuzz/repeats.py). Seed 19519: the second pass took the max of
    a column holding -0.0 and +0.0."""
    import numpy as np

    from .programs import build_function
    from .repeats import Repeats, instrument, unspecified

    def hit(body: list[str], x) -> bool:
        lines, bodies = instrument(["def helper1(p0):", "    return np.fmax(p0, 0)", "",
                                    "def prog(x2):", *body, "    return locals()"])
        assert lines[1].strip() == "__repeat__(0, locals())" and len(bodies) == len(body) // 2 + 1
        fn, _ = build_function("\n".join(lines) + "\n")
        fn.__globals__["__repeat__"] = repeats = Repeats(bodies)
        with np.errstate(all="ignore"):
            fn(np.array(x, np.float32))
        return repeats.hit

    x = [[-3.75, 2.25], [-0.25, 2.0], [0.0, 0.75]]     # call 1: column 0 becomes -0.0, 0.0, 0.0
    step = "        np.true_divide(x2.max(axis=-2, keepdims=True), x2.mean(axis=1, keepdims=True), out=x2)"
    assert hit(["    for i3 in range(2):", step], x)
    assert not hit(["    for i3 in range(1):", step], x)                # one pass: checked when drawn
    assert not hit(["    for i3 in range(2):", step.replace(".max(", ".sum(")], x)
    assert hit(["    for i3 in range(3):", "        x2 *= -1.0", "        v = helper1(x2)"], [[0.0, 1.0]])
    assert unspecified("np.maximum(a, 0)", {"a": np.array([-0.0, 1.0])})    # a literal +0
    assert not unspecified("np.maximum(a, 1.5)", {"a": np.array([-0.0, 1.0])})
    assert unspecified("np.copysign(b, a)", {"a": np.array([np.nan]), "b": 1.0})
    assert not unspecified("a + b", {"a": np.array([-0.0, 0.0]), "b": np.nan})


def test_stop_45_draws_leave_numpys_open_choices_out():
    """A non-stable argsort of ties, and a sort of both signed zeros, are NumPy's path's
    choice (tests/fuzz/more.py); an early return is read by the probe as ``return locals()``."""
    import numpy as np

    from .more import _has_ties
    from .programs import Program
    assert _has_ties([np.array([[1.0, 2.0], [3.0, 3.0]])], -1) and not _has_ties([np.array([[1.0, 2.0], [1.0, 3.0]])], -1)
    assert _has_ties([np.array([[1.0, 2.0], [1.0, 3.0]])], 0) and _has_ties([np.array([1.0, 2.0, 1.0])], None)
    assert _has_ties([np.array([0.0, -0.0])], -1) and _has_ties([np.array([np.nan, 1.0])], 0)
    assert not _has_ties([np.zeros((0, 3)), np.float64(1.0)], 0)
    prog = Program(["x0"], [], ["    if x0.sum() > 1:", "        return x0 * 2", "    v1 = x0 + 1"], "v1",
                   ["x0 = np.array([1.0, 2.0])\nargs = (x0,)\n"])
    assert "        return locals()" in prog.source(probe=True) and "return x0 * 2" in prog.source()
    fn, _ = build_function(prog.source())
    assert fn(*prog.args(0)).tolist() == [2.0, 4.0]


def test_the_warnings_check_takes_kilns_warnings_among_numpys():
    """KILN_FUZZ_WARNINGS=1: kiln may warn less than NumPy (only where certain), not
    otherwise; 2: the same warnings."""
    import warnings

    from . import runner

    def caught(*messages):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            for m in messages:
                warnings.warn(m, RuntimeWarning)
        return w

    numpy_said = caught("divide by zero encountered in floor_divide", "invalid value encountered in floor_divide")
    old = runner.WARNINGS
    try:
        runner.WARNINGS = "1"
        runner._same_warnings(caught("divide by zero encountered in floor_divide"), numpy_said, "call 0")
        with pytest.raises(Mismatch, match="overflow"):
            runner._same_warnings(caught("overflow encountered in exp"), numpy_said, "call 0")
        runner.WARNINGS = "2"
        with pytest.raises(Mismatch):
            runner._same_warnings(caught("divide by zero encountered in floor_divide"), numpy_said, "call 0")
    finally:
        runner.WARNINGS = old


def test_stop_46_draws_leave_numpys_open_choices_out():
    """A sort, unique, partition or nan-min/max in a loop body meets both signed zeros on a
    later pass (repeats.py), and det/inv/solve draw well-conditioned matrices only
    (tests/fuzz/extra.py)."""
    import numpy as np

    from .extra import _well_conditioned
    from .repeats import unspecified
    zeros = {"v": np.array([0.0, -0.0, 1.0])}
    for text in ("    w = np.sort(v)", "    w = np.unique(v)", "    w = np.nanmax(v)", "    w = np.partition(v, 1)",
                 "    w = np.ptp(v)", "    w = np.searchsorted(v, 0.0)"):
        assert unspecified(text, zeros) and not unspecified(text, {"v": np.array([0.0, 1.0])})
    assert _well_conditioned([np.eye(3) * 2, np.array([[2.0, 1.0], [1.0, 3.0]])])
    assert not _well_conditioned([np.ones((2, 2))]) and not _well_conditioned([np.array([[np.inf, 0], [0, 1.0]])])
