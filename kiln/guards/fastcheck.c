/* kiln's cache-hit path in C (built by fastcheck.py; a plain CPython extension):
 * the array guard and the dispatcher that tries a compiled function's cache entries.
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
 * which is declared below so that no NumPy header or import_array is needed.
 *
 * 2. Dispatcher, the base of kiln's compiled-function class when this module builds.
 * Calling one runs, without a Python frame of its own,
 *
 *     for check in self._kiln_checks:          # one generated function per cache entry
 *         result = check(*args, **kwargs)
 *         if result is MISS: continue
 *         if result is RUN_EAGER: return self._kiln_fn(*args, **kwargs)
 *         return result
 *     return self._kiln_slow(*args, **kwargs)  # no entry took it: Python compiles
 *
 * (vectorcall where the interpreter lets a subclass use it, i.e. from 3.12; tp_call on
 * 3.11). Unless _kiln_checks is a tuple, every call goes to _kiln_slow.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

typedef struct {            /* the first fields of NumPy's PyArrayObject_fields */
    PyObject_HEAD
    char *data;
    int nd;
    Py_ssize_t *dimensions;  /* npy_intp is Py_ssize_t on every platform NumPy supports */
    Py_ssize_t *strides;
    PyObject *base;
    PyObject *descr;
} kiln_array_head;

static PyObject *
array_matches(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 4 || !PyTuple_CheckExact(args[3])) {
        PyErr_SetString(PyExc_TypeError, "array_matches(x, ndarray_type, dtype, shape_tuple)");
        return NULL;
    }
    PyObject *x = args[0];
    if ((PyObject *)Py_TYPE(x) != args[1])
        Py_RETURN_FALSE;
    kiln_array_head *a = (kiln_array_head *)x;
    PyObject *shape = args[3];
    Py_ssize_t nd = PyTuple_GET_SIZE(shape);
    if (a->nd != nd)
        Py_RETURN_FALSE;
    for (Py_ssize_t i = 0; i < nd; i++) {
        Py_ssize_t want = PyLong_AsSsize_t(PyTuple_GET_ITEM(shape, i));
        if (want == -1 && PyErr_Occurred())
            return NULL;
        Py_ssize_t have = a->dimensions[i];
        if (want < 0 ? have < 2 : have != want)
            Py_RETURN_FALSE;
    }
    if (a->descr != args[2]) {   /* dtypes are mostly singletons; else compare by value */
        int eq = PyObject_RichCompareBool(a->descr, args[2], Py_EQ);
        if (eq < 0)
            return NULL;
        if (!eq)
            Py_RETURN_FALSE;
    }
    Py_RETURN_TRUE;
}


/* ---- the dispatcher ------------------------------------------------------------------ */

typedef struct {
    PyObject_HEAD
    PyObject *checks;      /* tuple of entry functions, or NULL: always _kiln_slow */
    PyObject *slow;        /* the Python dispatcher (misses, bound methods) */
    PyObject *fn;          /* the user's function (RUN_EAGER entries) */
    PyObject *miss;        /* the MISS and RUN_EAGER markers */
    PyObject *run_eager;
    vectorcallfunc vectorcall;
} Dispatcher;

static PyObject *
dispatcher_vectorcall(PyObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Dispatcher *self = (Dispatcher *)op;
    PyObject *checks = self->checks;
    if (checks != NULL && PyTuple_CheckExact(checks) && self->miss != NULL && self->run_eager != NULL) {
        Py_INCREF(checks);          /* a compile in a callee may replace the tuple */
        Py_ssize_t n = PyTuple_GET_SIZE(checks);
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *result = PyObject_Vectorcall(PyTuple_GET_ITEM(checks, i), args, nargsf, kwnames);
            if (result == NULL || (result != self->miss && result != self->run_eager)) {
                Py_DECREF(checks);
                return result;
            }
            if (result == self->run_eager) {
                Py_DECREF(result);
                Py_DECREF(checks);
                return PyObject_Vectorcall(self->fn, args, nargsf, kwnames);
            }
            Py_DECREF(result);
        }
        Py_DECREF(checks);
    }
    if (self->slow == NULL) {
        PyErr_SetString(PyExc_TypeError, "kiln dispatcher called before it was set up");
        return NULL;
    }
    return PyObject_Vectorcall(self->slow, args, nargsf, kwnames);
}

