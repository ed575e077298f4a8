/* A generated wrapper's ``call`` run as data: launch.py ``fast_call`` builds this
 * extension (a plain CPython extension sharing cext.h, like launch.c) and a FastCall per
 * wrapper that states its steps (lowering/wrapper.py ``_fast_plan``).
 */
#include "cext.h"
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

/* FastCall(call, error_mode, layouts, fixed, allocations, launches, outputs)(*inputs):
 * the generated wrapper's ``call`` (kiln/lowering/wrapper.py) when all it does is check
 * NumPy's error mode and its inputs' layouts, allocate fresh arrays, launch kernels and
 * return arrays or inputs (wrapper.py ``_fast_plan``): the same steps with no Python frame.
 * A small graph's whole call is then C from the entry's guards to the kernel (a 3-element
 * ODE right-hand side: the frame cost about as much as the kernel). Anything else goes to
 * ``call``: a trapping error mode (NumPy runs the graph), layouts other than the build's
 * (respecialize), keywords, another argument count.
 *
 * fixed: positions of the inputs ``layouts`` (a Layouts, or None) checks; allocations:
 * ((shape, dtype), ...), each made as ``np.empty(shape, dtype)`` (PyArray_Empty, C order:
 * built against NumPy's headers, cext.shipped_extension's numpy_api), or (shape, dtype,
 * strides): a fresh array of that many elements laid out with those byte strides (a
 * result in another axis order, ``a.T + b.T``: PyArray_NewFromDescr); launches:
 * ((kernel, args), ...);
 * an argument or output is (0, k) input k, (1, j) allocation j, (2, object) that object. */
#define KILN_FAST_MAX 64
#define KILN_FAST_DIMS 32

/* One decoded (kind, value) item: an input, an allocation or an object (borrowed from
 * the spec tuples the FastCall keeps). */
typedef struct {
    int kind;
    Py_ssize_t index;
    PyObject *object;
} fast_ref;

typedef struct {
    PyObject_HEAD
    PyObject *call, *error_mode, *layouts, *fixed, *allocations, *launches, *outputs, *dict;
    Py_ssize_t nparams, nfixed, nbufs, nlaunches, nout;
    int alloc_nd[KILN_FAST_MAX];
    npy_intp *alloc_dims;      /* allocation j's shape: alloc_dims[KILN_FAST_DIMS * j ...] */
    npy_intp *alloc_strides;   /* and its strides, where alloc_strided[j] */
    char alloc_strided[KILN_FAST_MAX];
    Py_ssize_t fixed_at[KILN_FAST_MAX];
    fast_ref *refs;            /* each launch's arguments, then the outputs */
    Py_ssize_t *launch_at;     /* launch l's arguments: refs[launch_at[l] .. launch_at[l + 1]) */
    vectorcallfunc vectorcall;
} FastCall;

static inline PyObject *
fast_item(const fast_ref *r, PyObject *const *args, PyObject **bufs)
{
    return r->kind == 0 ? args[r->index] : r->kind == 1 ? bufs[r->index] : r->object;
}

