"""Time-stepping loops over whole arrays: a range or while loop whose body is an ordinary graph.

``graph_loop`` is the second kind of loop node (kiln/ops/loops.py has the element/vector
one), ``graph_while`` its while form. Its body is a graph of whole-array work of static shape that does not read the loop
variable (``jacobi_2d``'s ``B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + ...)``, a heat step
``u = u + dt * lap(u)``, ``u, v = v, u``): capture traces it once
(kiln/capture/graph_loop.py), and it runs ``len(range(start, stop, step))`` times.

The body graph takes ``(*carried, *operands)``. It may write its carried arrays in place
(mutation ops on its placeholders: the body's compiled function writes them, as a compiled
function writes its caller's arrays); it returns the carried values it *computes* anew.
``GraphLoopBody.next`` says where each carried value of the next iteration comes from:
``("out", m)`` the body's output ``m``, ``("in", j)`` carried value ``j`` (the arrays of
``u, v = v, u`` change places). Like ``loop``, ``graph_loop`` is functional: the arrays it
carries are copied first, and its result is the tuple of final carried values
(``loop_item`` reads them).

``graph_while`` (``while diff > rtol and ite < maxiter:`` around a Jacobi sweep, a
convergence loop) runs the same kind of body while its test says so. The test is the
bytecode's: a chain of values tested one after the other (``and``/``or``), each jump
either leaving the loop or going on (:class:`WhileTests`). The body computes every value
the chain tests as extra outputs, after its carried values, and the driver tests them
with Python's own ``bool``, so NaN compares as in Python and the short circuit is the
bytecode's. The entry test is another chain, over values the enclosing graph computed
(none: the loop runs at least once, capture decided the first test). Carried values may
be Python numbers and NumPy scalars (``ite += 1``, ``diff = np.sqrt(...)``), besides
arrays.

In the function's own (mutating) graph a loop node runs its body's NumPy program on the
caller's arrays themselves, as Python does (``writes_back``): an error on trip 3 leaves
trips 1 and 2 written. That graph runs where the backend interprets it, and where a
compiled graph raised and its caller replays it op by op; a functionalized graph's node
(``functional()``) works on copies and writes nothing back.

The body runs through the backend that compiled the enclosing graph: the C++ backend
gives it its own compiled function (aot functionalization + fused kernels, compiled once
whatever the trip count, see ``compiler``); otherwise it is the body's NumPy program.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..array_kinds import is_device_array
from .loops import RUNTIME_TRIPS, LoopBody, may_overlap, priced_trips
from .meta import fresh_copy
from .registry import Category, declare


class WhileTests:
    """How a while loop decides to go on: ``tests`` are ``(value index, when, go)`` in the
    order the bytecode tests them — the jump is taken when ``bool(value) is when``, and
    then the loop goes on (``go``) or ends; where no jump is taken, ``fall`` decides.

        >>> WhileTests(((0, False, False), (1, False, False)), True).go_on((True, 3 < 2))
        False
    """

    def __init__(self, tests: tuple, fall: bool) -> None:
        self.tests = tests
        self.fall = fall

    def go_on(self, values: Any) -> bool:
        for k, when, go in self.tests:
            if bool(values[k]) is when:   # Python's truth: NaN > tol is False
                return go
        return self.fall

    def python(self, name: str) -> str:
        """The decision as a Python expression over ``name[k]``."""
        expr = repr(self.fall)
        for k, when, go in reversed(self.tests):
            expr = f"{go!r} if bool({name}[{k}]) is {when!r} else {expr}"
        return expr


class GraphLoopBody:
    """A time-stepping loop's body graph and how its values line up (see the module doc).
    ``tests``: a while loop's ``(entry, each)`` :class:`WhileTests` (None: a range loop);
    each trip's tested values are the body's outputs from ``n_outs`` on."""

    _count = 0

    def __init__(self, graph: Any, n_carried: int, nxt: tuple, where: str = "",
                 tests: tuple | None = None, stacked: tuple = (), exits: tuple = (),
                 breaks: "WhileTests | None" = None) -> None:
        self.graph = graph
        # A range loop whose break is followed by rebindings (``if done: break`` then ``C =
        # newC``): on a trip that breaks, Python skips them, so carried value ``p`` ends as
        # carried value ``q`` was when that trip started, for each ``(p, q)`` of ``exits``;
        # ``breaks`` is the break's own test (the loop broke where it says out).
        self.exits, self.breaks = exits, breaks
        # The lists the loop appends to (kiln/capture/loop_lists.py): the metas of the
        # ``(trips, *shape)`` buffers of the body's last ``len(stacked)`` outputs, one row a
        # trip, which the node returns after its carried values (a while loop's trip count
        # is the data's: its buffers grow, and the first dim of their metas is a hint).
        self.stacked = stacked
        self.n_carried = n_carried
        self.next = nxt
        self.where = where
        self.tests = tests
        self.writes_back = True     # see the module doc
        self._functional: "GraphLoopBody | None" = None
        GraphLoopBody._count += 1
        self.name = f"graph_loop_body_{GraphLoopBody._count}"
        graph.name = self.name
        # ``compiler(graph, example_inputs) -> (callable, written)``: set by a backend that
        # compiles the body (kiln/runtime/backend.py); None runs the body's NumPy program.
        # ``written`` (carried position -> output) says which written arrays the compiled
        # body returns as new arrays instead of writing them in place.
        self.compiler: Callable | None = None
        self.runner: Callable | None = None
        self.runner_next: tuple = nxt
        self.compiles = 0      # how many times the body was compiled (tests read it)
        self.reference: Callable | None = None   # the body's NumPy program, once made
        self.n_outs = sum(1 for kind, _ in nxt if kind == "out")
        # Positions (in carried) of the caller's arrays a functional graph hands this loop
        # (kiln/lowering/loop_donate.py): where its compiled body is the functional form,
        # which writes no input (``written``), the loop reads them uncopied.
        self.donate: frozenset = frozenset()
        self.writes_no_input = False
        # Carried positions the compiled body may write the new value into (:meth:`reusable`)
        self.in_place: frozenset = frozenset()

    def __repr__(self) -> str:
        return f"<kiln {self.name}>"

    def functional(self) -> "GraphLoopBody":
        """This body for a functionalized graph: it works on copies (one per body, so the
        body compiles once however often the enclosing graph is functionalized)."""
        if self._functional is None:
            copy = GraphLoopBody.__new__(GraphLoopBody)
            copy.__dict__.update(self.__dict__)
            copy.writes_back = False
            copy._functional = copy
            self._functional = copy
        return self._functional

    def donating(self, position: int) -> "GraphLoopBody":
        """This body, given the caller's array at carried ``position`` (see ``donate``)."""
        copy = GraphLoopBody.__new__(GraphLoopBody)
        copy.__dict__.update(self.__dict__)
        copy.donate = self.donate | {position}
        copy.runner, copy.compiles = None, 0
        return copy

    def callable_for(self, args: tuple) -> Callable:
        if self.runner is None:
            if self.compiler is not None:
                self.runner, written, self.in_place = self.compiler(
                    self.graph, list(args), reusable=self.reusable(args))
                self.writes_no_input = bool(written)
                self.runner_next = tuple(("out", written[k]) if kind == "in" and k in written
                                         else (kind, k) for kind, k in self.next)
            else:
                from ..ir.printer import numpy_program
                self.runner = numpy_program(self.graph, label=self.name)
            self.compiles += 1
        return self.runner

    def reusable(self, args: tuple) -> frozenset:
        """The carried positions whose array no one reads once a trip has computed its new
        value: no other position carries it on (``next``), and no break's rebinding reads
        it as it was when the trip started (``exits``). The loop's state is its own copies
        (:func:`_run`), so a compiled body may write the new value there; not a caller's
        array the loop reads uncopied (``donate``: writing it would need a copy in)."""
        kept = {q for _, q in self.exits} | self.donate
        return frozenset(i for i in range(len(self.next))
                         if i not in kept and isinstance(args[i], np.ndarray)
                         and not any(n == ("in", i) for p, n in enumerate(self.next) if p != i))

    def run(self, trips: int | None, state: list, operands: tuple) -> tuple:
        """``trips`` iterations on ``state`` (arrays it owns: written in place); None: a
        while loop's, which its entry test let in (at least one)."""
        if trips is not None and trips <= 0:
            return tuple(state) + no_rows(self)
        fn = self.callable_for(tuple(state) + operands)
        # Later iterations: the compiled function's short path (the arrays are the loop's
        # own, none overlaps another, their layouts are those of the first call).
        fast = getattr(fn, "plain_path", None)
        fast = fast() if fast is not None else None
        if trips is None and fast is not None and not self.exits:
            spread = getattr(fn, "spread_path", None)
            spread = spread() if spread is not None else None
            return run_while(self, fn, spread or fast, spread is not None, state, operands,
                             self.runner_next)
        return iterate(self, fn, fast, trips, state, operands, self.runner_next)


