/* kiln's kernel launcher in C (built by launch.py; a plain CPython extension).
 *
 * A generated wrapper calls each C++ kernel once per call of the compiled function. Through
 * cffi (ABI mode) that costs a Python-level ffi.from_buffer per array (~0.6 us each: the
 * buffer protocol, a cdata object) plus libffi's call: a kernel of eight small arrays paid
 * ~6 us before any work, more than NumPy spends on the same eight-operation function.
 *
 * Every C++ kernel also has a "packed" entry (cpp.py, print_kernel):
 *
 *     extern "C" void kiln_fused_add_0_packed(const kiln_slot *a)
 *     { kiln_fused_add_0((const double *)a[0].p, (double *)a[1].p, a[2].d, (int)a[3].i); }
 *
 * and a Launcher calls it with one 8-byte slot per argument:
 *
 *     Launcher(address, codes, ndarray, fallback, owner[, results, keep_gil, on_fp, fp_mask,
 *              nan_reads])(x, out, 0.5, 2)
 *
 * codes: one letter per argument (as the struct module spells them): 'p' an array, passed
 * as its data pointer (the first element's address: right for strided and broadcast views
 * too, which the kernel indexes by their strides); 'd'/'f' double/float; 'b' 'B' 'h' 'H'
 * 'i' 'I' 'q' 'Q' integers of 8-64 bits (C int is 'i'); 'w' (runners only) an array the
 * loop writes in place, which must be writable: a read-only one makes the call give
 * ``(4, None, ...)`` without running it (the runner's Python test, ``a.flags.writeable``,
 * cost ~0.2 us a call: NumPy builds a flags object). A loop runner (lowering/
 * loop_runner.py) is a Launcher given result codes too: its entry returns a code and
 * writes results over the first slots, and the call gives them back as a tuple. An array argument that is not an
 * ndarray, a value out of its type's range or of a type the conversion does not take:
 * the call goes to ``fallback`` (the cffi path, which converts or raises as it always
 * did). The GIL is released around the kernel, as cffi does, unless the Launcher was made
 * with keep_gil true: a kernel whose work is known to be a few hundred operations (a
 * 3-element ODE right-hand side) runs in less time than releasing and taking back the GIL
 * costs (~50-100 ns, two atomic handshakes), and another thread would get nothing done in
 * that gap anyway.
 *
 * Floating-point flags: a kernel's launch clears the calling thread's divide-by-zero,
 * overflow and invalid flags before the kernel and reads them after (two reads of the SSE
 * control register, a write only when a flag is set; the kernel's threads hand theirs
 * to the calling thread: cpp_prelude.h kiln_fp_take); when one of ``fp_mask`` is set
 * (the kinds some op of the kernel may warn about) the call ends with
 * ``on_fp(flags, *args)`` (1 divide, 2 overflow, 4 invalid: runtime/fpwarn.py warns as
 * NumPy would). ``nan_reads`` (a tuple of argument positions, or None): when "invalid" is
 * the only flag and one of those arguments holds a NaN, the flag came from a comparison
 * of that NaN and the call ends without Python (data with NaNs raises it every call).
 * A runner (loop node) does not report them.
 *
 * The parts, one responsibility each, share launch.h (cext.h, the Launcher and what
 * crosses files) and build into one module (kiln/_native EXTENSIONS lists them; the build
 * hashes them all):
 *
 *   launch.c          this file: the Launcher (arguments into slots, the kernel's call)
 *                     and the module
 *   launch_results.c  a loop runner's results (NumPy scalars from slots)
 *   launch_fp.c       floating-point flags a launch reports, and ErrorMode: the wrapper's
 *                     check of NumPy's floating-point error mode (runtime/fpmode.py)
 *   launch_layouts.c  Layouts: the wrapper's check of its input shapes and strides, in
 *                     one call
 */