static PyObject *
fast_call_vectorcall(PyObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    FastCall *self = (FastCall *)op;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (nargs != self->nparams || (kwnames != NULL && PyTuple_GET_SIZE(kwnames) != 0))
        return PyObject_Vectorcall(self->call, args, nargsf, kwnames);
    PyObject *trapped = kiln_vectorcall(self->error_mode, NULL, 0, NULL);
    if (trapped == NULL)
        return NULL;
    Py_DECREF(trapped);
    if (trapped != Py_False)
        return PyObject_Vectorcall(self->call, args, nargsf, NULL);
    PyObject *argv[KILN_FAST_MAX];
    if (self->nfixed > 0 && self->layouts != Py_None) {
        for (Py_ssize_t i = 0; i < self->nfixed; i++)
            argv[i] = args[self->fixed_at[i]];
        PyObject *ok = kiln_vectorcall(self->layouts, argv, self->nfixed, NULL);
        if (ok == NULL)
            return NULL;
        Py_DECREF(ok);
        if (ok != Py_True)
            return PyObject_Vectorcall(self->call, args, nargsf, NULL);
    }
    PyObject *bufs[KILN_FAST_MAX];
    Py_ssize_t made = 0;
    PyObject *result = NULL;
    for (; made < self->nbufs; made++) {
        PyArray_Descr *descr = (PyArray_Descr *)PyTuple_GET_ITEM(PyTuple_GET_ITEM(self->allocations, made), 1);
        Py_INCREF(descr);   /* PyArray_Empty steals it */
        npy_intp *dims = self->alloc_dims + KILN_FAST_DIMS * made;
        bufs[made] = !self->alloc_strided[made]
            ? PyArray_Empty(self->alloc_nd[made], dims, descr, 0)
            : PyArray_NewFromDescr(&PyArray_Type, descr, self->alloc_nd[made], dims,
                                   self->alloc_strides + KILN_FAST_DIMS * made, NULL, 0, NULL);
        if (bufs[made] == NULL)
            goto done;
    }
    for (Py_ssize_t l = 0; l < self->nlaunches; l++) {
        Py_ssize_t first = self->launch_at[l], n = self->launch_at[l + 1] - first;
        for (Py_ssize_t i = 0; i < n; i++)
            argv[i] = fast_item(&self->refs[first + i], args, bufs);
        PyObject *kernel = PyTuple_GET_ITEM(PyTuple_GET_ITEM(self->launches, l), 0);
        PyObject *r = kiln_vectorcall(kernel, argv, n, NULL);
        if (r == NULL)
            goto done;
        Py_DECREF(r);
    }
    result = PyTuple_New(self->nout);
    if (result == NULL)
        goto done;
    const fast_ref *outs = self->refs + self->launch_at[self->nlaunches];
    for (Py_ssize_t i = 0; i < self->nout; i++) {
        PyObject *v = fast_item(&outs[i], args, bufs);
        Py_INCREF(v);
        PyTuple_SET_ITEM(result, i, v);
    }
done:
    for (Py_ssize_t j = 0; j < made; j++)
        Py_DECREF(bufs[j]);
    return result;
}

/* Decode the (kind, value) items of ``items`` into refs; 0 on success, -1 with ValueError. */
static int
fast_decode(PyObject *items, Py_ssize_t nparams, Py_ssize_t nbufs, fast_ref *refs)
{
    if (!PyTuple_Check(items) || PyTuple_GET_SIZE(items) > KILN_FAST_MAX)
        goto bad;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(items); i++) {
        PyObject *item = PyTuple_GET_ITEM(items, i);
        if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) != 2 || !PyLong_Check(PyTuple_GET_ITEM(item, 0)))
            goto bad;
        long kind = PyLong_AsLong(PyTuple_GET_ITEM(item, 0));
        refs[i].kind = (int)kind;
        refs[i].index = 0;
        refs[i].object = PyTuple_GET_ITEM(item, 1);
        if (kind == 2)
            continue;
        if ((kind != 0 && kind != 1) || !PyLong_Check(PyTuple_GET_ITEM(item, 1)))
            goto bad;
        Py_ssize_t k = PyLong_AsSsize_t(PyTuple_GET_ITEM(item, 1));
        if (k < 0 || k >= (kind == 0 ? nparams : nbufs))
            goto bad;
        refs[i].index = k;
    }
    return 0;
bad:
    if (!PyErr_Occurred())
        PyErr_SetString(PyExc_ValueError, "FastCall: malformed arguments or outputs");
    return -1;
}