def iterate(body: GraphLoopBody, fn: Callable, fast: Callable | None, trips: int | None,
            state: list, operands: tuple, nxt: tuple) -> tuple:
    """Run ``fn`` (then ``fast``, its short path) ``trips`` times, or while the while
    loop's test says so; the carried values of the next trip are as ``nxt`` says (and
    the stacked outputs copied into their buffers' rows, ``GraphLoopBody.stacked``)."""
    prev = state
    outs = fn(*state, *operands)
    state = [outs[k] if kind == "out" else state[k] for kind, k in nxt]
    if fast is None:
        fast = lambda args: fn(*args)   # noqa: E731
    if body.stacked:
        return _stacking(body, fast, trips, outs, state, operands, nxt, prev)
    if trips is not None:
        for _ in range(trips - 1):
            outs = fast((*state, *operands))
            state = [outs[k] if kind == "out" else state[k] for kind, k in nxt]
        return tuple(state)
    each = body.tests[1]
    tested = outs[body.n_outs:]
    done = 1
    while each.go_on(tested):
        prev = state
        outs = fast((*state, *operands))
        state = [outs[k] if kind == "out" else state[k] for kind, k in nxt]
        tested = outs[body.n_outs:]
        done += 1
    stats["trips"] += done
    return exit_state(body, prev, state, tested)


