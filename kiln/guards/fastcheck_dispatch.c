/* kiln's cache-hit path in C, part 2 (fastcheck.c lists the parts): the dispatcher.
 *
 *
 * 2. Dispatcher, the base of kiln's compiled-function class when this module builds.
 * Calling one runs, without a Python frame of its own,
 *
 *     if self._as_python and argument types match and its arrays are small:
 *         return self._kiln_fn(*args)          # the cost model's verdict: plain Python
 *     for check in self._kiln_checks:          # one generated function per cache entry
 *         result = check(*args, **kwargs)
 *         if result is MISS: continue
 *         if result is RUN_EAGER: return self._kiln_fn(*args, **kwargs)
 *         return result
 *     return self._kiln_slow(*args, **kwargs)  # no entry took it: Python compiles
 *
 * (vectorcall: from 3.12 a subclass inherits it, on 3.11 enable_vectorcall turns it on
 * for kiln's subclass). Unless _kiln_checks is a tuple, every call goes to _kiln_slow.
 * ``_as_python`` is ``(argument types, positions of array arguments, size limit, keyword
 * names)`` (the types of the positional, then the keyword arguments) once
 * the cost model ran a call of those types as Python: running the function as Python is
 * right whatever the guards say, so such calls check no guard at all, only that the
 * arguments are of the types and sizes the verdict was about (api.py's __call__ does the
 * same where this module does not build).
 */
#include "fastcheck.h"

typedef struct {
    PyObject_HEAD
    PyObject *checks;      /* tuple of entry functions, or NULL: always _kiln_slow */
    PyObject *slow;        /* the Python dispatcher (misses, bound methods) */
    PyObject *fn;          /* the user's function (RUN_EAGER entries) */
    PyObject *miss;        /* the MISS and RUN_EAGER markers */
    PyObject *run_eager;
    PyObject *as_python;   /* (types, array positions, size limit), or NULL / None */
    PyObject *bound;       /* a bound method's object (kiln.compile(obj.method)), or NULL / None */
    vectorcallfunc vectorcall;
} Dispatcher;

/* Does this call take the cost model's "run it as Python" verdict (see _as_python)? The
 * verdict's types cover the positional arguments, then the keyword arguments' values in
 * the order of its keyword names, which must be this call's. */
static int
runs_as_python(PyObject *verdict, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    if (verdict == NULL || !PyTuple_CheckExact(verdict) || PyTuple_GET_SIZE(verdict) != 4)
        return 0;
    PyObject *types = PyTuple_GET_ITEM(verdict, 0), *arrays = PyTuple_GET_ITEM(verdict, 1);
    PyObject *names = PyTuple_GET_ITEM(verdict, 3);
    Py_ssize_t nkw = kwnames == NULL ? 0 : PyTuple_GET_SIZE(kwnames);
    if (!PyTuple_CheckExact(names) || PyTuple_GET_SIZE(names) != nkw)
        return 0;
    if (nkw && names != kwnames) {
        for (Py_ssize_t i = 0; i < nkw; i++) {
            PyObject *a = PyTuple_GET_ITEM(names, i), *b = PyTuple_GET_ITEM(kwnames, i);
            if (a != b && (!PyUnicode_CheckExact(a) || !PyUnicode_CheckExact(b)
                           || PyUnicode_Compare(a, b) != 0))
                return 0;
        }
    }
    Py_ssize_t n = nargs + nkw;
    if (!PyTuple_CheckExact(types) || !PyTuple_CheckExact(arrays) || PyTuple_GET_SIZE(types) != n)
        return 0;
    for (Py_ssize_t i = 0; i < n; i++)
        if ((PyObject *)Py_TYPE(args[i]) != PyTuple_GET_ITEM(types, i))
            return 0;
    Py_ssize_t limit = PyLong_AsSsize_t(PyTuple_GET_ITEM(verdict, 2));
    if (limit == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        return 0;
    }
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(arrays); k++) {
        Py_ssize_t i = PyLong_AsSsize_t(PyTuple_GET_ITEM(arrays, k));
        if (i < 0 || i >= n) {
            PyErr_Clear();
            return 0;
        }
        /* an ndarray or a subclass, which shares the layout; anything else is not read */
        if (!PyObject_TypeCheck(args[i], (PyTypeObject *)kiln_ndarray_type))
            return 0;
        if (!kiln_size_at_most((kiln_array_head *)args[i], limit))
            return 0;
    }
    return 1;
}