static PyObject *
fast_call_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    PyObject *call, *error_mode, *layouts, *fixed, *allocations, *launches, *outputs;
    Py_ssize_t nparams;
    if (kiln_no_keywords(kwargs, "FastCall") < 0
            || !PyArg_ParseTuple(args, "nOOOO!O!O!O!", &nparams, &call, &error_mode, &layouts,
                                 &PyTuple_Type, &fixed, &PyTuple_Type, &allocations,
                                 &PyTuple_Type, &launches, &PyTuple_Type, &outputs))
        return NULL;
    Py_ssize_t nbufs = PyTuple_GET_SIZE(allocations);
    if (nparams > KILN_FAST_MAX || nbufs > KILN_FAST_MAX || PyTuple_GET_SIZE(fixed) > KILN_FAST_MAX) {
        PyErr_SetString(PyExc_ValueError, "FastCall: too many inputs or allocations");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(fixed); i++) {
        Py_ssize_t k = PyLong_AsSsize_t(PyTuple_GET_ITEM(fixed, i));
        if (k < 0 || k >= nparams) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, "FastCall: a checked input out of range");
            return NULL;
        }
    }
    for (Py_ssize_t j = 0; j < nbufs; j++) {
        PyObject *spec = PyTuple_GET_ITEM(allocations, j);
        if (!PyTuple_Check(spec) || PyTuple_GET_SIZE(spec) < 2 || PyTuple_GET_SIZE(spec) > 3
                || !PyTuple_Check(PyTuple_GET_ITEM(spec, 0))
                || PyTuple_GET_SIZE(PyTuple_GET_ITEM(spec, 0)) > KILN_FAST_DIMS
                || !PyArray_DescrCheck(PyTuple_GET_ITEM(spec, 1))
                || (PyTuple_GET_SIZE(spec) == 3 && (!PyTuple_Check(PyTuple_GET_ITEM(spec, 2))
                    || PyTuple_GET_SIZE(PyTuple_GET_ITEM(spec, 2)) != PyTuple_GET_SIZE(PyTuple_GET_ITEM(spec, 0))))) {
            PyErr_SetString(PyExc_ValueError, "FastCall: an allocation is (shape, dtype) or (shape, dtype, strides)");
            return NULL;
        }
    }
    Py_ssize_t nlaunches = PyTuple_GET_SIZE(launches), total = PyTuple_GET_SIZE(outputs);
    for (Py_ssize_t l = 0; l < nlaunches; l++) {
        PyObject *launch = PyTuple_GET_ITEM(launches, l);
        if (!PyTuple_Check(launch) || PyTuple_GET_SIZE(launch) != 2 || !PyTuple_Check(PyTuple_GET_ITEM(launch, 1))) {
            PyErr_SetString(PyExc_ValueError, "FastCall: a launch is (kernel, arguments)");
            return NULL;
        }
        total += PyTuple_GET_SIZE(PyTuple_GET_ITEM(launch, 1));
    }
    FastCall *self = (FastCall *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->nparams = nparams;
    Py_INCREF(call); self->call = call;
    Py_INCREF(error_mode); self->error_mode = error_mode;
    Py_INCREF(layouts); self->layouts = layouts;
    Py_INCREF(fixed); self->fixed = fixed;
    Py_INCREF(allocations); self->allocations = allocations;
    Py_INCREF(launches); self->launches = launches;
    Py_INCREF(outputs); self->outputs = outputs;
    self->dict = NULL;
    self->nfixed = PyTuple_GET_SIZE(fixed);
    self->nbufs = nbufs;
    self->nlaunches = nlaunches;
    self->nout = PyTuple_GET_SIZE(outputs);
    for (Py_ssize_t i = 0; i < self->nfixed; i++)
        self->fixed_at[i] = PyLong_AsSsize_t(PyTuple_GET_ITEM(fixed, i));
    self->alloc_dims = PyMem_Calloc(KILN_FAST_DIMS * (nbufs + 1), sizeof(npy_intp));
    self->alloc_strides = PyMem_Calloc(KILN_FAST_DIMS * (nbufs + 1), sizeof(npy_intp));
    if (self->alloc_dims == NULL || self->alloc_strides == NULL) {
        Py_DECREF(self);
        return PyErr_NoMemory();
    }
    for (Py_ssize_t j = 0; j < nbufs; j++) {
        PyObject *shape = PyTuple_GET_ITEM(PyTuple_GET_ITEM(allocations, j), 0);
        self->alloc_nd[j] = (int)PyTuple_GET_SIZE(shape);
        for (Py_ssize_t d = 0; d < PyTuple_GET_SIZE(shape); d++) {
            npy_intp n = PyLong_AsSsize_t(PyTuple_GET_ITEM(shape, d));
            if (n < 0) {
                if (!PyErr_Occurred())
                    PyErr_SetString(PyExc_ValueError, "FastCall: a negative dimension");
                Py_DECREF(self);
                return NULL;
            }
            self->alloc_dims[KILN_FAST_DIMS * j + d] = n;
        }
        self->alloc_strided[j] = PyTuple_GET_SIZE(PyTuple_GET_ITEM(allocations, j)) == 3;
        for (Py_ssize_t d = 0; self->alloc_strided[j] && d < PyTuple_GET_SIZE(shape); d++) {
            npy_intp st = PyLong_AsSsize_t(PyTuple_GET_ITEM(PyTuple_GET_ITEM(PyTuple_GET_ITEM(allocations, j), 2), d));
            if (st == -1 && PyErr_Occurred()) {
                Py_DECREF(self);
                return NULL;
            }
            self->alloc_strides[KILN_FAST_DIMS * j + d] = st;
        }
    }
    self->refs = PyMem_Calloc(total + 1, sizeof(fast_ref));
    self->launch_at = PyMem_Calloc(nlaunches + 1, sizeof(Py_ssize_t));
    if (self->refs == NULL || self->launch_at == NULL) {
        Py_DECREF(self);
        return PyErr_NoMemory();
    }
    Py_ssize_t at = 0;
    for (Py_ssize_t l = 0; l < nlaunches; l++) {
        PyObject *items = PyTuple_GET_ITEM(PyTuple_GET_ITEM(launches, l), 1);
        self->launch_at[l] = at;
        if (fast_decode(items, nparams, nbufs, self->refs + at) < 0) {
            Py_DECREF(self);
            return NULL;
        }
        at += PyTuple_GET_SIZE(items);
    }
    self->launch_at[nlaunches] = at;
    if (fast_decode(outputs, nparams, nbufs, self->refs + at) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    self->vectorcall = fast_call_vectorcall;
    return (PyObject *)self;
}

#define FAST_CALL_FIELDS(X) X(call) X(error_mode) X(layouts) X(fixed) X(allocations) \
    X(launches) X(outputs) X(dict)
KILN_GC_FUNCTIONS(fast_call, FastCall, FAST_CALL_FIELDS,
                  PyMem_Free(self->refs); PyMem_Free(self->launch_at); PyMem_Free(self->alloc_dims); PyMem_Free(self->alloc_strides))

static PyMemberDef fast_call_members[] = {
    {"python_call", T_OBJECT, offsetof(FastCall, call), READONLY, "the wrapper's call (the reference)"},
    {NULL, 0, 0, 0, NULL},
};

static PyTypeObject FastCallType = KILN_VECTORCALL_TYPE(
    fast_call, FastCall, "A wrapper's call run as data (see launch.c).",
    .tp_members = fast_call_members, .tp_dictoffset = offsetof(FastCall, dict),
    .tp_getattro = PyObject_GenericGetAttr, .tp_setattro = PyObject_GenericSetAttr);

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, KILN_MODULE_NAME_STR, NULL, -1, NULL,
};

PyMODINIT_FUNC
KILN_INIT(KILN_MODULE_NAME)(void)
{
    import_array();
    PyTypeObject *types[] = {&FastCallType, NULL};
    return kiln_module_create(&module_def, types);
}
