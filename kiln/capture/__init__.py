"""Capture: CPython 3.11-3.13 bytecode -> graphs of inventory ops, guards, graph breaks.

``bytecode_facts`` holds every fact about the bytecode; ``translator`` has one handler per
opcode; ``variables/`` one tracker class per kind of value; ``sources`` names where values
came from; ``convert.capture`` runs it all for one call.
"""
from .breaks import GraphBreak
from .convert import CaptureResult, capture
from .output import DynamicSpec

__all__ = ["GraphBreak", "CaptureResult", "capture", "DynamicSpec"]