#include "launch.h"

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
/* The calling thread's divide (1), overflow (2) and invalid (4) flags, cleared. */
static inline unsigned
fp_take(void)
{
    unsigned c = _mm_getcsr();
    if (c & 0x0d)   /* MXCSR: invalid 0x01, divide 0x04, overflow 0x08 */
        _mm_setcsr(c & ~0x3fu);
    return ((c >> 2) & 1) | ((c >> 2) & 2) | ((c & 1) << 2);
}
#else
#include <fenv.h>
static inline unsigned
fp_take(void)
{
    int c = fetestexcept(FE_DIVBYZERO | FE_OVERFLOW | FE_INVALID);
    if (c)
        feclearexcept(FE_ALL_EXCEPT);
    return (c & FE_DIVBYZERO ? 1u : 0u) | (c & FE_OVERFLOW ? 2u : 0u) | (c & FE_INVALID ? 4u : 0u);
}
#endif

/* 1: converted; 0: not this way (the fallback decides). */
static int
int_slot(PyObject *v, char code, kiln_slot *slot)
{
    int overflow = 0;
    long long x;
    if (PyLong_CheckExact(v) && code != 'Q') {   /* the commonest (_NT, a size): no index call */
        x = PyLong_AsLongLongAndOverflow(v, &overflow);
        if (overflow || (x == -1 && PyErr_Occurred())) {
            PyErr_Clear();
            return 0;
        }
        goto in_range;
    }
    if (PyFloat_Check(v) || !PyIndex_Check(v))
        return 0;
    PyObject *n = PyNumber_Index(v);
    if (n == NULL) {
        PyErr_Clear();
        return 0;
    }
    x = PyLong_AsLongLongAndOverflow(n, &overflow);
    if (code == 'Q' && overflow > 0) {
        unsigned long long u = PyLong_AsUnsignedLongLong(n);
        Py_DECREF(n);
        if (u == (unsigned long long)-1 && PyErr_Occurred()) {
            PyErr_Clear();
            return 0;
        }
        slot->u = u;
        return 1;
    }
    Py_DECREF(n);
    if (overflow || (x == -1 && PyErr_Occurred())) {
        PyErr_Clear();
        return 0;
    }
in_range:;
    long long lo, hi;
    switch (code) {
    case 'b': lo = INT8_MIN; hi = INT8_MAX; break;
    case 'B': lo = 0; hi = UINT8_MAX; break;
    case 'h': lo = INT16_MIN; hi = INT16_MAX; break;
    case 'H': lo = 0; hi = UINT16_MAX; break;
    case 'i': lo = INT32_MIN; hi = INT32_MAX; break;
    case 'I': lo = 0; hi = UINT32_MAX; break;
    case 'Q': lo = 0; hi = INT64_MAX; break;
    default: lo = INT64_MIN; hi = INT64_MAX; break;
    }
    if (x < lo || x > hi)
        return 0;
    slot->i = x;
    return 1;
}