def exit_state(body: GraphLoopBody, prev: list, state: list, tested: Any) -> tuple:
    """The carried values after the loop: ``state``, but where the last trip broke (its
    break test said out, ``GraphLoopBody.breaks``) those of ``body.exits`` as they were
    when it started (``prev``): Python skipped the rebindings after the break."""
    if not body.exits or body.breaks.go_on(tested):
        return tuple(state)
    state = list(state)
    for p, q in body.exits:
        state[p] = prev[q]
    return tuple(state)


stats = {"runs": 0, "trips": 0}   # tests and benchmarks read it

# A while loop's row buffers start with this many rows and double when full.
FIRST_ROWS = 16


def _stacking(body: GraphLoopBody, fast: Callable, trips: int | None, outs: Any, state: list,
              operands: tuple, nxt: tuple, prev: list) -> tuple:
    """:func:`iterate` for a loop that appends to lists (``GraphLoopBody.stacked``): the
    body's last outputs copied into one row a trip of their buffers, returned after the
    carried values, as many rows as trips ran. ``outs``: the first trip's outputs."""
    count = len(body.stacked)
    rows = _first_rows(body, outs, trips)
    first = _first_stacked(body)
    done = 1
    while done < trips if trips is not None else body.tests[1].go_on(outs[body.n_outs:]):
        prev = state
        outs = fast((*state, *operands))
        state = [outs[k] if kind == "out" else state[k] for kind, k in nxt]
        if done == len(rows[0]):       # (a while loop's: its trip count is the data's)
            rows = [_grown(r) for r in rows]
        for r, o in zip(rows, outs[first:first + count]):
            r[done] = o
        done += 1
    if trips is None:
        stats["trips"] += done
        return exit_state(body, prev, state, outs[body.n_outs:]) + _trimmed(rows, done)
    return tuple(state) + _trimmed(rows, done)


def _first_rows(body: GraphLoopBody, outs: Any, trips: int | None) -> list:
    """The row buffers of ``body.stacked`` (``trips`` rows, or FIRST_ROWS to grow), the
    first trip's ``outs`` in their first row."""
    count = len(body.stacked)
    cap = trips if trips is not None else FIRST_ROWS
    rows = [np.empty((cap,) + tuple(m.shape[1:]), m.dtype) for m in body.stacked]
    first = _first_stacked(body)
    for r, o in zip(rows, outs[first:first + count]):
        r[0] = o
    return rows


