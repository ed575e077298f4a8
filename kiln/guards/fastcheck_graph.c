/* kiln's cache-hit path in C, part 4 (fastcheck.c lists the parts): a compiled graph's
 * call from C, as AOTFunction.__call__ takes its cache-hit short paths: a writing graph's
 * short path (PlainRun, plain_call) and the graph call of a Python entry (GraphCall);
 * run_graph and graph_target, on every SimpleEntry hit, are inlined from fastcheck.h. */
#include "fastcheck.h"

/* An AOTFunction's short paths, ``[_direct, _plain, _merged]`` (its ``_short``: a list read here
 * with no attribute lookup per call, which cost ~20 ns of a ~200 ns hit), or None for
 * None; a new reference, NULL with a ValueError for anything else. */
PyObject *
kiln_short_paths(PyObject *owner)
{
    if (owner == Py_None) {
        Py_INCREF(owner);
        return owner;
    }
    PyObject *paths = PyObject_GetAttrString(owner, "_short");
    if (paths != NULL && PyList_CheckExact(paths) && PyList_GET_SIZE(paths) == 3
            && PyDict_CheckExact(PyList_GET_ITEM(paths, 2)))
        return paths;
    Py_XDECREF(paths);
    PyErr_Clear();
    PyErr_SetString(PyExc_ValueError, "kiln: a graph's short paths are its AOTFunction's _short, "
                    "[_direct, _plain, _merged]");
    return NULL;
}

/* PlainRun(forward, mutated, picks, copyto, on_error[, kept])(args): aot's
 * _Variant.plain_runner run() in C, for a graph that writes its arguments, on plain arrays
 * that overlap nowhere:
 *
 *     called = args
 *     if kept is not None: args = tuple(called[i] for i in kept)   # f(x, x): x once
 *     outs = forward(*args)
 *     for i, k in mutated:                   # the epilogue: final values into arguments
 *         if outs[k] is not args[i]: copyto(args[i], outs[k], casting="unsafe")
 *     return tuple(outs[v] if kind == 0 else args[v] if kind == 1 else v for kind, v in picks)
 *
 * and on an Exception (not a BaseException) from any of it, ``on_error(called)`` when it is
 * not None (aot's op-by-op rerun), else the exception. run_graph calls it with the
 * inputs as they are (no argument tuple unless on_error needs one). */
typedef struct {
    PyObject_HEAD
    PyObject *forward, *mutated, *picks, *copyto, *on_error;
    Py_ssize_t nmut, npicks, nkept;   /* nkept -1: no kept (every argument) */
    Py_ssize_t *mut;       /* i0, k0, i1, k1, ... */
    Py_ssize_t kept[KILN_OVERLAP_MAX];
    int *pick_kind;
    Py_ssize_t *pick_at;
    vectorcallfunc vectorcall;
} PlainRun;

