"""FX-like graph IR: Graph/Node, a printer that emits runnable Python, the reference
interpreter, and the passes lint/DCE/CSE."""
from .graph import Graph, Node, iter_nodes, map_nodes
from .interpreter import Interpreter
from .passes import GraphLintError, cse, dce, lint
from .printer import python_code
from .tracer import Proxy, trace

__all__ = ["Graph", "Node", "iter_nodes", "map_nodes", "Interpreter", "GraphLintError", "cse",
           "dce", "lint", "python_code", "Proxy", "trace"]
