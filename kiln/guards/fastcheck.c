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
 * which is declared below so that no NumPy header or import_array is needed. Any other
 * array type (a cupy.ndarray: kiln/array_kinds.py) has another struct, so every place
 * here that reads the fields first makes sure the type is numpy.ndarray (fetched from
 * NumPy when the module is created) and refuses otherwise: such arrays are guarded in
 * Python.
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
 *
 * 3. SimpleEntry: the commonest cache entry (identity, type and array guards; call the
 * graph on parameters; return items of its result) checked and run with no Python frame
 * at all. Python's function calls got slower in 3.12/3.13, so a cache hit that runs no
 * Python code of kiln's costs the same on every version.
 */
#include "cext.h"

/* numpy.ndarray, the one type whose struct array_fields_match may read. */
static PyObject *ndarray_type = NULL;
/* numpy.number and numpy.bool_: NumPy scalars that hold their value (no memory of an
 * array's), which a writing graph's short path takes as it takes Python numbers. */
static PyObject *number_type = NULL, *bool_type = NULL;

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

static PyObject *
array_matches(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 4 || !PyTuple_CheckExact(args[3])) {
        PyErr_SetString(PyExc_TypeError, "array_matches(x, ndarray_type, dtype, shape_tuple)");
        return NULL;
    }
    if ((PyObject *)Py_TYPE(args[0]) != args[1])
        Py_RETURN_FALSE;
    if (args[1] != ndarray_type) {
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
static int
array_extent(PyObject *x, char **lo, char **hi)
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
static int
overlaps_itself(PyObject *x)
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
#define KILN_OVERLAP_MAX 64
static PyObject *
any_overlap(PyObject *module, PyObject *arrays)
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
        if (!PyObject_TypeCheck(x, (PyTypeObject *)ndarray_type))
            Py_RETURN_NONE;
        if (overlaps_itself(x))
            Py_RETURN_TRUE;
        int ok = array_extent(x, &lo[m], &hi[m]);
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

/* ---- the dispatcher ------------------------------------------------------------------ */

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
        if (!PyObject_TypeCheck(args[i], (PyTypeObject *)ndarray_type))
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
static PyObject *partial_type = NULL;

static PyObject *
dispatcher_descr_get(PyObject *self, PyObject *obj, PyObject *type)
{
    (void)type;
    if (obj == NULL || obj == Py_None) {
        Py_INCREF(self);
        return self;
    }
    PyObject *argv[2] = {self, obj};
    return PyObject_Vectorcall(partial_type, argv, 2, NULL);
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
    .tp_descr_get = dispatcher_descr_get,
    .tp_vectorcall_offset = offsetof(Dispatcher, vectorcall),
    .tp_members = dispatcher_members,
};

/* enable_vectorcall(cls): kiln's subclass of Dispatcher is called through vectorcall, as
 * from 3.12 on, where 3.11 does not let a heap type inherit it (a call then built an
 * argument tuple for tp_call). Only for a subclass whose tp_call is still the
 * dispatcher's, so both ways of calling it run the same code. */
static PyObject *
enable_vectorcall(PyObject *module, PyObject *cls)
{
    (void)module;
    if (!PyType_Check(cls) || !PyType_IsSubtype((PyTypeObject *)cls, &DispatcherType)) {
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

/* ---- entries with no Python frame ----------------------------------------------------- */

/* The commonest cache entry, in C: its guards are identity, type and array checks on
 * parameters, globals and closure cells (and their attributes), and its body calls the graph on parameters and returns items
 * of the graph's result (or returns parameters). Made by fastcheck.simple_entry from the
 * same guards as the generated Python entry, which it calls for anything else (another
 * argument count, a signature with *args, **kwargs or keyword-only parameters, a call
 * that does not bind), so the answers are the same; keywords and defaults of an
 * all-positional signature are bound in C as that entry binds them (simple_bind).
 *
 *     SimpleEntry(python_entry, nparams, guards, graph, graph_inputs, picks, single, MISS,
 *                 direct_owner, tensor_type, overlap, run_eager, constants)
 *
 * guards: see guard_holds; graph: callable or None; graph_inputs: param indices; picks:
 * k >= 0 for result[k], -1-i for param i, or () to return the call's result itself (an
 * entry that runs the user's function as Python: graph is that function); single: return
 * the one pick instead of a tuple. direct_owner (or None): an aot.runtime.AOTFunction,
 * the graph; once its ``_direct`` is set (the compiled forward, for plain arrays) and no
 * graph input is a ``tensor_type``, the entry calls ``_direct`` itself, which is what
 * AOTFunction.__call__ would do, without its Python frame; likewise its ``_plain`` (a
 * graph that writes its arguments) for inputs that do not overlap (run_graph).
 * overlap, run_eager (optional, or None): the graph's InputsOverlap (raised when it
 * writes into arguments that overlap in memory) and the RUN_EAGER marker the entry then
 * returns, as the Python entry's handler does: the dispatcher runs the function.
 * constants (optional, or None): with no graph, a tuple the picks k >= 0 take result[k]
 * from: an entry returning what capture computed (``return a.shape[0] * 2`` is
 * ``return 8`` under its shape guard) runs no Python at all. */
#define KILN_MAX_GRAPH_INPUTS 32
#define KILN_MAX_DIMS 32

/* One guard, decoded once from its spec tuple (root kind, a, b, attribute names, check
 * kind, c, d, e):
 *   root 0: parameter a;  1: dict a [key b];  2: cell a's contents
 *   then getattr for each name, then check 0: `is c`;  1: type is c;
 *   2: type is c (np.ndarray) and dtype d and shape e (see array_fields_match);
 *   3: (root 1, no names) the key is absent: a builtin no global shadows;
 *   4: an np.ndarray (or subclass) whose ``flags.writeable`` is c (True or False): the
 *      guard capture puts on an array the function writes into (NumPy raises on a
 *      read-only one; kiln/capture/array_writes.py), read from the array's flags;
 *   5: type is type(c) and == c, for an exact int, float (not NaN; a zero's sign counts,
 *      as in guard.py add_equals) or str c: a constant capture specialized on
 *      (``self.c == 3.0``, ``G['EPS'] == 1e-05``). */
typedef struct {
    int root, check, nd;
    Py_ssize_t param;
    PyObject *a, *b, *attrs, *c, *dtype;   /* borrowed from the spec tuple (kept alive) */
    Py_ssize_t shape[KILN_MAX_DIMS];       /* -1: a dynamic dimension (>= 2) */
} kiln_guard;

typedef struct {
    PyObject_HEAD
    PyObject *fallback, *guards, *graph, *graph_inputs, *picks, *miss, *owner, *tensor;
    PyObject *paths;                 /* owner's short paths (short_paths), or None */
    PyObject *overlap, *run_eager;   /* InputsOverlap and RUN_EAGER, or None */
    PyObject *constants;             /* tuple (no graph), or None */
    Py_ssize_t nparams, nguards, ninputs, npicks;
    kiln_guard *decoded;
    Py_ssize_t inputs[KILN_MAX_GRAPH_INPUTS];
    Py_ssize_t *pick;
    int single;
    PyObject *names;                 /* the parameters' names when calls bind in C, or NULL */
    Py_ssize_t posonly;              /* how many of them are positional-only */
    vectorcallfunc vectorcall;
} SimpleEntry;

/* Decode one spec (see kiln_guard); 0 on success, -1 with an exception set. */
static int
guard_decode(PyObject *spec, Py_ssize_t nparams, kiln_guard *g)
{
    if (!PyTuple_Check(spec) || PyTuple_GET_SIZE(spec) != 8 || !PyTuple_Check(PyTuple_GET_ITEM(spec, 3))) {
        PyErr_SetString(PyExc_ValueError, "SimpleEntry: a guard spec is an 8-tuple");
        return -1;
    }
    g->root = (int)PyLong_AsLong(PyTuple_GET_ITEM(spec, 0));
    g->check = (int)PyLong_AsLong(PyTuple_GET_ITEM(spec, 4));
    if (PyErr_Occurred())
        return -1;
    g->a = PyTuple_GET_ITEM(spec, 1);
    g->b = PyTuple_GET_ITEM(spec, 2);
    g->attrs = PyTuple_GET_ITEM(spec, 3);
    g->c = PyTuple_GET_ITEM(spec, 5);
    g->dtype = PyTuple_GET_ITEM(spec, 6);
    g->param = -1;
    g->nd = 0;
    if (g->root == 0) {
        g->param = PyLong_AsSsize_t(g->a);
        if (g->param < 0 || g->param >= nparams) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, "SimpleEntry: guard on a parameter out of range");
            return -1;
        }
    }
    else if ((g->root == 1 && !PyDict_Check(g->a)) || (g->root == 2 && !PyCell_Check(g->a))
             || g->root < 0 || g->root > 2) {
        PyErr_SetString(PyExc_ValueError, "SimpleEntry: a guard root is a parameter, dict or cell");
        return -1;
    }
    if (g->check == 3 && (g->root != 1 || PyTuple_GET_SIZE(g->attrs) != 0)) {
        PyErr_SetString(PyExc_ValueError, "SimpleEntry: an 'absent' guard is on a dict key");
        return -1;
    }
    if (g->check == 4 && !PyBool_Check(g->c)) {
        PyErr_SetString(PyExc_ValueError, "SimpleEntry: a writeable guard compares with a bool");
        return -1;
    }
    if (g->check == 5 && !(PyLong_CheckExact(g->c) || PyUnicode_CheckExact(g->c)
                           || (PyFloat_CheckExact(g->c) && !isnan(PyFloat_AS_DOUBLE(g->c))))) {
        PyErr_SetString(PyExc_ValueError, "SimpleEntry: an equality guard compares with an int, "
                        "float (not NaN) or str");
        return -1;
    }
    if (g->check < 0 || g->check > 5) {
        PyErr_SetString(PyExc_ValueError, "SimpleEntry: an unknown guard check");
        return -1;
    }
    if (g->check == 2 && g->c != ndarray_type) {
        PyErr_SetString(PyExc_ValueError, "SimpleEntry: an array guard's type is numpy.ndarray "
                        "(other array types are guarded in Python)");
        return -1;
    }
    if (g->check == 2) {
        PyObject *shape = PyTuple_GET_ITEM(spec, 7);
        if (!PyTuple_Check(shape) || PyTuple_GET_SIZE(shape) > KILN_MAX_DIMS) {
            PyErr_SetString(PyExc_ValueError, "SimpleEntry: an array guard's shape is a short tuple");
            return -1;
        }
        g->nd = (int)PyTuple_GET_SIZE(shape);
        if (kiln_ssize_items(shape, g->shape) < 0)
            return -1;
    }
    return 0;
}

/* An array guard on an exact ndarray (its type was checked): shape spec and dtype. */
static int
array_guard_matches(PyObject *value, const kiln_guard *g)
{
    kiln_array_head *x = (kiln_array_head *)value;
    if (x->nd != g->nd)
        return 0;
    for (int i = 0; i < g->nd; i++) {
        Py_ssize_t want = g->shape[i], have = x->dimensions[i];
        if (want < 0 ? have < 2 : have != want)
            return 0;
    }
    if (x->descr != g->dtype)   /* dtypes are mostly singletons; else compare by value */
        return PyObject_RichCompareBool(x->descr, g->dtype, Py_EQ);
    return 1;
}

/* Does the guarded value pass check 0, 1, 2, 4 or 5 (see kiln_guard)? 1, 0, -1 on error. */
static inline __attribute__((always_inline)) int
value_holds(const kiln_guard *g, PyObject *value)
{
    if (g->check == 0)
        return value == g->c;
    if (g->check == 5) {   /* (an int or str equals itself; floats by value, zeros by sign) */
        if (Py_TYPE(value) != Py_TYPE(g->c))
            return 0;
        if (PyFloat_CheckExact(value)) {
            double have = PyFloat_AS_DOUBLE(value), want = PyFloat_AS_DOUBLE(g->c);
            return have == want && (want != 0.0 || signbit(have) == signbit(want));
        }
        return value == g->c || PyObject_RichCompareBool(value, g->c, Py_EQ);
    }
    if (g->check == 4) {   /* x.flags.writeable: the bit NumPy's flags object reads */
        if (!PyObject_TypeCheck(value, (PyTypeObject *)ndarray_type))
            return 0;
        return ((((kiln_array_head *)value)->flags & KILN_ARRAY_WRITEABLE) != 0) == (g->c == Py_True);
    }
    if ((PyObject *)Py_TYPE(value) != g->c)
        return 0;
    return g->check == 1 ? 1 : array_guard_matches(value, g);
}

/* 1 holds, 0 fails, -1 an exception (read as "fails" by the caller). */
static int
guard_holds(const kiln_guard *g, PyObject *const *args)
{
    PyObject *value;
    Py_ssize_t nattrs = PyTuple_GET_SIZE(g->attrs);
    if (g->root == 0 && nattrs == 0)   /* the commonest guard: a parameter itself */
        return value_holds(g, args[g->param]);
    if (g->root == 0) {
        value = args[g->param];
        Py_INCREF(value);
    }
    else if (g->root == 1) {
        value = PyDict_GetItemWithError(g->a, g->b);
        if (value == NULL)
            return PyErr_Occurred() ? -1 : g->check == 3;
        if (g->check == 3)
            return 0;
        Py_INCREF(value);
    }
    else {
        value = PyCell_GET(g->a);
        if (value == NULL)
            return 0;
        Py_INCREF(value);
    }
    for (Py_ssize_t i = 0; i < nattrs; i++) {
        PyObject *next = PyObject_GetAttr(value, PyTuple_GET_ITEM(g->attrs, i));
        Py_DECREF(value);
        if (next == NULL)
            return -1;
        value = next;
    }
    int ok = value_holds(g, value);
    Py_DECREF(value);
    return ok;
}

static PyObject *
simple_pick(SimpleEntry *self, PyObject *const *args, PyObject *out, Py_ssize_t i)
{
    Py_ssize_t k = self->pick[i];
    if (k < 0) {
        PyObject *v = args[-1 - k];
        Py_INCREF(v);
        return v;
    }
    return PySequence_GetItem(out, k);
}

/* An AOTFunction's short paths, ``[_direct, _plain, _merged]`` (its ``_short``: a list read here
 * with no attribute lookup per call, which cost ~20 ns of a ~200 ns hit), or None for
 * None; a new reference, NULL with a ValueError for anything else. */
static PyObject *
short_paths(PyObject *owner)
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

/* The callable that runs ``graph`` for these inputs: _direct when ``paths`` (an
 * AOTFunction's short paths, or None) has it set and no input is a ``tensor`` (what
 * AOTFunction.__call__ would pick), else the graph. A new reference; *plain is set to
 * 1 when there is no _direct but no input is a tensor (run_graph may take _plain). */
static PyObject *
graph_target(PyObject *graph, PyObject *paths, PyObject *tensor, PyObject *const *inputs, Py_ssize_t ni,
             int *plain)
{
    *plain = 0;
    if (paths != Py_None) {
        PyObject *direct = PyList_GET_ITEM(paths, 0);
        Py_ssize_t i = 0;
        /* (exact floats, ints and ndarrays are no Tensor: no walk of their MRO) */
        while (i < ni && (PyFloat_CheckExact(inputs[i]) || PyLong_CheckExact(inputs[i])
                          || (PyObject *)Py_TYPE(inputs[i]) == ndarray_type
                          || !PyObject_TypeCheck(inputs[i], (PyTypeObject *)tensor)))
            i++;
        if (i == ni && direct != Py_None) {
            Py_INCREF(direct);
            return direct;
        }
        *plain = i == ni;
    }
    Py_INCREF(graph);
    return graph;
}

/* ---- a writing graph's short path ------------------------------------------------------ */

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

static PyTypeObject PlainRunType;

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

static PyTypeObject PlainRunType = KILN_VECTORCALL_TYPE(
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
static PyObject *
plain_call(PyObject *paths, PyObject *const *inputs, Py_ssize_t ni)
{
    if (ni > KILN_OVERLAP_MAX)
        return NULL;
    char *lo[KILN_OVERLAP_MAX], *hi[KILN_OVERLAP_MAX];
    Py_ssize_t m = 0, first[KILN_OVERLAP_MAX], repeats = 0;
    for (Py_ssize_t i = 0; i < ni; i++) {
        PyObject *x = inputs[i];
        first[i] = i;
        if ((PyObject *)Py_TYPE(x) == ndarray_type) {
            Py_ssize_t j = 0;
            while (j < i && inputs[j] != x)
                j++;
            if (j < i) {   /* passed before: merged with its first occurrence */
                first[i] = j;
                repeats++;
                continue;
            }
            if (overlaps_itself(x))
                return NULL;
            int ok = array_extent(x, &lo[m], &hi[m]);
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
                   || PyComplex_CheckExact(x) || (PyObject *)Py_TYPE(x) == bool_type
                   || PyObject_TypeCheck(x, (PyTypeObject *)number_type)))
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
    if (Py_TYPE(plain) == &PlainRunType) {   /* no argument tuple, no Python frame */
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

/* Run ``graph`` for these inputs the way AOTFunction.__call__ would (see graph_target,
 * plain_call); a new reference, NULL with an error. */
static PyObject *
run_graph(PyObject *graph, PyObject *paths, PyObject *tensor, PyObject *const *inputs, Py_ssize_t ni)
{
    int plain;
    PyObject *target = graph_target(graph, paths, tensor, inputs, ni, &plain);
    if (target == NULL)
        return NULL;
    if (plain) {
        PyObject *out = plain_call(paths, inputs, ni);
        if (out != NULL || PyErr_Occurred()) {
            Py_DECREF(target);
            return out;
        }
    }
    PyObject *out = kiln_vectorcall(target, inputs, ni, NULL);
    Py_DECREF(target);
    return out;
}

#define KILN_MAX_BOUND 32

/* Keyword arguments and defaults bound into ``full`` as the Python entry (the user's
 * signature and defaults) binds them, for an entry whose parameters are all positional
 * (names set): a name no parameter has or one already given, a positional-only one by
 * name, a missing argument with no default: 0, and the Python entry answers (or raises).
 * ``defaults``: the Python entry's, borrowed (the caller holds them). */
static int
simple_bind(SimpleEntry *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
            PyObject *defaults, PyObject **full)
{
    Py_ssize_t n = self->nparams, nkw = kwnames == NULL ? 0 : PyTuple_GET_SIZE(kwnames);
    if (self->names == NULL || nargs > n)
        return 0;
    for (Py_ssize_t i = 0; i < n; i++)
        full[i] = i < nargs ? args[i] : NULL;
    for (Py_ssize_t j = 0; j < nkw; j++) {
        PyObject *name = PyTuple_GET_ITEM(kwnames, j);
        Py_ssize_t i = 0;
        while (i < n && PyTuple_GET_ITEM(self->names, i) != name)
            i++;
        for (Py_ssize_t k = 0; i == n && k < n; k++)   /* not interned: compare the text */
            if (PyUnicode_Compare(PyTuple_GET_ITEM(self->names, k), name) == 0)
                i = k;
        if (PyErr_Occurred()) {
            PyErr_Clear();
            return 0;
        }
        if (i == n || i < self->posonly || full[i] != NULL)
            return 0;
        full[i] = args[nargs + j];
    }
    Py_ssize_t nd = defaults == NULL ? 0 : PyTuple_GET_SIZE(defaults);
    for (Py_ssize_t i = 0; i < n; i++)
        if (full[i] == NULL) {
            if (i < n - nd)
                return 0;
            full[i] = PyTuple_GET_ITEM(defaults, i - (n - nd));
        }
    return 1;
}

static PyObject *simple_run(SimpleEntry *self, PyObject *const *args);

static PyObject *
simple_vectorcall(PyObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    SimpleEntry *self = (SimpleEntry *)op;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (nargs == self->nparams && (kwnames == NULL || PyTuple_GET_SIZE(kwnames) == 0))
        return simple_run(self, args);
    /* keywords or defaults: bound here where the signature allows (a call with them
     * paid the Python entry's frame, ~130 ns, ~25 more on 3.12/3.13) */
    PyObject *full[KILN_MAX_BOUND];
    PyObject *defaults = self->names == NULL ? NULL : PyFunction_GET_DEFAULTS(self->fallback);
    Py_XINCREF(defaults);
    PyObject *out = simple_bind(self, args, nargs, kwnames, defaults, full)
        ? simple_run(self, full) : PyObject_Vectorcall(self->fallback, args, nargsf, kwnames);
    Py_XDECREF(defaults);
    return out;
}

static PyObject *
simple_run(SimpleEntry *self, PyObject *const *args)
{
    for (Py_ssize_t g = 0; g < self->nguards; g++) {
        int ok = guard_holds(&self->decoded[g], args);
        if (ok <= 0)
            goto miss;       /* the Python entry answers MISS when a guard raises, too */
    }
    PyObject *out = NULL;
    if (self->graph != Py_None) {
        PyObject *inputs[KILN_MAX_GRAPH_INPUTS];
        Py_ssize_t ni = self->ninputs;
        for (Py_ssize_t i = 0; i < ni; i++)
            inputs[i] = args[self->inputs[i]];
        out = run_graph(self->graph, self->paths, self->tensor, inputs, ni);
        if (out == NULL) {
            /* arguments that overlap, to a graph writing into them: the function runs
             * as Python (the Python entry's handler, entries.OVERLAP_HANDLER) */
            if (self->overlap != Py_None && PyErr_ExceptionMatches(self->overlap)) {
                PyErr_Clear();
                Py_INCREF(self->run_eager);
                return self->run_eager;
            }
            return NULL;
        }
    }
    else if (self->constants != Py_None) {
        out = self->constants;
        Py_INCREF(out);
    }
    PyObject *result;
    Py_ssize_t np_ = self->npicks;
    if (np_ == 0)            /* the function itself ran (an entry that runs it as Python) */
        return out;
    if (self->single) {
        result = simple_pick(self, args, out, 0);
    }
    else {
        result = PyTuple_New(np_);
        for (Py_ssize_t i = 0; result != NULL && i < np_; i++) {
            PyObject *v = simple_pick(self, args, out, i);
            if (v == NULL)
                Py_CLEAR(result);
            else
                PyTuple_SET_ITEM(result, i, v);
        }
    }
    Py_XDECREF(out);
    return result;
miss:
    PyErr_Clear();
    Py_INCREF(self->miss);
    return self->miss;
}

/* The parameter names of a Python entry whose parameters are all positional (no *args,
 * **kwargs or keyword-only ones): its calls with keywords or defaults bind in C. */
static int
simple_signature(SimpleEntry *self)
{
    if (!PyFunction_Check(self->fallback) || self->nparams > KILN_MAX_BOUND)
        return 0;
    PyCodeObject *co = (PyCodeObject *)PyFunction_GET_CODE(self->fallback);
    if (co->co_argcount != self->nparams || co->co_kwonlyargcount != 0
            || (co->co_flags & (CO_VARARGS | CO_VARKEYWORDS)))
        return 0;
    PyObject *varnames = PyObject_GetAttrString((PyObject *)co, "co_varnames");
    if (varnames == NULL)
        return -1;
    self->names = PyTuple_GetSlice(varnames, 0, self->nparams);
    Py_DECREF(varnames);
    self->posonly = co->co_posonlyargcount;
    return self->names == NULL ? -1 : 0;
}

static PyObject *
simple_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    PyObject *fallback, *guards, *graph, *graph_inputs, *picks, *miss, *owner = Py_None, *tensor = Py_None;
    PyObject *overlap = Py_None, *run_eager = Py_None, *constants = Py_None;
    Py_ssize_t nparams;
    int single;
    if (kiln_no_keywords(kwargs, "SimpleEntry") < 0
            || !PyArg_ParseTuple(args, "OnO!OO!O!pO|OOOOO", &fallback, &nparams, &PyTuple_Type, &guards, &graph,
                                 &PyTuple_Type, &graph_inputs, &PyTuple_Type, &picks, &single, &miss,
                                 &owner, &tensor, &overlap, &run_eager, &constants))
        return NULL;
    if (PyTuple_GET_SIZE(graph_inputs) > KILN_MAX_GRAPH_INPUTS
            || (PyTuple_GET_SIZE(picks) == 0 && graph == Py_None)
            || (single && PyTuple_GET_SIZE(picks) != 1)
            || (owner != Py_None && !PyType_Check(tensor))
            || (overlap != Py_None && (!PyExceptionClass_Check(overlap) || run_eager == Py_None))
            || (constants != Py_None && (graph != Py_None || !PyTuple_CheckExact(constants)))) {
        PyErr_SetString(PyExc_ValueError, "SimpleEntry: unsupported inputs or outputs");
        return NULL;
    }
    PyObject *paths = short_paths(owner);
    if (paths == NULL)
        return NULL;
    SimpleEntry *self = (SimpleEntry *)type->tp_alloc(type, 0);
    if (self == NULL) {
        Py_DECREF(paths);
        return NULL;
    }
    self->paths = paths;
    Py_INCREF(fallback); self->fallback = fallback;
    Py_INCREF(guards); self->guards = guards;
    Py_INCREF(graph); self->graph = graph;
    Py_INCREF(graph_inputs); self->graph_inputs = graph_inputs;
    Py_INCREF(picks); self->picks = picks;
    Py_INCREF(miss); self->miss = miss;
    Py_INCREF(owner); self->owner = owner;
    Py_INCREF(tensor); self->tensor = tensor;
    Py_INCREF(overlap); self->overlap = overlap;
    Py_INCREF(run_eager); self->run_eager = run_eager;
    Py_INCREF(constants); self->constants = constants;
    self->nparams = nparams;
    self->single = single;
    self->vectorcall = simple_vectorcall;
    if (simple_signature(self) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    /* decode everything once: a call reads C fields only */
    self->nguards = PyTuple_GET_SIZE(guards);
    self->ninputs = PyTuple_GET_SIZE(graph_inputs);
    self->npicks = PyTuple_GET_SIZE(picks);
    self->decoded = PyMem_Calloc(self->nguards + 1, sizeof(kiln_guard));
    self->pick = PyMem_Calloc(self->npicks + 1, sizeof(Py_ssize_t));
    if (self->decoded == NULL || self->pick == NULL) {
        Py_DECREF(self);
        return PyErr_NoMemory();
    }
    for (Py_ssize_t g = 0; g < self->nguards; g++)
        if (guard_decode(PyTuple_GET_ITEM(guards, g), nparams, &self->decoded[g]) < 0) {
            Py_DECREF(self);
            return NULL;
        }
    if (kiln_ssize_items(graph_inputs, self->inputs) < 0 || kiln_ssize_items(picks, self->pick) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < self->ninputs; i++)
        if (self->inputs[i] < 0 || self->inputs[i] >= nparams) {
            PyErr_SetString(PyExc_ValueError, "SimpleEntry: a graph input out of range");
            Py_DECREF(self);
            return NULL;
        }
    for (Py_ssize_t i = 0; i < self->npicks; i++) {
        Py_ssize_t k = self->pick[i];
        if ((k < 0 && -1 - k >= nparams)
                || (k >= 0 && graph == Py_None && (constants == Py_None || k >= PyTuple_GET_SIZE(constants)))) {
            PyErr_SetString(PyExc_ValueError, "SimpleEntry: a pick out of range");
            Py_DECREF(self);
            return NULL;
        }
    }
    return (PyObject *)self;
}

#define SIMPLE_FIELDS(X) X(fallback) X(guards) X(graph) X(graph_inputs) X(picks) X(miss) X(owner) X(paths) X(tensor) \
    X(overlap) X(run_eager) X(constants) X(names)
KILN_GC_FUNCTIONS(simple, SimpleEntry, SIMPLE_FIELDS, PyMem_Free(self->decoded); PyMem_Free(self->pick))

static PyMemberDef simple_members[] = {
    {"python_entry", T_OBJECT, offsetof(SimpleEntry, fallback), READONLY, "the generated Python entry"},
    {NULL, 0, 0, 0, NULL},
};

static PyTypeObject SimpleEntryType = KILN_VECTORCALL_TYPE(
    simple, SimpleEntry, "A cache entry checked and run in C (see fastcheck.c).",
    .tp_members = simple_members);

/* ---- the graph call of a Python entry ------------------------------------------------ */

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
    PyObject *paths = short_paths(owner);
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

static PyTypeObject GraphCallType = KILN_VECTORCALL_TYPE(
    graph_call, GraphCall, "An entry's call of its compiled graph, short path taken in C (see fastcheck.c).",
    .tp_members = graph_call_members);

static PyMethodDef methods[] = {
    {"array_matches", (PyCFunction)(void (*)(void))array_matches, METH_FASTCALL,
     "array_matches(x, ndarray_type, dtype, shape): kiln's combined array guard."},
    {"any_overlap", any_overlap, METH_O,
     "any_overlap(arrays): do two of these distinct np.ndarrays' bytes overlap? (None: ask NumPy)"},
    {"enable_vectorcall", enable_vectorcall, METH_O,
     "enable_vectorcall(cls): call kiln's Dispatcher subclass through vectorcall (3.11)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, KILN_MODULE_NAME_STR, NULL, -1, methods,
};

PyMODINIT_FUNC
KILN_INIT(KILN_MODULE_NAME)(void)
{
    PyTypeObject *types[] = {&DispatcherType, &SimpleEntryType, &GraphCallType, &PlainRunType, NULL};
    if (partial_type == NULL) {
        PyObject *functools = PyImport_ImportModule("functools");
        if (functools == NULL)
            return NULL;
        partial_type = PyObject_GetAttrString(functools, "partial");   /* kept for the process */
        Py_DECREF(functools);
        if (partial_type == NULL)
            return NULL;
    }
    if (ndarray_type == NULL) {
        PyObject *numpy = PyImport_ImportModule("numpy");
        if (numpy == NULL)
            return NULL;
        ndarray_type = PyObject_GetAttrString(numpy, "ndarray");   /* kept for the process */
        Py_DECREF(numpy);
        if (ndarray_type == NULL)
            return NULL;
        if (!PyType_Check(ndarray_type)) {
            PyErr_SetString(PyExc_TypeError, "numpy.ndarray is not a type");
            return NULL;
        }
    }
    if (number_type == NULL) {
        PyObject *numpy = PyImport_ImportModule("numpy");
        if (numpy == NULL)
            return NULL;
        number_type = PyObject_GetAttrString(numpy, "number");   /* kept for the process */
        bool_type = number_type == NULL ? NULL : PyObject_GetAttrString(numpy, "bool_");
        Py_DECREF(numpy);
        if (bool_type == NULL)
            return NULL;
        if (!PyType_Check(number_type) || !PyType_Check(bool_type)) {
            PyErr_SetString(PyExc_TypeError, "numpy.number or numpy.bool_ is not a type");
            return NULL;
        }
    }
    return kiln_module_create(&module_def, types);
}