static PyObject *
plain_run_inputs(PlainRun *self, PyObject *const *called, Py_ssize_t ncalled)
{
    PyObject *const *args = called;
    Py_ssize_t nargs = ncalled;
    PyObject *picked[KILN_OVERLAP_MAX];
    if (self->nkept >= 0) {
        for (Py_ssize_t j = 0; j < self->nkept; j++) {
            if (self->kept[j] >= ncalled) {
                PyErr_SetString(PyExc_IndexError, "kiln: a kept input out of range");
                return NULL;
            }
            picked[j] = called[self->kept[j]];
        }
        args = picked;
        nargs = self->nkept;
    }
    static PyObject *casting = NULL, *unsafe = NULL;   /* copyto's keyword: ("casting",), "unsafe" */
    if (casting == NULL) {
        if (unsafe == NULL && (unsafe = PyUnicode_InternFromString("unsafe")) == NULL)
            return NULL;
        PyObject *name = PyUnicode_InternFromString("casting");
        if (name == NULL)
            return NULL;
        casting = PyTuple_Pack(1, name);
        Py_DECREF(name);
        if (casting == NULL)
            return NULL;
    }
    PyObject *result = NULL;
    PyObject *outs = kiln_vectorcall(self->forward, args, nargs, NULL);
    if (outs == NULL)
        goto error;
    if (!PyTuple_Check(outs)) {   /* (a backend's forward may return another sequence) */
        Py_SETREF(outs, PySequence_Tuple(outs));
        if (outs == NULL)
            goto error;
    }
    for (Py_ssize_t m = 0; m < self->nmut; m++) {
        Py_ssize_t i = self->mut[2 * m], k = self->mut[2 * m + 1];
        if (i >= nargs || k >= PyTuple_GET_SIZE(outs)) {
            PyErr_SetString(PyExc_IndexError, "kiln: a written-back value out of range");
            goto error;
        }
        PyObject *value = PyTuple_GET_ITEM(outs, k);
        if (value == args[i])
            continue;
        PyObject *argv[3] = {args[i], value, unsafe};   /* copyto(args[i], value, casting="unsafe") */
        PyObject *done = PyObject_Vectorcall(self->copyto, argv, 2, casting);
        if (done == NULL)
            goto error;
        Py_DECREF(done);
    }
    result = PyTuple_New(self->npicks);
    if (result == NULL)
        goto error;
    for (Py_ssize_t p = 0; p < self->npicks; p++) {
        PyObject *v;
        Py_ssize_t at = self->pick_at[p];
        if (self->pick_kind[p] == 0) {
            if (at >= PyTuple_GET_SIZE(outs)) {
                PyErr_SetString(PyExc_IndexError, "kiln: an output out of range");
                goto error;
            }
            v = PyTuple_GET_ITEM(outs, at);
        }
        else if (self->pick_kind[p] == 1) {
            if (at >= nargs) {
                PyErr_SetString(PyExc_IndexError, "kiln: an input out of range");
                goto error;
            }
            v = args[at];
        }
        else
            v = PyTuple_GET_ITEM(PyTuple_GET_ITEM(self->picks, p), 1);
        Py_INCREF(v);
        PyTuple_SET_ITEM(result, p, v);
    }
    Py_DECREF(outs);
    return result;
error:
    Py_XDECREF(outs);
    Py_XDECREF(result);
    if (self->on_error == Py_None || !PyErr_ExceptionMatches(PyExc_Exception))
        return NULL;
    PyErr_Clear();
    PyObject *tuple = PyTuple_New(ncalled);
    if (tuple == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < ncalled; i++) {
        Py_INCREF(called[i]);
        PyTuple_SET_ITEM(tuple, i, called[i]);
    }
    PyObject *rerun = PyObject_CallOneArg(self->on_error, tuple);
    Py_DECREF(tuple);
    return rerun;
}

static PyObject *
plain_run_vectorcall(PyObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    if (PyVectorcall_NARGS(nargsf) != 1 || (kwnames != NULL && PyTuple_GET_SIZE(kwnames) != 0)
            || !PyTuple_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "PlainRun takes one tuple of arguments");
        return NULL;
    }
    return plain_run_inputs((PlainRun *)op, &PyTuple_GET_ITEM(args[0], 0), PyTuple_GET_SIZE(args[0]));
}

