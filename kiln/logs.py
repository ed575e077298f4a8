"""kiln's logs: named artifacts written to stderr, never stdout.

Turn them on with the environment (``KILN_LOGS=graph,guards,recompiles,graph_breaks``,
or ``all``) or from Python::

    import kiln
    kiln.set_logs("graph,guards")      # or kiln.set_logs(graph=True, guards=True)
    kiln.set_logs()                    # all off

Every message starts with ``[kiln:<artifact>]`` and the compiled function's name, then
the body (a printed graph, one guard per line, ...). The text is stable: tests pin it.
"""
from __future__ import annotations

import os
import sys

ARTIFACTS = ("graph", "guards", "recompiles", "graph_breaks", "aot", "fusion", "output_code", "perf")

_enabled: set[str] = set()


def _parse(spec: str) -> set[str]:
    names = {part.strip() for part in spec.split(",") if part.strip()}
    if "all" in names:
        return set(ARTIFACTS)
    unknown = names - set(ARTIFACTS)
    if unknown:
        raise ValueError(f"unknown kiln log artifact(s) {sorted(unknown)}; "
                         f"choose from {', '.join(ARTIFACTS)} or 'all'")
    return names


def set_logs(spec: str | None = None, **flags: bool) -> None:
    """Enable log artifacts: a comma list (``"graph,guards"``, ``"all"``) and/or flags.

    Calling it replaces the previous selection; ``set_logs()`` turns every log off.

        >>> import kiln
        >>> kiln.set_logs(graph=True)
        >>> kiln.set_logs()
    """
    names = _parse(spec) if spec else set()
    for name, on in flags.items():
        if name not in ARTIFACTS:
            raise ValueError(f"unknown kiln log artifact '{name}'; choose from {', '.join(ARTIFACTS)}")
        if on:
            names.add(name)
        else:
            names.discard(name)
    _enabled.clear()
    _enabled.update(names)


def enabled(artifact: str) -> bool:
    return artifact in _enabled


def log(artifact: str, header: str, body: str = "") -> None:
    """Write one message if ``artifact`` is on: ``[kiln:artifact] header`` then the body."""
    if artifact not in _enabled:
        return
    text = f"[kiln:{artifact}] {header}\n"
    if body:
        text += "".join(f"    {line}\n" for line in body.rstrip("\n").split("\n"))
    sys.stderr.write(text)
    sys.stderr.flush()


try:
    set_logs(os.environ.get("KILN_LOGS", ""))
except ValueError as e:  # a typo in the environment should not break imports
    sys.stderr.write(f"kiln: ignoring KILN_LOGS: {e}\n")
