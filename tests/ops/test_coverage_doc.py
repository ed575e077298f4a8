"""docs/coverage.md is generated from the inventory and must be current."""
from pathlib import Path

import kiln.ops  # noqa: F401
from kiln.ops import REGISTRY
from kiln.ops.coverage import composites, markdown

PAGE = Path(__file__).resolve().parents[2] / "docs" / "coverage.md"


def test_coverage_page_is_current():
    assert PAGE.read_text() == markdown(), (
        "docs/coverage.md is stale: run `python -m kiln.ops.coverage > docs/coverage.md`")


def test_coverage_page_lists_every_op_and_composite():
    text = markdown()
    assert all(f"| `{name}` |" in text for name in REGISTRY)
    assert all(f"| `{s.text}` |" in text for s in composites())
