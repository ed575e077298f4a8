"""Code objects compare equal without their file name (CPython ignores co_filename): two
identical functions at the same line of two files must still be two functions to kiln."""
import importlib.util
import warnings

import numpy as np

import kiln

SOURCE = "import numpy as np\n\n\ndef f(a, b):\n    return divmod(a, b)\n"


def _module(path, name):
    path.write_text(SOURCE)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_equal_functions_of_two_files_warn_at_their_own_file(tmp_path):
    m1 = _module(tmp_path / "code_identity_one.py", "code_identity_one")
    m2 = _module(tmp_path / "code_identity_two.py", "code_identity_two")
    assert m1.f.__code__ == m2.f.__code__   # (what makes it a trap)
    a, b = np.arange(5), np.arange(5) % 2
    for module in (m1, m2):
        compiled = kiln.compile(module.f, backend="eager")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            q, r = compiled(a, b)
        with np.errstate(divide="ignore"):
            np.testing.assert_array_equal(q, np.divmod(a, b)[0])
        assert [(w.filename, w.lineno) for w in caught] == [(module.__file__, 5)], \
            [(w.filename, w.lineno, str(w.message)) for w in caught]