def _first_stacked(body: GraphLoopBody) -> int:
    """Where the stacked values start among a trip's outputs: the body graph's last
    outputs. A compiled body returns the carried arrays it writes after those (``written``,
    :meth:`GraphLoopBody.callable_for`): ``u[1:-1] = ...`` beside ``hist.append(...)``."""
    return len(body.graph.output_node.args[0]) - len(body.stacked)


def no_rows(body: GraphLoopBody) -> tuple:
    """The stacked results of a loop that ran no trip (capture guards against it: the
    list would be NumPy's float64 ``(0,)``)."""
    return tuple(np.empty((0,) + tuple(m.shape[1:]), m.dtype) for m in body.stacked)


def _grown(rows: np.ndarray) -> np.ndarray:
    return np.concatenate((rows, np.empty_like(rows)))


def _trimmed(rows: list, done: int) -> tuple:
    """The rows NumPy's np.array of the list gives: a new array of the ``done`` rows."""
    return tuple(r if done == len(r) else r[:done].copy() for r in rows)


def run_while(body: GraphLoopBody, fn: Callable, fast: Callable, spread: bool, state: list,
              operands: tuple, nxt: tuple) -> tuple:
    """:func:`iterate` for a while loop on a compiled body: the first trip through
    ``fn``, the rest through a driver generated for this body's carried values and test
    (:func:`while_driver`; ~0.3 us a trip where the general loop took ~0.9)."""
    outs = fn(*state, *operands)
    state = [outs[k] if kind == "out" else state[k] for kind, k in nxt]
    rows = _first_rows(body, outs, None) if body.stacked else []
    tested = outs[body.n_outs:]
    if not body.tests[1].go_on(tested):
        stats["trips"] += 1
        return tuple(state) + _trimmed(rows, 1)
    drive = while_driver(nxt, body.tests[1], body.n_outs, len(operands), spread, len(rows),
                         _first_stacked(body) if rows else 0)
    if rows:
        state, done, rows = drive(fast, rows, *state, *operands)
    else:
        state, done = drive(fast, *state, *operands)
    stats["trips"] += 1 + done
    return state + _trimmed(rows, 1 + done)


_drivers: dict = {}


def while_driver(nxt: tuple, each: WhileTests, n_outs: int, n_operands: int, spread: bool,
                 stacked: int = 0, first: int = 0) -> Callable:
    """``drive(fast, *carried, *operands) -> (carried, trips)``: trips of ``fast`` while
    ``each`` says so, the carried values in locals (one per body, generated once):

        def drive(fast, c0, c1, a0):
            done = 0
            while True:
                o = fast(c0, c1, a0)         # (spread; else fast((c0, c1, a0)))
                c0, c1 = o[1], c0            # GraphLoopBody.next
                done += 1
                if not (False if bool(o[2]) is False else True):
                    return (c0, c1), done

    ``stacked``: the body's outputs from ``first`` on are rows of lists it appends to
    (``GraphLoopBody.stacked``): ``drive(fast, rows, ...)`` writes one row a trip from row
    1 on, doubling full buffers, and returns ``(carried, trips, rows)``.
    """
    key = (nxt, each.tests, each.fall, n_outs, n_operands, spread, stacked, first)
    drive = _drivers.get(key)
    if drive is None:
        carried = [f"c{j}" for j in range(len(nxt))]
        args = ", ".join(carried + [f"a{j}" for j in range(n_operands)])
        call = f"fast({args})" if spread else f"fast(({args},))"
        new = ", ".join(f"o[{k}]" if kind == "out" else f"c{k}" for kind, k in nxt)
        test = each.python("o").replace("o[", f"o[{n_outs} + ")
        rows = [f"r{j}" for j in range(stacked)]
        done = "done" if not stacked else "done, (" + ", ".join(rows) + ",)"
        lines = [f"def drive(fast, {'rows, ' if stacked else ''}{args}):",
                 "    done = 0"] + ([f"    {', '.join(rows)}, = rows",
                                     "    cap = len(r0)"] if stacked else []) + [
                 "    while True:",
                 f"        o = {call}",
                 f"        {', '.join(carried)}, = {new},",
                 "        done += 1"] + ([
                 "        if done == cap:",
                 "            cap *= 2"] + [f"            {r} = _grown({r})" for r in rows] + [
                 f"        {r}[done] = o[{first + j}]" for j, r in enumerate(rows)] if stacked else []) + [
                 f"        if not ({test}):",
                 f"            return ({', '.join(carried)},), {done}"]
        space: dict = {"_grown": _grown}
        exec(compile("\n".join(lines) + "\n", f"<kiln while driver {len(_drivers)}>", "exec"), space)
        drive = _drivers[key] = space["drive"]
    return drive