static inline __attribute__((always_inline)) PyObject *
dispatcher_entries(Dispatcher *self, PyObject *const *args, size_t nargsf, PyObject *kwnames,
                   PyObject *const *given);
static PyObject *dispatcher_bound_call(Dispatcher *self, PyObject *const *args, size_t nargsf,
                                       PyObject *kwnames);

/* A compiled bound method: its object comes first in what the entries, the verdict and
 * the function see (the Python dispatcher prepends it the same way); a miss goes to
 * _kiln_slow with the arguments as given. */
#define KILN_BOUND_STACK 16
static PyObject *
dispatcher_vectorcall(PyObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Dispatcher *self = (Dispatcher *)op;
    if (self->bound == NULL || self->bound == Py_None)
        return dispatcher_entries(self, args, nargsf, kwnames, args);
    return dispatcher_bound_call(self, args, nargsf, kwnames);
}

static PyObject *
dispatcher_bound_call(Dispatcher *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    Py_ssize_t total = nargs + (kwnames == NULL ? 0 : PyTuple_GET_SIZE(kwnames));
    PyObject *stack[KILN_BOUND_STACK], **with = stack;
    if (total + 1 > KILN_BOUND_STACK && (with = PyMem_Malloc((total + 1) * sizeof(PyObject *))) == NULL)
        return PyErr_NoMemory();
    with[0] = self->bound;
    memcpy(with + 1, args, total * sizeof(PyObject *));
    PyObject *bound = self->bound;   /* (the entries may rebind the field; keep it alive) */
    Py_INCREF(bound);
    PyObject *result = dispatcher_entries(self, with, (size_t)(nargs + 1), kwnames, args);
    Py_DECREF(bound);
    if (with != stack)
        PyMem_Free(with);
    return result;
}

/* Try the verdict and the entries with ``args`` (``given``: the call's own arguments,
 * without a bound method's object, for _kiln_slow). */
static inline __attribute__((always_inline)) PyObject *
dispatcher_entries(Dispatcher *self, PyObject *const *args, size_t nargsf, PyObject *kwnames,
                   PyObject *const *given)
{
    if (self->as_python != NULL && self->fn != NULL
            && runs_as_python(self->as_python, args, PyVectorcall_NARGS(nargsf), kwnames))
        return kiln_vectorcall(self->fn, args, nargsf, kwnames);
    PyObject *checks = self->checks;
    if (checks != NULL && PyTuple_CheckExact(checks) && self->miss != NULL && self->run_eager != NULL) {
        Py_INCREF(checks);          /* a compile in a callee may replace the tuple */
        Py_ssize_t n = PyTuple_GET_SIZE(checks);
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *result = kiln_vectorcall(PyTuple_GET_ITEM(checks, i), args, nargsf, kwnames);
            if (result == NULL || (result != self->miss && result != self->run_eager)) {
                Py_DECREF(checks);
                return result;
            }
            if (result == self->run_eager) {
                Py_DECREF(result);
                Py_DECREF(checks);
                return kiln_vectorcall(self->fn, args, nargsf, kwnames);
            }
            Py_DECREF(result);
        }
        Py_DECREF(checks);
    }
    if (self->slow == NULL) {
        PyErr_SetString(PyExc_TypeError, "kiln dispatcher called before it was set up");
        return NULL;
    }
    if (given == args)
        return PyObject_Vectorcall(self->slow, args, nargsf, kwnames);
    return PyObject_Vectorcall(self->slow, given, PyVectorcall_NARGS(nargsf) - 1, kwnames);
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