static PyObject *
plain_run_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    PyObject *forward, *mutated, *picks, *copyto, *on_error, *kept = Py_None;
    if (kiln_no_keywords(kwargs, "PlainRun") < 0
            || !PyArg_ParseTuple(args, "OO!O!OO|O", &forward, &PyTuple_Type, &mutated, &PyTuple_Type, &picks,
                                 &copyto, &on_error, &kept))
        return NULL;
    if (kept != Py_None && (!PyTuple_Check(kept) || PyTuple_GET_SIZE(kept) > KILN_OVERLAP_MAX)) {
        PyErr_SetString(PyExc_ValueError, "PlainRun: kept is None or a tuple of input indices");
        return NULL;
    }
    PlainRun *self = (PlainRun *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    Py_INCREF(forward); self->forward = forward;
    Py_INCREF(mutated); self->mutated = mutated;
    Py_INCREF(picks); self->picks = picks;
    Py_INCREF(copyto); self->copyto = copyto;
    Py_INCREF(on_error); self->on_error = on_error;
    self->vectorcall = plain_run_vectorcall;
    self->nkept = kept == Py_None ? -1 : PyTuple_GET_SIZE(kept);
    if (self->nkept > 0 && kiln_ssize_items(kept, self->kept) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    for (Py_ssize_t j = 0; j < self->nkept; j++)
        if (self->kept[j] < 0) {
            PyErr_SetString(PyExc_ValueError, "PlainRun: a negative kept input");
            Py_DECREF(self);
            return NULL;
        }
    self->nmut = PyTuple_GET_SIZE(mutated);
    self->npicks = PyTuple_GET_SIZE(picks);
    self->mut = PyMem_Calloc(2 * self->nmut + 1, sizeof(Py_ssize_t));
    self->pick_kind = PyMem_Calloc(self->npicks + 1, sizeof(int));
    self->pick_at = PyMem_Calloc(self->npicks + 1, sizeof(Py_ssize_t));
    if (self->mut == NULL || self->pick_kind == NULL || self->pick_at == NULL) {
        Py_DECREF(self);
        return PyErr_NoMemory();
    }
    for (Py_ssize_t m = 0; m < self->nmut; m++) {
        PyObject *pair = PyTuple_GET_ITEM(mutated, m);
        if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2 || kiln_ssize_items(pair, self->mut + 2 * m) < 0
                || self->mut[2 * m] < 0 || self->mut[2 * m + 1] < 0) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, "PlainRun: mutated is ((input, output), ...)");
            Py_DECREF(self);
            return NULL;
        }
    }
    for (Py_ssize_t p = 0; p < self->npicks; p++) {
        PyObject *pick = PyTuple_GET_ITEM(picks, p);
        if (!PyTuple_Check(pick) || PyTuple_GET_SIZE(pick) != 2) {
            PyErr_SetString(PyExc_ValueError, "PlainRun: picks are (kind, value) pairs");
            Py_DECREF(self);
            return NULL;
        }
        long kind = PyLong_AsLong(PyTuple_GET_ITEM(pick, 0));
        if (kind < 0 || kind > 2) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, "PlainRun: a pick's kind is 0, 1 or 2");
            Py_DECREF(self);
            return NULL;
        }
        self->pick_kind[p] = (int)kind;
        if (kind < 2) {
            self->pick_at[p] = PyLong_AsSsize_t(PyTuple_GET_ITEM(pick, 1));
            if (self->pick_at[p] < 0) {
                if (!PyErr_Occurred())
                    PyErr_SetString(PyExc_ValueError, "PlainRun: a negative pick");
                Py_DECREF(self);
                return NULL;
            }
        }
    }
    return (PyObject *)self;
}

#define PLAIN_RUN_FIELDS(X) X(forward) X(mutated) X(picks) X(copyto) X(on_error)
KILN_GC_FUNCTIONS(plain_run, PlainRun, PLAIN_RUN_FIELDS,
                  PyMem_Free(self->mut); PyMem_Free(self->pick_kind); PyMem_Free(self->pick_at))

PyTypeObject kiln_PlainRunType = KILN_VECTORCALL_TYPE(
    plain_run, PlainRun, "A writing graph's cache-hit run: forward, epilogue, outputs (see fastcheck.c).");

/* AOTFunction.__call__'s other short paths, for a graph that writes its arguments:
 * ``_plain(inputs)`` (``paths[1]``) when every input is an exact np.ndarray, a Python or
 * NumPy number (an ``np.int64`` index: ``x[i] = 0``), or None, no array is passed twice
 * and no two overlap (any_overlap's test; what aot's _input_aliasing answers None to);
 * where one array is passed several times and nothing else overlaps, the run of the
 * variant merging them, ``_merged[rep]`` (``paths[2]``; rep: each input's first
 * occurrence, input_aliasing's answer), when there is one (iadd(x, x) on 100 values:
 * 3.1 us through AOTFunction.__call__'s Python, against NumPy's 0.35).
 * A new reference; NULL with no error set: not taken (the caller calls the graph, whose
 * __call__ decides in Python). */