static PyObject *
dispatcher_call(PyObject *op, PyObject *args, PyObject *kwargs)
{
    if (kwargs == NULL || PyDict_GET_SIZE(kwargs) == 0)
        return dispatcher_vectorcall(op, &PyTuple_GET_ITEM(args, 0), PyTuple_GET_SIZE(args), NULL);
    Dispatcher *self = (Dispatcher *)op;   /* keywords on 3.11: the Python dispatcher */
    if (self->slow == NULL) {
        PyErr_SetString(PyExc_TypeError, "kiln dispatcher called before it was set up");
        return NULL;
    }
    return PyObject_Call(self->slow, args, kwargs);
}

static PyObject *
dispatcher_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    (void)args; (void)kwargs;
    Dispatcher *self = (Dispatcher *)type->tp_alloc(type, 0);
    if (self != NULL)
        self->vectorcall = dispatcher_vectorcall;
    return (PyObject *)self;
}

static int
dispatcher_traverse(PyObject *op, visitproc visit, void *arg)
{
    Dispatcher *self = (Dispatcher *)op;
    Py_VISIT(self->checks);
    Py_VISIT(self->slow);
    Py_VISIT(self->fn);
    Py_VISIT(self->miss);
    Py_VISIT(self->run_eager);
    return 0;
}

static int
dispatcher_clear(PyObject *op)
{
    Dispatcher *self = (Dispatcher *)op;
    Py_CLEAR(self->checks);
    Py_CLEAR(self->slow);
    Py_CLEAR(self->fn);
    Py_CLEAR(self->miss);
    Py_CLEAR(self->run_eager);
    return 0;
}

static void
dispatcher_dealloc(PyObject *op)
{
    PyObject_GC_UnTrack(op);
    dispatcher_clear(op);
    Py_TYPE(op)->tp_free(op);
}

static PyMemberDef dispatcher_members[] = {
    {"_kiln_checks", T_OBJECT, offsetof(Dispatcher, checks), 0, "entry functions, tried in order"},
    {"_kiln_slow", T_OBJECT, offsetof(Dispatcher, slow), 0, "called when no entry takes the call"},
    {"_kiln_fn", T_OBJECT, offsetof(Dispatcher, fn), 0, "the function RUN_EAGER entries run"},
    {"_kiln_miss", T_OBJECT, offsetof(Dispatcher, miss), 0, "the MISS marker"},
    {"_kiln_run_eager", T_OBJECT, offsetof(Dispatcher, run_eager), 0, "the RUN_EAGER marker"},
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(Dispatcher, vectorcall), READONLY, NULL},
    {NULL, 0, 0, 0, NULL},
};

static PyTypeObject DispatcherType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "kiln.Dispatcher",
    .tp_basicsize = sizeof(Dispatcher),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "The cache-hit dispatcher of a kiln compiled function (see fastcheck.c).",
    .tp_new = dispatcher_new,
    .tp_dealloc = dispatcher_dealloc,
    .tp_traverse = dispatcher_traverse,
    .tp_clear = dispatcher_clear,
    .tp_call = dispatcher_call,
    .tp_vectorcall_offset = offsetof(Dispatcher, vectorcall),
    .tp_members = dispatcher_members,
};

static PyMethodDef methods[] = {
    {"array_matches", (PyCFunction)(void (*)(void))array_matches, METH_FASTCALL,
     "array_matches(x, ndarray_type, dtype, shape): kiln's combined array guard."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, KILN_MODULE_NAME_STR, NULL, -1, methods,
};

#define KILN_CAT(a, b) a##b
#define KILN_INIT(name) KILN_CAT(PyInit_, name)

PyMODINIT_FUNC
KILN_INIT(KILN_MODULE_NAME)(void)
{
    if (PyType_Ready(&DispatcherType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module_def);
    if (m == NULL)
        return NULL;
    Py_INCREF(&DispatcherType);
    if (PyModule_AddObject(m, "Dispatcher", (PyObject *)&DispatcherType) < 0) {
        Py_DECREF(&DispatcherType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
