/* What kiln's shipped CPython extensions share (kiln/guards/fastcheck.c,
 * kiln/runtime/launch.c and kiln/runtime/fast_call.c; the frame hook, a cffi module,
 * its array fields and size test): the NumPy array fields they read,
 * argument checks, and the boilerplate of a garbage-collected type called through
 * vectorcall and of the module.
 *
 * setup.py (at install) and cext.shipped_extension (at first use, when the installed
 * module is absent or stale) build each extension with this file's folder on the include
 * path and hash this file with the extension's source, so a change here rebuilds them all.
 * Plain C99 on the CPython 3.11-3.13 API; no NumPy header (the array fields below are
 * NumPy's ABI-stable layout; fast_call.c includes NumPy's own).
 */
#ifndef KILN_CEXT_H
#define KILN_CEXT_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The first fields of NumPy's PyArrayObject_fields (npy_intp is Py_ssize_t on every
 * platform NumPy supports). Read only after checking the object's type is np.ndarray
 * (or a subclass, which shares the layout). */
typedef struct {
    PyObject_HEAD
    char *data;
    int nd;
    Py_ssize_t *dimensions;
    Py_ssize_t *strides;
    PyObject *base;
    PyObject *descr;
    int flags;
} kiln_array_head;

/* NumPy's NPY_ARRAY_WRITEABLE flag bit (``x.flags.writeable``). */
#define KILN_ARRAY_WRITEABLE 0x0400

/* Does ``a`` (an ndarray or a subclass: the caller checked) hold at most ``limit``
 * elements? */
static inline int
kiln_size_at_most(const kiln_array_head *a, Py_ssize_t limit)
{
    Py_ssize_t size = 1;
    for (int d = 0; d < a->nd; d++) {
        size *= a->dimensions[d];
        if (size > limit)
            return 0;
    }
    return 1;
}

/* PyObject_Vectorcall(callable, ...) without its thread-state fetch: the callable's own
 * vectorcall function when it has one (kiln's types, C functions, Python functions),
 * else the generic call. From 3.12 the thread state is a thread-local variable, which a
 * shared libpython reads through __tls_get_addr on every fetch; a cache hit's chain of
 * C calls (dispatcher, entry, graph, error mode, kernels) paid it at each link, part of
 * the 30-40 ns a hit costs more there than on 3.11. (Also skipped: the debug check that
 * a NULL result comes with an exception; kiln's callees keep that contract.) */
static inline PyObject *
kiln_vectorcall(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    /* PyVectorcall_Function inlined (3.11 exports it as a function: ~5 ns a call, and a
     * hit makes four such calls) */
    PyTypeObject *tp = Py_TYPE(callable);
    vectorcallfunc call = NULL;
    if (PyType_HasFeature(tp, Py_TPFLAGS_HAVE_VECTORCALL))
        memcpy(&call, (char *)callable + tp->tp_vectorcall_offset, sizeof(call));
    if (call == NULL)
        return PyObject_Vectorcall(callable, args, nargsf, kwnames);
    return call(callable, args, nargsf, kwnames);
}

/* 0, or -1 with a TypeError: the constructors take positional arguments only. */
static inline int
kiln_no_keywords(PyObject *kwargs, const char *type_name)
{
    if (kwargs != NULL && PyDict_GET_SIZE(kwargs) != 0) {
        PyErr_Format(PyExc_TypeError, "%s takes positional arguments only", type_name);
        return -1;
    }
    return 0;
}

/* Each item of ``tuple`` as a Py_ssize_t into ``out`` (room for all of them); 0, or -1
 * with an exception set. */
static inline int
kiln_ssize_items(PyObject *tuple, Py_ssize_t *out)
{
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(tuple); i++) {
        out[i] = PyLong_AsSsize_t(PyTuple_GET_ITEM(tuple, i));
        if (out[i] == -1 && PyErr_Occurred())
            return -1;
    }
    return 0;
}

/* tp_call of a vectorcall type: the same code whichever way it is called. */
static inline PyObject *
kiln_vectorcall_call(PyObject *op, PyObject *args, PyObject *kwargs)
{
    return PyVectorcall_Call(op, args, kwargs);
}