def _trips(start: Any, stop: Any, step: Any) -> int:
    return len(range(int(start), int(stop), int(step)))


def _graph_loop_impl(start: Any, stop: Any, step: Any, carried: tuple, operands: tuple,
                     body: GraphLoopBody) -> tuple:
    trips = _trips(start, stop, step)
    stats["trips"] += trips
    return _run(body, trips, carried, operands)


def _graph_while_impl(entry: tuple, carried: tuple, operands: tuple, body: GraphLoopBody) -> tuple:
    if not body.tests[0].go_on(entry):
        return tuple(carried) + no_rows(body)
    return _run(body, None, carried, operands)


def _run(body: GraphLoopBody, trips: int | None, carried: tuple, operands: tuple) -> tuple:
    stats["runs"] += 1
    arrays = [v for v in carried if isinstance(v, np.ndarray)]
    others = arrays + [v for v in operands if isinstance(v, np.ndarray)]
    if body.writes_back or any(may_overlap(a, o) for k, a in enumerate(arrays)
                               for m, o in enumerate(others) if m > k or m >= len(arrays)):
        # The function's own graph (see the module doc), or the caller's arrays overlap
        # (``A`` and ``A.T``): NumPy's order of writes, and the state an error leaves,
        # hold only when each iteration works on the caller's own memory, op by op.
        from ..ir.printer import numpy_program
        if body.reference is None:
            body.reference = numpy_program(body.graph, label=body.name)
        if trips is not None and trips <= 0:
            return tuple(carried) + no_rows(body)
        return iterate(body, body.reference, None, trips, list(carried), operands, body.next)
    # (carried arrays are copied on their device: a CuPy array by CuPy; a donated one
    # that the compiled body only reads is not: a C-contiguous copy has its layout)
    uncopied = body.donate if body.writes_no_input and body.runner is not None else ()
    state = [v if k in uncopied and type(v) is np.ndarray and v.flags.c_contiguous
             else _same_layout_copy(v) if isinstance(v, np.ndarray) else fresh_copy(v)
             if is_device_array(v) else v for k, v in enumerate(carried)]
    return body.run(trips, state, tuple(operands))


def _same_layout_copy(x: np.ndarray) -> np.ndarray:
    """A copy of ``x`` with ``x``'s strides: the body's ravels and reshapes then give views
    where NumPy's on ``x`` do, and copies where they copy (a contiguous copy of ``x[::2,
    ::2]`` made ``w = np.ravel(x); w -= 1`` write into the caller's array; fuzzer seed
    13133)."""
    itemsize = x.itemsize
    if x.flags.c_contiguous or x.flags.f_contiguous or x.size == 0 \
            or any(s % itemsize for s in x.strides):
        return fresh_copy(x)
    lo = sum((n - 1) * s for n, s in zip(x.shape, x.strides) if s < 0) // itemsize
    hi = sum((n - 1) * s for n, s in zip(x.shape, x.strides) if s > 0) // itemsize + 1
    buf = np.empty(hi - lo, x.dtype)
    out = np.lib.stride_tricks.as_strided(buf[-lo:], x.shape, x.strides, writeable=True)
    np.copyto(out, x)
    return out


def _graph_loop_meta(start: Any, stop: Any, step: Any, carried: tuple, operands: tuple,
                     body: GraphLoopBody) -> tuple:
    return tuple(carried) + tuple(body.stacked)


def _copied(v: Any, format_value: Callable, consts: dict) -> str:
    """A carried value as the printed loop starts it: arrays copied, numbers as they are."""
    text = format_value(v, consts)
    val = getattr(v, "val", v)
    return f"np.copy({text})" if getattr(val, "shape", ()) != () else text


