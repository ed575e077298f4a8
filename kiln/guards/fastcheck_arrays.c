/* kiln's cache-hit path in C, part 1 (fastcheck.c lists the parts): the array guard
 * and the overlap check of a call's arrays.
 *
 * 1. array_matches. A cache entry's combined guard for a NumPy array argument,
 *
 *     type(x) is np.ndarray and x.dtype == D and x.shape == (4, 3)
 *
 * costs three attribute reads and a tuple allocation in Python, and from CPython 3.12 on
 * the same bytecode runs about a third slower than on 3.11 (benchmarks/
 * cache_hit_overhead.py). This does the same test in one call that reads the array's
 * own fields:
 *
 *     array_matches(x, np.ndarray, D, (4, 3))        # -> True / False
 *
 * A size of -1 in the shape stands for a dynamic dimension, which must be >= 2 (kiln
 * specializes sizes 0 and 1). Only exact np.ndarray instances are read (the type is
 * checked by identity first, against the type object the caller passes, which must be
 * np.ndarray): their layout is NumPy's ABI-stable PyArrayObject_fields, the start of
 * which is declared below so that no NumPy header or import_array is needed. Any other
 * array type (a cupy.ndarray: kiln/array_kinds.py) has another struct, so every place
 * here that reads the fields first makes sure the type is numpy.ndarray (fetched from
 * NumPy when the module is created) and refuses otherwise: such arrays are guarded in
 * Python.
 */
#include "fastcheck.h"

/* 1 when the exact ndarray x has this shape spec and dtype, 0 when not, -1 on error. */
static int
array_fields_match(PyObject *x, PyObject *dtype, PyObject *shape)
{
    kiln_array_head *a = (kiln_array_head *)x;
    Py_ssize_t nd = PyTuple_GET_SIZE(shape);
    if (a->nd != nd)
        return 0;
    for (Py_ssize_t i = 0; i < nd; i++) {
        Py_ssize_t want = PyLong_AsSsize_t(PyTuple_GET_ITEM(shape, i));
        if (want == -1 && PyErr_Occurred())
            return -1;
        Py_ssize_t have = a->dimensions[i];
        if (want < 0 ? have < 2 : have != want)
            return 0;
    }
    if (a->descr != dtype)   /* dtypes are mostly singletons; else compare by value */
        return PyObject_RichCompareBool(a->descr, dtype, Py_EQ);
    return 1;
}

PyObject *
kiln_array_matches(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 4 || !PyTuple_CheckExact(args[3])) {
        PyErr_SetString(PyExc_TypeError, "array_matches(x, ndarray_type, dtype, shape_tuple)");
        return NULL;
    }
    if ((PyObject *)Py_TYPE(args[0]) != args[1])
        Py_RETURN_FALSE;
    if (args[1] != kiln_ndarray_type) {
        PyErr_SetString(PyExc_TypeError, "array_matches reads numpy.ndarray only (kiln bug: "
                        "another array type is guarded in Python)");
        return NULL;
    }
    int ok = array_fields_match(args[0], args[2], args[3]);
    if (ok < 0)
        return NULL;
    return PyBool_FromLong(ok);
}

/* dtype.itemsize, or -1 with an error. The last dtype asked about is kept (with a
 * reference, so its address names it) with its answer: a call's arrays mostly share one
 * dtype, and the attribute costs a lookup through the dtype's type each time. */
static PyObject *itemsize_of = NULL;
static Py_ssize_t itemsize_was = 0;

static Py_ssize_t
descr_itemsize(PyObject *descr)
{
    static PyObject *name = NULL;
    if (descr == itemsize_of)
        return itemsize_was;
    if (name == NULL && (name = PyUnicode_InternFromString("itemsize")) == NULL)
        return -1;
    PyObject *size = PyObject_GetAttr(descr, name);
    if (size == NULL)
        return -1;
    Py_ssize_t n = PyLong_AsSsize_t(size);
    Py_DECREF(size);
    if (n < 0) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "kiln: a negative itemsize");
        return -1;
    }
    Py_INCREF(descr);
    Py_XSETREF(itemsize_of, descr);
    itemsize_was = n;
    return n;
}