/* The garbage-collector functions of a type whose object fields FIELDS lists:
 *
 *     #define LAUNCHER_FIELDS(X) X(ndarray) X(fallback) X(owner)
 *     KILN_GC_FUNCTIONS(launcher, Launcher, LAUNCHER_FIELDS, )
 *
 * defines launcher_traverse, launcher_clear and launcher_dealloc; FREE is a statement
 * run in dealloc after the fields are cleared (PyMem_Free of the type's own buffers, or
 * nothing). */
#define KILN_VISIT_FIELD(name) Py_VISIT(self->name);
#define KILN_CLEAR_FIELD(name) Py_CLEAR(self->name);
#define KILN_GC_FUNCTIONS(prefix, Struct, FIELDS, FREE)                              \
    static int prefix##_traverse(PyObject *op, visitproc visit, void *arg)           \
    {                                                                                 \
        Struct *self = (Struct *)op;                                                  \
        FIELDS(KILN_VISIT_FIELD)                                                      \
        return 0;                                                                     \
    }                                                                                 \
    static int prefix##_clear(PyObject *op)                                           \
    {                                                                                 \
        Struct *self = (Struct *)op;                                                  \
        FIELDS(KILN_CLEAR_FIELD)                                                      \
        return 0;                                                                     \
    }                                                                                 \
    static void prefix##_dealloc(PyObject *op)                                        \
    {                                                                                 \
        Struct *self = (Struct *)op;                                                  \
        (void)self;                                                                   \
        PyObject_GC_UnTrack(op);                                                      \
        prefix##_clear(op);                                                           \
        FREE;                                                                         \
        Py_TYPE(op)->tp_free(op);                                                     \
    }

/* The type object of such a type, called through vectorcall (its struct has a
 * ``vectorcallfunc vectorcall`` field) and built by prefix##_new; more slots (members,
 * getset) after the doc string:
 *
 *     static PyTypeObject LauncherType = KILN_VECTORCALL_TYPE(launcher, Launcher, "doc",
 *                                                             .tp_getset = launcher_getset);
 */
#define KILN_VECTORCALL_TYPE(prefix, Struct, doc, ...)                                \
    {                                                                                 \
        PyVarObject_HEAD_INIT(NULL, 0)                                                \
        .tp_name = "kiln." #Struct,                                                   \
        .tp_basicsize = sizeof(Struct),                                               \
        .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL, \
        .tp_doc = doc,                                                                \
        .tp_new = prefix##_new,                                                       \
        .tp_dealloc = prefix##_dealloc,                                               \
        .tp_traverse = prefix##_traverse,                                             \
        .tp_clear = prefix##_clear,                                                   \
        .tp_call = kiln_vectorcall_call,                                              \
        .tp_vectorcall_offset = offsetof(Struct, vectorcall),                         \
        __VA_ARGS__                                                                   \
    }

/* The module: ``PyInit_<KILN_MODULE_NAME>`` (cext.shipped_extension defines the name per
 * source and Python version; setup.py names the installed ones kiln._native.<name>)
 * returns kiln_module_create(&def, types), which readies each type of the
 * NULL-terminated list and adds it under its name after "kiln.". An installed module
 * also carries ``__kiln_source__``, the hash of the sources it was built from
 * (KILN_SOURCE_HASH, kiln/_native source_hash): kiln uses it only while that matches. */
#define KILN_CAT(a, b) a##b
#define KILN_INIT(name) KILN_CAT(PyInit_, name)

static inline PyObject *
kiln_module_create(PyModuleDef *def, PyTypeObject **types)
{
    for (PyTypeObject **t = types; *t != NULL; t++)
        if (PyType_Ready(*t) < 0)
            return NULL;
    PyObject *m = PyModule_Create(def);
    if (m == NULL)
        return NULL;
#ifdef KILN_SOURCE_HASH
    if (PyModule_AddStringConstant(m, "__kiln_source__", KILN_SOURCE_HASH) < 0) {
        Py_DECREF(m);
        return NULL;
    }
#endif
    for (PyTypeObject **t = types; *t != NULL; t++) {
        const char *name = strrchr((*t)->tp_name, '.');
        Py_INCREF(*t);
        if (PyModule_AddObject(m, name != NULL ? name + 1 : (*t)->tp_name, (PyObject *)*t) < 0) {
            Py_DECREF(*t);
            Py_DECREF(m);
            return NULL;
        }
    }
    return m;
}

#endif /* KILN_CEXT_H */