def _print_graph_loop(node: Any, consts: dict, format_value: Callable, python_code: Callable) -> list:
    """The loop as runnable Python: the body as a function, then the for statement.

        graph_loop = (A, B,)       # (np.copy(A), ... in a functionalized graph)
        for graph_loop_i in range(1, 50, 1):
            _out = graph_loop_body_1(*graph_loop, c)
            graph_loop = (graph_loop[0], _out[0],)

    A while loop (``graph_while``) tests the values its body computed after the carried
    ones, as the bytecode does:

        graph_while_go = True
        while graph_while_go:
            graph_while_out = graph_loop_body_2(*graph_while, b)
            graph_while = (graph_while[0], graph_while_out[0],)
            graph_while_go = False if bool(graph_while_out[1:][0]) is False else True
    """
    body: GraphLoopBody = node.kwargs["body"]
    carried, operands = node.args[-2:]
    lines = python_code(body.graph, consts).rstrip("\n").split("\n")
    # The function's own graph (writes_back) runs the body on the caller's arrays, as
    # Python does (an error leaves the trips before it written); a functionalized
    # graph's loop works on copies.
    init = ", ".join(format_value(v, consts) if body.writes_back else _copied(v, format_value, consts)
                     for v in carried)
    rest = "".join(f", {format_value(v, consts)}" for v in operands)
    nxt = ", ".join(f"{node.name}_out[{k}]" if kind == "out" else f"{node.name}[{k}]"
                    for kind, k in body.next)
    step = [f"    {node.name}_out = {body.name}(*{node.name}{rest})",
            f"    {node.name} = ({nxt},)"]
    lines.append(f"{node.name} = ({init},)  # graph loop node: carried values")
    if body.tests is None:
        bounds = ", ".join(f"int({format_value(v, consts)})" if hasattr(v, "kind")
                           else format_value(v, consts) for v in node.args[:3])
        if not body.stacked:
            return lines + [f"for {node.name}_i in range({bounds}):"] + step
        # the appended values' rows (kiln/capture/loop_lists.py), stacked after the loop
        rows = f"{node.name}_rows"
        return lines + [f"{rows} = {tuple([] for _ in body.stacked)!r}",
                        f"for {node.name}_i in range({bounds}):"] + step + _print_rows(node, body, rows)
    entry, each = body.tests
    go = f"{node.name}_go"
    if entry.tests:
        lines.append(f"{node.name}_test = {format_value(tuple(node.args[0]), consts)}")
    rows = f"{node.name}_rows"
    lines += [f"{rows} = {tuple([] for _ in body.stacked)!r}"] if body.stacked else []
    tested = f"{node.name}_out[{body.n_outs}:]"
    exits = []
    if body.exits:
        # (a break skips the rebindings after it: those names as the trip started)
        step = [f"    {node.name}_prev = {node.name}"] + step
        picks = dict(body.exits)
        again = ", ".join(f"{node.name}_prev[{picks[p]}]" if p in picks else f"{node.name}[{p}]"
                          for p in range(len(body.next)))
        exits = [f"if not ({body.breaks.python(tested)}):",
                 f"    {node.name} = ({again},)"]
    stacking = _print_rows(node, body, rows) if body.stacked else []
    return lines + [f"{go} = {entry.python(node.name + '_test')}",
                    f"while {go}:"] + step + [
                    f"    {go} = {each.python(tested)}"] + stacking[:-1] + exits + stacking[-1:]


def _print_rows(node: Any, body: GraphLoopBody, rows: str) -> list:
    """The appended values' rows (the body's last outputs), stacked after the loop."""
    return [f"    for _r, _o in zip({rows}, {node.name}_out[{-len(body.stacked)}:]):",
            "        _r.append(np.array(_o))",
            f"{node.name} = {node.name} + tuple(np.array(_r) for _r in {rows})"]


def _graph_loop_python_us(node: Any, per_op_us: Callable) -> float | None:
    """The loop run as Python: its trips (loops.priced_trips) times its body's ops."""
    body: GraphLoopBody = node.kwargs["body"]
    per_trip = sum(per_op_us(n) for n in body.graph.calls)
    return priced_trips(*node.args[:3]) * per_trip