static PyObject *
launcher_vectorcall(PyObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Launcher *self = (Launcher *)op;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    kiln_slot slots[KILN_MAX_ARGS];
    if (nargs != self->nargs || (kwnames != NULL && PyTuple_GET_SIZE(kwnames) != 0))
        goto fallback;
    for (Py_ssize_t k = 0; k < nargs; k++) {
        PyObject *v = args[k];
        char code = self->codes[k];
        if (code == 'p' || code == 'w') {
            if (!PyObject_TypeCheck(v, (PyTypeObject *)self->ndarray))
                goto fallback;
            if (code == 'w' && !(((kiln_array_head *)v)->flags & KILN_ARRAY_WRITEABLE))
                return kiln_runner_refused(self);
            slots[k].p = ((kiln_array_head *)v)->data;
        }
        else if (code == 'd' || code == 'f') {
            double x;
            if (PyFloat_CheckExact(v))
                x = PyFloat_AS_DOUBLE(v);
            else {
                x = PyFloat_AsDouble(v);
                if (x == -1.0 && PyErr_Occurred()) {
                    PyErr_Clear();
                    goto fallback;
                }
            }
            if (code == 'd')
                slots[k].d = x;
            else
                slots[k].f = (float)x;
        }
        else if (!int_slot(v, code, &slots[k]))
            goto fallback;
    }
    if (self->nresults >= 0) {
        int64_t rc;
        Py_BEGIN_ALLOW_THREADS
        rc = ((int64_t (*)(kiln_slot *))self->entry)(slots);
        Py_END_ALLOW_THREADS
        return kiln_runner_results(self, rc, slots);
    }
    unsigned raised;
    if (self->keep_gil) {
        fp_take();
        ((void (*)(const kiln_slot *))self->entry)(slots);
        raised = fp_take();
    }
    else {
        Py_BEGIN_ALLOW_THREADS
        fp_take();
        ((void (*)(const kiln_slot *))self->entry)(slots);
        raised = fp_take();
        Py_END_ALLOW_THREADS
    }
    raised &= self->fp_mask;
    if (raised && self->on_fp != Py_None) {   /* rare: NumPy would have warned, maybe */
        /* Only "invalid", with a NaN in what the kernel reads: a comparison of a NaN
         * raised it (data with NaNs, every call), so nothing to report and no Python. */
        if (raised == 4 && self->n_nan_reads >= 0 && kiln_invalid_void(self, args) == 1)
            Py_RETURN_NONE;
        return kiln_fp_report(self->on_fp, raised, args, nargs);
    }
    Py_RETURN_NONE;
fallback:
    return PyObject_Vectorcall(self->fallback, args, nargsf, kwnames);
}

