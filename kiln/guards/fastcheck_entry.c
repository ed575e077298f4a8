/* kiln's cache-hit path in C, part 3 (fastcheck.c lists the parts): entries with no
 * Python frame.
 *
 * 3. SimpleEntry: the commonest cache entry (identity, type and array guards; call the
 * graph on parameters; return items of its result) checked and run with no Python frame
 * at all. Python's function calls got slower in 3.12/3.13, so a cache hit that runs no
 * Python code of kiln's costs the same on every version.
 */
#include "fastcheck.h"

/* The commonest cache entry, in C: its guards are identity, type and array checks on
 * parameters, globals and closure cells (and their attributes), and its body calls the graph on parameters and returns items
 * of the graph's result (or returns parameters). Made by fastcheck.simple_entry from the
 * same guards as the generated Python entry, which it calls for anything else (another
 * argument count, a signature with *args, **kwargs or keyword-only parameters, a call
 * that does not bind), so the answers are the same; keywords and defaults of an
 * all-positional signature are bound in C as that entry binds them (simple_bind).
 *
 *     SimpleEntry(python_entry, nparams, guards, graph, graph_inputs, picks, single, MISS,
 *                 direct_owner, tensor_type, overlap, run_eager, constants, note)
 *
 * guards: see guard_holds; graph: callable or None; graph_inputs: param indices; picks:
 * k >= 0 for result[k], -1-i for param i, or () to return the call's result itself (an
 * entry that runs the user's function as Python: graph is that function); single: return
 * the one pick instead of a tuple. direct_owner (or None): an aot.runtime.AOTFunction,
 * the graph; once its ``_direct`` is set (the compiled forward, for plain arrays) and no
 * graph input is a ``tensor_type``, the entry calls ``_direct`` itself, which is what
 * AOTFunction.__call__ would do, without its Python frame; likewise its ``_plain`` (a
 * graph that writes its arguments) for inputs that do not overlap (run_graph,
 * fastcheck.h).
 * overlap, run_eager (optional, or None): the graph's InputsOverlap (raised when it
 * writes into arguments that overlap in memory) and the RUN_EAGER marker the entry then
 * returns, as the Python entry's handler does: the dispatcher runs the function.
 * constants (optional, or None): with no graph, a tuple the picks k >= 0 take result[k]
 * from: an entry returning what capture computed (``return a.shape[0] * 2`` is
 * ``return 8`` under its shape guard) runs no Python at all.
 * note (optional, or None): a str the entry adds (``add_note``) to an Exception the graph
 * raises, as the Python entry's ``except Exception`` does (entries.raise_note: the user's
 * lines that raise there), so such a graph keeps the frameless path. */
#define KILN_MAX_GRAPH_INPUTS 32
#define KILN_MAX_DIMS 32

/* One guard, decoded once from its spec tuple (root kind, a, b, attribute names, check
 * kind, c, d, e):
 *   root 0: parameter a;  1: dict a [key b];  2: cell a's contents
 *   then getattr for each name, then check 0: `is c`;  1: type is c;
 *   2: type is c (np.ndarray) and dtype d and shape e (see fastcheck_arrays.c array_fields_match);
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
    PyObject *pinned;   /* the root's value an earlier guard pinned (`is c`), or NULL: see pin_roots */
    Py_ssize_t shape[KILN_MAX_DIMS];       /* -1: a dynamic dimension (>= 2) */
} kiln_guard;

typedef struct {
    PyObject_HEAD
    PyObject *fallback, *guards, *graph, *graph_inputs, *picks, *miss, *owner, *tensor;
    PyObject *paths;                 /* owner's short paths (kiln_short_paths), or None */
    PyObject *overlap, *run_eager;   /* InputsOverlap and RUN_EAGER, or None */
    PyObject *constants;             /* tuple (no graph), or None */
    PyObject *note;                  /* str added to the graph's exceptions, or None */
    Py_ssize_t nparams, nguards, ninputs, npicks;
    kiln_guard *decoded;
    Py_ssize_t inputs[KILN_MAX_GRAPH_INPUTS];
    Py_ssize_t *pick;
    int single;
    PyObject *names;                 /* the parameters' names when calls bind in C, or NULL */
    Py_ssize_t posonly;              /* how many of them are positional-only */
    PyObject *defaults_of;           /* the user's function whose defaults it binds, or NULL */
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
    if (g->check == 2 && g->c != kiln_ndarray_type) {
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
        if (!PyObject_TypeCheck(value, (PyTypeObject *)kiln_ndarray_type))
            return 0;
        return ((((kiln_array_head *)value)->flags & KILN_ARRAY_WRITEABLE) != 0) == (g->c == Py_True);
    }
    if ((PyObject *)Py_TYPE(value) != g->c)
        return 0;
    return g->check == 1 ? 1 : array_guard_matches(value, g);
}

/* getattr(value, name), a new reference: a module's attribute (``np.sin`` under
 * ``G['np'].sin is sin``) read from its dict, where PyObject_GetAttr would also look the
 * name up on ModuleType first (its generic getattr): ModuleType and object define dunder
 * names alone, so another name is the dict's entry when there is one; anything else
 * (a dunder, a name the dict lacks: __getattr__, the AttributeError) is PyObject_GetAttr's. */
static inline __attribute__((always_inline)) PyObject *
guard_attr(PyObject *value, PyObject *name)
{
    if (PyModule_CheckExact(value) && PyUnicode_CheckExact(name)
            && !(PyUnicode_GET_LENGTH(name) >= 2 && PyUnicode_READ_CHAR(name, 0) == '_'
                 && PyUnicode_READ_CHAR(name, 1) == '_')) {
        PyObject *found = PyDict_GetItemWithError(PyModule_GetDict(value), name);
        if (found != NULL) {
            Py_INCREF(found);
            return found;
        }
        if (PyErr_Occurred())
            return NULL;
    }
    return PyObject_GetAttr(value, name);
}

