"""The suite's costliest files go first (tests/conftest.py HEAVY_FIRST): each name there is
a test file that exists, so a renamed or removed file does not fall silently to the end."""
import os

from conftest import HEAVY_FIRST


def test_the_files_that_go_first_exist():
    here = os.path.dirname(__file__)
    missing = [name for name in HEAVY_FIRST if not os.path.isfile(os.path.join(here, name))]
    assert not missing and len(set(HEAVY_FIRST)) == len(HEAVY_FIRST), missing
