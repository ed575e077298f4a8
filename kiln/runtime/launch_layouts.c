/* kiln's kernel launcher in C (launch.c lists the parts): the wrapper's layout check. */
#include "launch.h"

/* Layouts(ndarray, (shape, strides), ...)(x, y, ...) -> True when every argument has the
 * shape and strides (in bytes) the kernels were built for: the wrapper's
 *
 *     if x.shape != (4, 3) or x.strides != (24, 8) or y.shape != ...: respecialize
 *
 * in one call, the specs read once. An argument that is not an ndarray is compared
 * through its .shape and .strides attributes (as the Python check did). */
typedef struct {
    PyObject_HEAD
    Py_ssize_t n;            /* arguments */
    Py_ssize_t *nd;          /* per argument: its ndim, then offsets into dims */
    Py_ssize_t *offset;
    Py_ssize_t *dims;        /* shape then strides of each argument */
    PyObject *specs, *ndarray;
    vectorcallfunc vectorcall;
} Layouts;

static int
generic_layout_matches(PyObject *v, PyObject *spec)
{
    static const char *names[2] = {"shape", "strides"};
    for (int k = 0; k < 2; k++) {
        PyObject *have = PyObject_GetAttrString(v, names[k]);
        if (have == NULL)
            return -1;
        int eq = PyObject_RichCompareBool(have, PyTuple_GET_ITEM(spec, k), Py_EQ);
        Py_DECREF(have);
        if (eq <= 0)
            return eq;
    }
    return 1;
}

static PyObject *
layouts_vectorcall(PyObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Layouts *self = (Layouts *)op;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (nargs != self->n || (kwnames != NULL && PyTuple_GET_SIZE(kwnames) != 0)) {
        PyErr_SetString(PyExc_TypeError, "Layouts: one argument per spec");
        return NULL;
    }
    for (Py_ssize_t k = 0; k < nargs; k++) {
        PyObject *v = args[k];
        Py_ssize_t nd = self->nd[k];
        const Py_ssize_t *want = self->dims + self->offset[k];
        if (!PyObject_TypeCheck(v, (PyTypeObject *)self->ndarray)) {
            int ok = generic_layout_matches(v, PyTuple_GET_ITEM(self->specs, k));
            if (ok < 0)
                return NULL;
            if (!ok)
                Py_RETURN_FALSE;
            continue;
        }
        kiln_array_head *a = (kiln_array_head *)v;
        if (a->nd != nd)
            Py_RETURN_FALSE;
        for (Py_ssize_t d = 0; d < nd; d++)
            if (a->dimensions[d] != want[d] || a->strides[d] != want[nd + d])
                Py_RETURN_FALSE;
    }
    Py_RETURN_TRUE;
}

static PyObject *
layouts_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    if (kiln_no_keywords(kwargs, "Layouts") < 0)
        return NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(args) - 1;
    if (n < 0 || !PyType_Check(PyTuple_GET_ITEM(args, 0))) {
        PyErr_SetString(PyExc_TypeError, "Layouts(ndarray, (shape, strides), ...)");
        return NULL;
    }
    PyObject *specs = PyTuple_GetSlice(args, 1, n + 1);
    if (specs == NULL)
        return NULL;
    Py_ssize_t total = 0;
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *spec = PyTuple_GET_ITEM(specs, k);
        if (!PyTuple_Check(spec) || PyTuple_GET_SIZE(spec) != 2 || !PyTuple_Check(PyTuple_GET_ITEM(spec, 0))
                || !PyTuple_Check(PyTuple_GET_ITEM(spec, 1))
                || PyTuple_GET_SIZE(PyTuple_GET_ITEM(spec, 0)) != PyTuple_GET_SIZE(PyTuple_GET_ITEM(spec, 1))) {
            Py_DECREF(specs);
            PyErr_SetString(PyExc_TypeError, "Layouts: each spec is (shape, strides) of one length");
            return NULL;
        }
        total += 2 * PyTuple_GET_SIZE(PyTuple_GET_ITEM(spec, 0));
    }
    Layouts *self = (Layouts *)type->tp_alloc(type, 0);
    if (self == NULL) {
        Py_DECREF(specs);
        return NULL;
    }
    self->specs = specs;
    Py_INCREF(PyTuple_GET_ITEM(args, 0));
    self->ndarray = PyTuple_GET_ITEM(args, 0);
    self->n = n;
    self->vectorcall = layouts_vectorcall;
    self->nd = PyMem_Calloc(n + 1, sizeof(Py_ssize_t));
    self->offset = PyMem_Calloc(n + 1, sizeof(Py_ssize_t));
    self->dims = PyMem_Calloc(total + 1, sizeof(Py_ssize_t));
    if (self->nd == NULL || self->offset == NULL || self->dims == NULL) {
        Py_DECREF(self);
        return PyErr_NoMemory();
    }
    Py_ssize_t at = 0;
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *spec = PyTuple_GET_ITEM(specs, k);
        Py_ssize_t nd = PyTuple_GET_SIZE(PyTuple_GET_ITEM(spec, 0));
        self->nd[k] = nd;
        self->offset[k] = at;
        for (int part = 0; part < 2; part++, at += nd)
            if (kiln_ssize_items(PyTuple_GET_ITEM(spec, part), self->dims + at) < 0) {
                Py_DECREF(self);
                return NULL;
            }
    }
    return (PyObject *)self;
}

#define LAYOUTS_FIELDS(X) X(specs) X(ndarray)
KILN_GC_FUNCTIONS(layouts, Layouts, LAYOUTS_FIELDS,
                  PyMem_Free(self->nd); PyMem_Free(self->offset); PyMem_Free(self->dims))

PyTypeObject kiln_LayoutsType = KILN_VECTORCALL_TYPE(
    layouts, Layouts, "The input layouts a wrapper's kernels were built for (see launch.c).");
