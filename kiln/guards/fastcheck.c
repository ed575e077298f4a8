/* kiln's cache-hit path in C (built by fastcheck.py; a plain CPython extension):
 * the array guard and the dispatcher that tries a compiled function's cache entries.
 *
 * The parts, one responsibility each, share fastcheck.h (cext.h plus what crosses
 * files) and build into one module (kiln/_native EXTENSIONS lists them; the build hashes
 * them all):
 *
 *   fastcheck_arrays.c    1. the array guard (array_matches) and the overlap check of a
 *                         call's arrays (any_overlap)
 *   fastcheck_dispatch.c  2. the Dispatcher
 *   fastcheck_entry.c     3. entries with no Python frame: guard specs decoded once,
 *                         SimpleEntry
 *   fastcheck_graph.c     4. a compiled graph's call from C: a writing graph's short path
 *                         (PlainRun) and a Python entry's graph call (GraphCall)
 *   fastcheck.c           this file: NumPy's and functools' types, the module
 */
#include "fastcheck.h"

/* numpy.ndarray, the one type whose struct array_fields_match may read. */
PyObject *kiln_ndarray_type = NULL;
/* numpy.number and numpy.bool_: NumPy scalars that hold their value (no memory of an
 * array's), which a writing graph's short path takes as it takes Python numbers. */
PyObject *kiln_number_type = NULL, *kiln_bool_type = NULL;

static PyMethodDef methods[] = {
    {"array_matches", (PyCFunction)(void (*)(void))kiln_array_matches, METH_FASTCALL,
     "array_matches(x, ndarray_type, dtype, shape): kiln's combined array guard."},
    {"any_overlap", kiln_any_overlap, METH_O,
     "any_overlap(arrays): do two of these distinct np.ndarrays' bytes overlap? (None: ask NumPy)"},
    {"enable_vectorcall", kiln_enable_vectorcall, METH_O,
     "enable_vectorcall(cls): call kiln's Dispatcher subclass through vectorcall (3.11)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, KILN_MODULE_NAME_STR, NULL, -1, methods,
};

PyMODINIT_FUNC
KILN_INIT(KILN_MODULE_NAME)(void)
{
    PyTypeObject *types[] = {&kiln_DispatcherType, &kiln_SimpleEntryType, &kiln_GraphCallType, &kiln_PlainRunType, NULL};
    if (kiln_partial_type == NULL) {
        PyObject *functools = PyImport_ImportModule("functools");
        if (functools == NULL)
            return NULL;
        kiln_partial_type = PyObject_GetAttrString(functools, "partial");   /* kept for the process */
        Py_DECREF(functools);
        if (kiln_partial_type == NULL)
            return NULL;
    }
    if (kiln_ndarray_type == NULL) {
        PyObject *numpy = PyImport_ImportModule("numpy");
        if (numpy == NULL)
            return NULL;
        kiln_ndarray_type = PyObject_GetAttrString(numpy, "ndarray");   /* kept for the process */
        Py_DECREF(numpy);
        if (kiln_ndarray_type == NULL)
            return NULL;
        if (!PyType_Check(kiln_ndarray_type)) {
            PyErr_SetString(PyExc_TypeError, "numpy.ndarray is not a type");
            return NULL;
        }
    }
    if (kiln_number_type == NULL) {
        PyObject *numpy = PyImport_ImportModule("numpy");
        if (numpy == NULL)
            return NULL;
        kiln_number_type = PyObject_GetAttrString(numpy, "number");   /* kept for the process */
        kiln_bool_type = kiln_number_type == NULL ? NULL : PyObject_GetAttrString(numpy, "bool_");
        Py_DECREF(numpy);
        if (kiln_bool_type == NULL)
            return NULL;
        if (!PyType_Check(kiln_number_type) || !PyType_Check(kiln_bool_type)) {
            PyErr_SetString(PyExc_TypeError, "numpy.number or numpy.bool_ is not a type");
            return NULL;
        }
    }
    return kiln_module_create(&module_def, types);
}