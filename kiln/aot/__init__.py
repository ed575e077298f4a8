"""kiln's AOTAutograd: functionalization, joint forward/backward graphs, the min-cut
partitioner, and the runtime that puts a compiled graph on the eager tape.

    from kiln.aot import aot_autograd, aot_eager, functionalize

``aot_autograd(graph, example_inputs, fw_compiler, bw_compiler=None) -> callable`` is the
entry point backends use; ``aot_eager`` is the ``backend="aot_eager"`` callable.
See docs/aot.md.
"""
from .functionalize import Plan, functionalize, functionalize_with_plan, has_mutation
from .joint import Joint, build_joint
from .partition import Partition, min_cut_partition
from .runtime import AOTFunction, CompiledFunctionBackward, aot_autograd, aot_eager, interpret

__all__ = ["aot_autograd", "aot_eager", "interpret", "functionalize", "functionalize_with_plan",
           "has_mutation", "Plan", "Joint", "build_joint", "Partition", "min_cut_partition",
           "AOTFunction", "CompiledFunctionBackward"]