/* The bytes x spans, [*lo, *hi): 1, 0 for an empty array (it shares nothing), -1 on error. */
int
kiln_array_extent(PyObject *x, char **lo, char **hi)
{
    kiln_array_head *a = (kiln_array_head *)x;
    *lo = *hi = a->data;
    for (int d = 0; d < a->nd; d++) {
        if (a->dimensions[d] == 0)
            return 0;
        Py_ssize_t off = (a->dimensions[d] - 1) * a->strides[d];
        if (off < 0)
            *lo += off;
        else
            *hi += off;
    }
    Py_ssize_t n = descr_itemsize(a->descr);
    if (n < 0)
        return -1;
    *hi += n;
    return 1;
}

/* Is x writeable, with elements that may share memory with one another (an as_strided
 * window, a zero stride)? kiln/ops/layout.py overlaps_itself's test, on byte strides:
 * axes by increasing stride, each stride past the extent of the ones before it. A
 * contiguous array (NumPy's flags: C 0x1, F 0x2) never does; nor a read-only one, which
 * a graph cannot write. 1 or 0. */
int
kiln_overlaps_itself(PyObject *x)
{
    kiln_array_head *a = (kiln_array_head *)x;
    if (!(a->flags & KILN_ARRAY_WRITEABLE) || (a->flags & 0x3) || a->nd > 64)
        return 0;
    Py_ssize_t st[64], n[64];
    int m = 0;
    for (int d = 0; d < a->nd; d++) {
        if (a->dimensions[d] == 0)
            return 0;
        if (a->dimensions[d] == 1)
            continue;
        Py_ssize_t s = a->strides[d] < 0 ? -a->strides[d] : a->strides[d];
        int k = m++;
        for (; k > 0 && st[k - 1] > s; k--) {   /* insertion: a few axes */
            st[k] = st[k - 1];
            n[k] = n[k - 1];
        }
        st[k] = s;
        n[k] = a->dimensions[d];
    }
    Py_ssize_t extent = descr_itemsize(a->descr);
    if (extent < 0) {
        PyErr_Clear();
        return 1;   /* (unknown: the caller takes the path that checks nothing away) */
    }
    for (int k = 0; k < m; k++) {
        if (st[k] < extent)
            return 1;
        extent += st[k] * (n[k] - 1);
    }
    return 0;
}

/* any_overlap(arrays): np.may_share_memory (its bounds check) over every pair of a tuple of
 * distinct np.ndarrays, True at the first pair whose bytes overlap, or at an array that
 * overlaps itself (overlaps_itself); None when an item is not an np.ndarray (the caller
 * asks NumPy). aot checks a call's inputs with it on every call. */
PyObject *
kiln_any_overlap(PyObject *module, PyObject *arrays)
{
    (void)module;
    if (!PyTuple_CheckExact(arrays)) {
        PyErr_SetString(PyExc_TypeError, "any_overlap(tuple of arrays)");
        return NULL;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(arrays), m = 0;
    if (n > KILN_OVERLAP_MAX)
        Py_RETURN_NONE;
    char *lo[KILN_OVERLAP_MAX], *hi[KILN_OVERLAP_MAX];
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *x = PyTuple_GET_ITEM(arrays, i);
        if (!PyObject_TypeCheck(x, (PyTypeObject *)kiln_ndarray_type))
            Py_RETURN_NONE;
        if (kiln_overlaps_itself(x))
            Py_RETURN_TRUE;
        int ok = kiln_array_extent(x, &lo[m], &hi[m]);
        if (ok < 0)
            return NULL;
        if (ok == 0)
            continue;
        for (Py_ssize_t j = 0; j < m; j++)
            if (lo[m] < hi[j] && lo[j] < hi[m])
                Py_RETURN_TRUE;
        m++;
    }
    Py_RETURN_FALSE;
}