graph_loop = declare("graph_loop", Category.EXTERN, _graph_loop_impl,
                     inputs=("start", "stop", "step", "carried", "operands"),
                     params={"body": None}, meta=_graph_loop_meta, may_raise=True,
                     functional_params=lambda params: {**params, "body": params["body"].functional()},
                     print_python=_print_graph_loop,
                     doc="for _ in range(start, stop, step): carried = body(*carried, *operands) "
                         "(a body of whole-array work, compiled once)")
graph_loop.python_us = _graph_loop_python_us


def _graph_while_meta(entry: tuple, carried: tuple, operands: tuple, body: GraphLoopBody) -> tuple:
    return tuple(carried) + tuple(body.stacked)


graph_while = declare("graph_while", Category.EXTERN, _graph_while_impl,
                      inputs=("entry", "carried", "operands"),
                      params={"body": None}, meta=_graph_while_meta, may_raise=True,
                      functional_params=lambda params: {**params, "body": params["body"].functional()},
                      print_python=_print_graph_loop,
                      doc="while test: carried = body(*carried, *operands) (a body of "
                          "whole-array work, compiled once; its test's values are outputs)")


def _graph_while_python_us(node: Any, per_op_us: Callable) -> float:
    """The while loop run as Python: its trip count is the data's, so it is priced at
    loops.RUNTIME_TRIPS trips of its body's ops (as a range loop of a run-time count is),
    against as many compiled trips (:func:`_graph_while_compiled_us`): per trip, the body
    as NumPy calls against the driver's step plus the body compiled. (Unpriced, a power
    iteration whose body is a matmul, a dot and a norm of 200 values, NumPy's calls either
    way, compiled at 1.35x NumPy's time: 3 us a trip of driver.)"""
    body: GraphLoopBody = node.kwargs["body"]
    return RUNTIME_TRIPS * sum(per_op_us(n) for n in body.graph.calls)


graph_while.python_us = _graph_while_python_us


def _loop_rows_unbacked(values: Any, index: int) -> tuple:
    meta = values[index] if isinstance(values, tuple) else values
    # (every list of one loop has a row a trip: one size for all, which they share)
    return ("loop_rows", 0), ("u",) + (None,) * (len(meta.shape) - 1)


# A while loop's rows of a list it appends to: their count is the trip count, known once
# the loop ran (an "unbacked" size, kiln/ops/selection.py).
loop_rows = declare("loop_rows", Category.EXTERN, lambda values, index: values[index],
                    inputs=("values",), params={"index": 0},
                    meta=lambda values, index: values[index] if isinstance(values, tuple) else values,
                    data_dependent=True, unbacked=_loop_rows_unbacked,
                    doc="the rows a while loop appended to a list, one a trip")
loop_rows.fresh_result = True
# ... and how many (``len(losses)`` after the loop), a Python int
loop_count = declare("loop_count", Category.EXTERN, lambda rows: len(rows), inputs=("rows",),
                     meta=lambda rows: 1, doc="len(rows) of a loop's rows, a Python int")


# One trip of the compiled loop besides its body's own calls: the Python driver calling
# the body's compiled graph (its entry, carried arrays handed on). Measured loaded on a
# 100-step np.tanh(A @ x) over 8 elements: 2.2 us a trip, 0.9 of them the body's matmul
# and kernel.
GRAPH_LOOP_TRIP_US = 1.3


def _graph_loop_compiled_us(node: Any, body_us: Callable) -> float | None:
    """The compiled loop: trips (loops.priced_trips) times (the driver's step + its body's
    compiled calls)."""
    per_trip = body_us(node.kwargs["body"].graph)
    return None if per_trip is None else priced_trips(*node.args[:3]) * (GRAPH_LOOP_TRIP_US + per_trip)


graph_loop.compiled_us = _graph_loop_compiled_us


def _graph_while_compiled_us(node: Any, body_us: Callable) -> float | None:
    per_trip = body_us(node.kwargs["body"].graph)
    return None if per_trip is None else RUNTIME_TRIPS * (GRAPH_LOOP_TRIP_US + per_trip)


graph_while.compiled_us = _graph_while_compiled_us


def runtime_trips(node: Any) -> bool:
    """Is ``node`` a loop whose trip count is known only at run time (priced at
    loops.RUNTIME_TRIPS trips)?"""
    return isinstance(node.kwargs.get("body"), (LoopBody, GraphLoopBody)) \
        and not all(type(v) is int for v in node.args[:3])