static PyObject *
launcher_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    PyObject *address, *ndarray, *fallback, *owner, *on_fp = Py_None, *nan_reads = Py_None;
    PyObject *scalars = Py_None;
    const char *codes, *results = NULL;
    int keep_gil = 0;
    unsigned int fp_mask = 7;
    if (kiln_no_keywords(kwargs, "Launcher") < 0
            || !PyArg_ParseTuple(args, "O!sO!OO|zpOIOO", &PyLong_Type, &address, &codes, &PyType_Type, &ndarray,
                                 &fallback, &owner, &results, &keep_gil, &on_fp, &fp_mask, &nan_reads,
                                 &scalars))
        return NULL;
    size_t n = strlen(codes);
    Py_ssize_t reads[KILN_MAX_ARGS];
    Py_ssize_t n_reads = -1;
    if (nan_reads != Py_None) {
        if (!PyTuple_Check(nan_reads) || PyTuple_GET_SIZE(nan_reads) > (Py_ssize_t)n) {
            PyErr_SetString(PyExc_ValueError, "Launcher: nan_reads must be a tuple of argument positions");
            return NULL;
        }
        n_reads = PyTuple_GET_SIZE(nan_reads);
        if (kiln_ssize_items(nan_reads, reads) < 0)
            return NULL;
        for (Py_ssize_t k = 0; k < n_reads; k++)
            if (reads[k] < 0 || reads[k] >= (Py_ssize_t)n) {
                PyErr_SetString(PyExc_ValueError, "Launcher: nan_reads position out of range");
                return NULL;
            }
    }
    if (n > KILN_MAX_ARGS || strspn(codes, "pwdfbBhHiIqQ") != n
            || (results == NULL && strchr(codes, 'w') != NULL)) {
        PyErr_SetString(PyExc_ValueError, "Launcher: unsupported argument codes");
        return NULL;
    }
    size_t nresults = results != NULL ? strlen(results) : 0;
    if (results != NULL && (nresults > n || strspn(results, "qQdf?") != nresults)) {
        PyErr_SetString(PyExc_ValueError, "Launcher: unsupported result codes");
        return NULL;
    }
    /* scalars: per result, None (its Python value) or (NumPy scalar type, struct code);
     * a type whose scalars are not laid out as numpy_scalar writes them is refused. */
    PyTypeObject *scalar_types[KILN_MAX_ARGS] = {NULL};
    char scalar_codes[KILN_MAX_ARGS] = {0};
    if (scalars != Py_None) {
        if (!PyTuple_Check(scalars) || PyTuple_GET_SIZE(scalars) != (Py_ssize_t)nresults) {
            PyErr_SetString(PyExc_ValueError, "Launcher: scalars must be a tuple, one item per result");
            return NULL;
        }
        for (size_t k = 0; k < nresults; k++) {
            PyObject *item = PyTuple_GET_ITEM(scalars, k);
            if (item == Py_None)
                continue;
            const char *code;
            PyTypeObject *t;
            if (!PyTuple_Check(item) || !PyArg_ParseTuple(item, "O!s", &PyType_Type, &t, &code))
                return NULL;
            int ok = strlen(code) == 1 ? kiln_scalar_layout_ok(t, code[0]) : 0;
            if (ok < 0)
                return NULL;
            if (!ok) {
                PyErr_Format(PyExc_ValueError, "Launcher: cannot make %s scalars", t->tp_name);
                return NULL;
            }
            scalar_types[k] = t;
            scalar_codes[k] = code[0];
        }
    }
    void *entry = PyLong_AsVoidPtr(address);
    if (entry == NULL) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "Launcher: null entry");
        return NULL;
    }
    Launcher *self = (Launcher *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->entry = entry;
    memcpy(self->codes, codes, n + 1);
    self->nargs = (Py_ssize_t)n;
    self->nresults = results != NULL ? (Py_ssize_t)nresults : -1;
    self->keep_gil = keep_gil;
    if (results != NULL)
        memcpy(self->results, results, nresults + 1);
    Py_INCREF(ndarray); self->ndarray = ndarray;
    Py_INCREF(fallback); self->fallback = fallback;
    Py_INCREF(owner); self->owner = owner;
    Py_INCREF(on_fp); self->on_fp = on_fp;
    Py_INCREF(scalars); self->scalars = scalars;   /* (keeps scalar_types alive) */
    memcpy(self->scalar_types, scalar_types, sizeof(scalar_types));
    memcpy(self->scalar_codes, scalar_codes, sizeof(scalar_codes));
    self->fp_mask = fp_mask;
    self->n_nan_reads = (int)n_reads;
    for (Py_ssize_t k = 0; k < n_reads; k++)
        self->nan_reads[k] = (unsigned char)reads[k];
    self->vectorcall = launcher_vectorcall;
    return (PyObject *)self;
}

#define LAUNCHER_FIELDS(X) X(ndarray) X(fallback) X(owner) X(on_fp) X(scalars)
KILN_GC_FUNCTIONS(launcher, Launcher, LAUNCHER_FIELDS, )

static PyObject *
launcher_codes(PyObject *op, void *closure)
{
    (void)closure;
    return PyUnicode_FromString(((Launcher *)op)->codes);
}

static PyObject *
launcher_keep_gil(PyObject *op, void *closure)
{
    (void)closure;
    return PyBool_FromLong(((Launcher *)op)->keep_gil);
}

static PyGetSetDef launcher_getset[] = {
    {"codes", launcher_codes, NULL, "one letter per argument", NULL},
    {"keep_gil", launcher_keep_gil, NULL, "runs the kernel without releasing the GIL", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject LauncherType = KILN_VECTORCALL_TYPE(
    launcher, Launcher, "A C++ kernel called through its packed entry (see launch.c).",
    .tp_getset = launcher_getset);
static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, KILN_MODULE_NAME_STR, NULL, -1, NULL,
};

PyMODINIT_FUNC
KILN_INIT(KILN_MODULE_NAME)(void)
{
    PyTypeObject *types[] = {&LauncherType, &kiln_LayoutsType, &kiln_ErrorModeType, NULL};
    return kiln_module_create(&module_def, types);
}