PyObject *
kiln_plain_call(PyObject *paths, PyObject *const *inputs, Py_ssize_t ni)
{
    if (ni > KILN_OVERLAP_MAX)
        return NULL;
    char *lo[KILN_OVERLAP_MAX], *hi[KILN_OVERLAP_MAX];
    Py_ssize_t m = 0, first[KILN_OVERLAP_MAX], repeats = 0;
    for (Py_ssize_t i = 0; i < ni; i++) {
        PyObject *x = inputs[i];
        first[i] = i;
        if ((PyObject *)Py_TYPE(x) == kiln_ndarray_type) {
            Py_ssize_t j = 0;
            while (j < i && inputs[j] != x)
                j++;
            if (j < i) {   /* passed before: merged with its first occurrence */
                first[i] = j;
                repeats++;
                continue;
            }
            if (kiln_overlaps_itself(x))
                return NULL;
            int ok = kiln_array_extent(x, &lo[m], &hi[m]);
            if (ok < 0) {
                PyErr_Clear();
                return NULL;
            }
            if (ok == 0)
                continue;
            for (Py_ssize_t j = 0; j < m; j++)
                if (lo[m] < hi[j] && lo[j] < hi[m])
                    return NULL;
            m++;
        }
        else if (!(x == Py_None || PyLong_CheckExact(x) || PyFloat_CheckExact(x) || PyBool_Check(x)
                   || PyComplex_CheckExact(x) || (PyObject *)Py_TYPE(x) == kiln_bool_type
                   || PyObject_TypeCheck(x, (PyTypeObject *)kiln_number_type)))
            return NULL;
    }
    PyObject *plain = PyList_GET_ITEM(paths, 1);
    if (repeats) {
        PyObject *key = PyTuple_New(ni);
        if (key == NULL)
            return NULL;
        for (Py_ssize_t i = 0; i < ni; i++) {
            PyObject *k = PyLong_FromSsize_t(first[i]);
            if (k == NULL) {
                Py_DECREF(key);
                return NULL;
            }
            PyTuple_SET_ITEM(key, i, k);
        }
        plain = PyDict_GetItemWithError(PyList_GET_ITEM(paths, 2), key);   /* borrowed */
        Py_DECREF(key);
        if (plain == NULL)
            return NULL;   /* (an error stays set) */
    }
    if (plain == Py_None)
        return NULL;
    Py_INCREF(plain);
    if (Py_TYPE(plain) == &kiln_PlainRunType) {   /* no argument tuple, no Python frame */
        PyObject *out = plain_run_inputs((PlainRun *)plain, inputs, ni);
        Py_DECREF(plain);
        if (out == NULL && !PyErr_Occurred())
            PyErr_SetString(PyExc_SystemError, "kiln: a graph's short path failed without an error");
        return out;
    }
    PyObject *args = PyTuple_New(ni);
    if (args == NULL) {
        Py_DECREF(plain);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < ni; i++) {
        Py_INCREF(inputs[i]);
        PyTuple_SET_ITEM(args, i, inputs[i]);
    }
    PyObject *out = PyObject_CallOneArg(plain, args);
    Py_DECREF(args);
    Py_DECREF(plain);
    if (out == NULL && !PyErr_Occurred())
        PyErr_SetString(PyExc_SystemError, "kiln: a graph's short path failed without an error");
    return out;
}

/* GraphCall(aot_function, tensor_type)(*inputs): an entry body's call of its graph (an
 * AOTFunction), taking the graph's cache-hit short paths (``_direct``, ``_plain``: run_graph)
 * from C where AOTFunction.__call__ would take it from a Python frame of its own. */
typedef struct {
    PyObject_HEAD
    PyObject *owner, *paths, *tensor;
    vectorcallfunc vectorcall;
} GraphCall;

static PyObject *
graph_call_vectorcall(PyObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    GraphCall *self = (GraphCall *)op;
    if (kwnames != NULL && PyTuple_GET_SIZE(kwnames) != 0)
        return PyObject_Vectorcall(self->owner, args, nargsf, kwnames);
    return run_graph(self->owner, self->paths, self->tensor, args, PyVectorcall_NARGS(nargsf));
}

static PyObject *
graph_call_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    PyObject *owner, *tensor;
    if (kiln_no_keywords(kwargs, "GraphCall") < 0
            || !PyArg_ParseTuple(args, "OO!", &owner, &PyType_Type, &tensor))
        return NULL;
    PyObject *paths = kiln_short_paths(owner);
    if (paths == NULL)
        return NULL;
    GraphCall *self = (GraphCall *)type->tp_alloc(type, 0);
    if (self == NULL) {
        Py_DECREF(paths);
        return NULL;
    }
    self->paths = paths;
    Py_INCREF(owner); self->owner = owner;
    Py_INCREF(tensor); self->tensor = tensor;
    self->vectorcall = graph_call_vectorcall;
    return (PyObject *)self;
}

#define GRAPH_CALL_FIELDS(X) X(owner) X(paths) X(tensor)
KILN_GC_FUNCTIONS(graph_call, GraphCall, GRAPH_CALL_FIELDS, )

static PyMemberDef graph_call_members[] = {
    {"graph", T_OBJECT, offsetof(GraphCall, owner), READONLY, "the AOTFunction called"},
    {NULL, 0, 0, 0, NULL},
};

PyTypeObject kiln_GraphCallType = KILN_VECTORCALL_TYPE(
    graph_call, GraphCall, "An entry's call of its compiled graph, short path taken in C (see fastcheck.c).",
    .tp_members = graph_call_members);
