"""np.frombuffer of a bytes object is captured: NumPy's read-only array of it, a constant of
the graph (kiln/ops/from_data.py); NumPy's errors, and writes into it, as NumPy gives them.
A bytearray or memoryview (the result shares its memory) runs as NumPy."""
import numpy as np
import pytest

import kiln


def _decode(b, x):
    a = np.frombuffer(b, dtype=np.uint8)
    return a.astype(np.float64) * x + 1, a


def _fields(b):
    return np.frombuffer(b, dtype=np.int16, count=2, offset=1), np.frombuffer(b, np.float32, offset=4)


def _whole_words(b):
    return np.frombuffer(b, dtype=np.int32) + 1


def _written(b):
    a = np.frombuffer(b, dtype=np.uint8)
    a[0] = 5
    return a


def _outcome(fn, args):
    try:
        result = fn(*args)
    except Exception as e:   # (NumPy's own errors: compared by type and message)
        return type(e), str(e)
    return result if isinstance(result, tuple) else (result,)


@pytest.mark.parametrize("backend", ["eager", "cpp"])
@pytest.mark.parametrize("fn, args", [
    (_decode, (b"abcd", 2.0)), (_decode, (b"", 1.0)), (_fields, (b"abcdefgh",)), (_fields, (b"ab",)),
    (_whole_words, (b"abcdef",)), (_whole_words, (b"abcdefgh",)), (_written, (b"abc",)),
    (_decode, (bytearray(b"xy"), 1.0)), (_decode, (memoryview(b"xyz"), 1.0)),
])
def test_frombuffer_is_numpys(fn, args, backend):
    got, want = _outcome(kiln.compile(fn, backend=backend), args), _outcome(fn, args)
    assert repr(got) == repr(want)
    for g, w in zip(got, want):
        if isinstance(w, np.ndarray):
            assert g.flags.writeable == w.flags.writeable
            assert g.dtype == w.dtype and g.shape == w.shape


def test_frombuffer_of_bytes_is_in_the_graph():
    report = kiln.explain(_decode)(b"abcd", 2.0)
    assert report.graph_break_count == 0 and report.graph_count == 1
    report = kiln.explain(_decode)(bytearray(b"abcd"), 2.0)   # (shares the buffer: NumPy's)
    assert report.graph_break_count == 1