/* A guard on an attribute of a global or a cell (``G['np'].sin is sin``) that an earlier
 * guard pins by identity (``G['np'] is <module numpy>``: root, key, no attributes, check
 * 0) starts from that guard's object, not a second lookup of the same key: the guards are
 * checked in order and a call gets this far only where the earlier one held. */
static void
pin_roots(kiln_guard *decoded, Py_ssize_t n)
{
    for (Py_ssize_t i = 0; i < n; i++) {
        kiln_guard *g = &decoded[i];
        if (g->root == 0 || g->check == 3 || PyTuple_GET_SIZE(g->attrs) == 0)
            continue;
        for (Py_ssize_t j = 0; j < i; j++) {
            kiln_guard *h = &decoded[j];
            if (h->root == g->root && h->a == g->a && h->check == 0 && PyTuple_GET_SIZE(h->attrs) == 0
                    && (g->root == 2 || h->b == g->b
                        || (PyUnicode_CheckExact(h->b) && PyUnicode_CheckExact(g->b)
                            && PyUnicode_Compare(h->b, g->b) == 0))) {
                g->pinned = h->c;
                break;
            }
        }
    }
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
    else if (g->pinned != NULL) {   /* G['np'] is numpy held, so G['np'].sin reads numpy */
        value = g->pinned;
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
        PyObject *next = guard_attr(value, PyTuple_GET_ITEM(g->attrs, i));
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
    if (defaults != NULL && self->defaults_of != NULL && PyFunction_Check(self->defaults_of)
            && PyFunction_GET_DEFAULTS(self->defaults_of) != defaults)
        /* the function was given new defaults (f.__defaults__ = ...) since the Python entry
         * copied them: that entry misses, and the call recompiles */
        return PyObject_Vectorcall(self->fallback, args, nargsf, kwnames);
    Py_XINCREF(defaults);
    PyObject *out = simple_bind(self, args, nargs, kwnames, defaults, full)
        ? simple_run(self, full) : PyObject_Vectorcall(self->fallback, args, nargsf, kwnames);
    Py_XDECREF(defaults);
    return out;
}

/* The pending exception, with ``note`` added (its ``add_note``); an error adding it is
 * dropped: the exception comes out as it was. */
static void
simple_add_note(PyObject *note)
{
#if PY_VERSION_HEX >= 0x030C0000
    PyObject *exc = PyErr_GetRaisedException();
    PyObject *r = PyObject_CallMethod(exc, "add_note", "O", note);
    if (r == NULL)
        PyErr_Clear();
    Py_XDECREF(r);
    PyErr_SetRaisedException(exc);
#else
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (tb != NULL)
        PyException_SetTraceback(value, tb);
    PyObject *r = PyObject_CallMethod(value, "add_note", "O", note);
    if (r == NULL)
        PyErr_Clear();
    Py_XDECREF(r);
    PyErr_Restore(type, value, tb);
#endif
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
            if (self->note != Py_None && PyErr_ExceptionMatches(PyExc_Exception))
                simple_add_note(self->note);
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
    PyObject *overlap = Py_None, *run_eager = Py_None, *constants = Py_None, *note = Py_None;
    Py_ssize_t nparams;
    int single;
    if (kiln_no_keywords(kwargs, "SimpleEntry") < 0
            || !PyArg_ParseTuple(args, "OnO!OO!O!pO|OOOOOO", &fallback, &nparams, &PyTuple_Type, &guards, &graph,
                                 &PyTuple_Type, &graph_inputs, &PyTuple_Type, &picks, &single, &miss,
                                 &owner, &tensor, &overlap, &run_eager, &constants, &note))
        return NULL;
    if (PyTuple_GET_SIZE(graph_inputs) > KILN_MAX_GRAPH_INPUTS
            || (PyTuple_GET_SIZE(picks) == 0 && graph == Py_None)
            || (single && PyTuple_GET_SIZE(picks) != 1)
            || (owner != Py_None && !PyType_Check(tensor))
            || (overlap != Py_None && (!PyExceptionClass_Check(overlap) || run_eager == Py_None))
            || (constants != Py_None && (graph != Py_None || !PyTuple_CheckExact(constants)))
            || (note != Py_None && (graph == Py_None || !PyUnicode_Check(note)))) {
        PyErr_SetString(PyExc_ValueError, "SimpleEntry: unsupported inputs or outputs");
        return NULL;
    }
    PyObject *paths = kiln_short_paths(owner);
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
    Py_INCREF(note); self->note = note;
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
    pin_roots(self->decoded, self->nguards);
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
    X(overlap) X(run_eager) X(constants) X(note) X(names) X(defaults_of)
KILN_GC_FUNCTIONS(simple, SimpleEntry, SIMPLE_FIELDS, PyMem_Free(self->decoded); PyMem_Free(self->pick))

static PyMemberDef simple_members[] = {
    {"python_entry", T_OBJECT, offsetof(SimpleEntry, fallback), READONLY, "the generated Python entry"},
    {"defaults_of", T_OBJECT, offsetof(SimpleEntry, defaults_of), 0,
     "the user's function whose defaults the entry binds (its calls with new ones miss)"},
    {NULL, 0, 0, 0, NULL},
};

PyTypeObject kiln_SimpleEntryType = KILN_VECTORCALL_TYPE(
    simple, SimpleEntry, "A cache entry checked and run in C (see fastcheck.c).",
    .tp_members = simple_members);