/* Compiled functions as class attributes (``@kiln.compile`` on a method): ``obj.f`` is
 * ``functools.partial(f, obj)``, ``Cls.f`` is f itself (CompiledFunction.__get__, here
 * without its Python frame). The subclass also gets Py_TPFLAGS_METHOD_DESCRIPTOR
 * (enable_vectorcall): ``obj.f(x)`` then calls ``f(obj, x)`` with no partial made, which
 * is what the partial does. */
PyObject *kiln_partial_type = NULL;

static PyObject *
dispatcher_descr_get(PyObject *self, PyObject *obj, PyObject *type)
{
    (void)type;
    if (obj == NULL || obj == Py_None) {
        Py_INCREF(self);
        return self;
    }
    PyObject *argv[2] = {self, obj};
    return PyObject_Vectorcall(kiln_partial_type, argv, 2, NULL);
}

#define DISPATCHER_FIELDS(X) X(checks) X(slow) X(fn) X(miss) X(run_eager) X(as_python) X(bound)
KILN_GC_FUNCTIONS(dispatcher, Dispatcher, DISPATCHER_FIELDS, )

static PyMemberDef dispatcher_members[] = {
    {"_kiln_checks", T_OBJECT, offsetof(Dispatcher, checks), 0, "entry functions, tried in order"},
    {"_kiln_slow", T_OBJECT, offsetof(Dispatcher, slow), 0, "called when no entry takes the call"},
    {"_kiln_fn", T_OBJECT, offsetof(Dispatcher, fn), 0, "the function RUN_EAGER entries run"},
    {"_kiln_miss", T_OBJECT, offsetof(Dispatcher, miss), 0, "the MISS marker"},
    {"_kiln_run_eager", T_OBJECT, offsetof(Dispatcher, run_eager), 0, "the RUN_EAGER marker"},
    {"_as_python", T_OBJECT, offsetof(Dispatcher, as_python), 0,
     "(argument types, array positions, size limit, keyword names): calls that run as Python"},
    {"_kiln_bound", T_OBJECT, offsetof(Dispatcher, bound), 0,
     "a bound method's object, passed first to the entries and the function"},
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(Dispatcher, vectorcall), READONLY, NULL},
    {NULL, 0, 0, 0, NULL},
};

PyTypeObject kiln_DispatcherType = {
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
    .tp_descr_get = dispatcher_descr_get,
    .tp_vectorcall_offset = offsetof(Dispatcher, vectorcall),
    .tp_members = dispatcher_members,
};

/* enable_vectorcall(cls): kiln's subclass of Dispatcher is called through vectorcall, as
 * from 3.12 on, where 3.11 does not let a heap type inherit it (a call then built an
 * argument tuple for tp_call). Only for a subclass whose tp_call is still the
 * dispatcher's, so both ways of calling it run the same code. */
PyObject *
kiln_enable_vectorcall(PyObject *module, PyObject *cls)
{
    (void)module;
    if (!PyType_Check(cls) || !PyType_IsSubtype((PyTypeObject *)cls, &kiln_DispatcherType)) {
        PyErr_SetString(PyExc_TypeError, "enable_vectorcall(a subclass of Dispatcher)");
        return NULL;
    }
    PyTypeObject *tp = (PyTypeObject *)cls;
    if (tp->tp_descr_get == dispatcher_descr_get && tp->tp_call == dispatcher_call) {
        tp->tp_flags |= Py_TPFLAGS_METHOD_DESCRIPTOR;   /* (see dispatcher_descr_get) */
        PyType_Modified(tp);
    }
    if (tp->tp_call != dispatcher_call)
        Py_RETURN_FALSE;
    tp->tp_vectorcall_offset = offsetof(Dispatcher, vectorcall);
    tp->tp_flags |= Py_TPFLAGS_HAVE_VECTORCALL;
    PyType_Modified(tp);
    Py_RETURN_TRUE;
}
