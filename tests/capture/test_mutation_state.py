"""State outside the frame that changes between calls: what capture reads from a class
(``type(o).scale``, a classmethod's ``cls.scale``, ``getattr(K, "n", 0)``) is guarded, so
the next call sees the class as it is then (the eager backend: no C++ built)."""
import numpy as np
import pytest

import kiln


class Counted:
    scale = 1.0

    @classmethod
    def cls_scale(cls):
        return cls.scale


def through_type(x, obj):
    return x * type(obj).scale


def through_classmethod(x, obj):
    return x * obj.cls_scale()


def missing_then_set(x, obj):
    return x * getattr(type(obj), "extra", 1.0) + getattr(Counted, "other", 0.0)


@pytest.mark.parametrize("fn", [through_type, through_classmethod, missing_then_set],
                         ids=lambda f: f.__name__)
def test_class_attributes_read_through_the_object_follow_the_class(fn):
    obj, x = Counted(), np.ones(2)
    compiled = kiln.compile(fn, backend="eager")
    try:
        for scale in (1.0, 3.0):
            Counted.scale = scale
            if scale == 3.0:
                Counted.extra, Counted.other = 3.0, 5.0
            np.testing.assert_array_equal(compiled(x, obj), fn(x, obj))
    finally:
        Counted.scale = 1.0
        for name in ("extra", "other"):
            if name in Counted.__dict__:
                delattr(Counted, name)


def test_a_count_kept_on_a_class():
    class Calls:
        pass

    def f(x):
        Calls.n = getattr(Calls, "n", 0) + 1   # the store breaks the graph
        return x + 1

    compiled = kiln.compile(f, backend="eager")
    for _ in range(3):
        compiled(np.zeros(2))
    assert Calls.n == 3
