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
 * Layouts (below) is the wrapper's check of its input shapes and strides, in one call;
 * ErrorMode its check of NumPy's floating-point error mode (runtime/fpmode.py).
 */
#include "cext.h"

typedef union {
    void *p;
    int64_t i;
    uint64_t u;
    double d;
    float f;
} kiln_slot;

#define KILN_MAX_ARGS 64

typedef struct {
    PyObject_HEAD
    void *entry;
    char codes[KILN_MAX_ARGS + 1];
    Py_ssize_t nargs;
    char results[KILN_MAX_ARGS + 1];   /* a runner's result codes (see runner_results) */
    Py_ssize_t nresults;              /* -1: a kernel (void entry, the call gives None) */
    int keep_gil;                     /* a tiny kernel: run it without releasing the GIL */
    PyObject *ndarray, *fallback, *owner;
    PyObject *scalars;                /* a runner's (type, code) per result, or None (below) */
    PyTypeObject *scalar_types[KILN_MAX_ARGS];   /* NULL: the result is a Python value */
    char scalar_codes[KILN_MAX_ARGS];
    PyObject *on_fp;                  /* on_fp(flags, *args) when the kernel raised a flag, or None */
    unsigned fp_mask;                 /* the flags on_fp is called for */
    int n_nan_reads;                  /* -1: none; else the arguments whose NaN voids "invalid" */
    unsigned char nan_reads[KILN_MAX_ARGS];
    vectorcallfunc vectorcall;
} Launcher;

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
    if (PyFloat_Check(v) || !PyIndex_Check(v))
        return 0;
    PyObject *n = PyNumber_Index(v);
    if (n == NULL) {
        PyErr_Clear();
        return 0;
    }
    int overflow = 0;
    long long x = PyLong_AsLongLongAndOverflow(n, &overflow);
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

/* The byte width of a NumPy scalar's value for a struct code, 0 for another code. */
static int
scalar_width(char code)
{
    switch (code) {
    case 'b': case 'B': return 1;
    case 'h': case 'H': return 2;
    case 'i': case 'I': case 'f': return 4;
    case 'q': case 'Q': case 'd': return 8;
    default: return 0;
    }
}

/* A NumPy scalar of ``type`` holding ``slot`` (an integer's value in .i, sign- or
 * zero-extended; .u for 'Q', .d, .f), made as NumPy's PyArray_Scalar makes one: tp_alloc,
 * then the value just after the object head (``obval`` of every numeric scalar's struct,
 * NumPy 1 and 2 alike; launcher_new checked it against a scalar the type made itself).
 * NumPy's own ``np.uint32(v)`` from a Python int took 0.2-0.4 us, a third of a one-byte
 * crc32 call; this takes ~30 ns. */
static PyObject *
numpy_scalar(PyTypeObject *type, char code, const kiln_slot *slot)
{
    PyObject *obj = type->tp_alloc(type, 0);
    if (obj == NULL)
        return NULL;
    char *dst = (char *)obj + sizeof(PyObject);
    switch (code) {
    case 'b': *(int8_t *)dst = (int8_t)slot->i; break;
    case 'B': *(uint8_t *)dst = (uint8_t)slot->i; break;
    case 'h': *(int16_t *)dst = (int16_t)slot->i; break;
    case 'H': *(uint16_t *)dst = (uint16_t)slot->i; break;
    case 'i': *(int32_t *)dst = (int32_t)slot->i; break;
    case 'I': *(uint32_t *)dst = (uint32_t)slot->i; break;
    case 'q': *(int64_t *)dst = slot->i; break;
    case 'Q': *(uint64_t *)dst = slot->u; break;
    case 'd': *(double *)dst = slot->d; break;
    default: *(float *)dst = slot->f; break;
    }
    return obj;
}

/* Is ``type`` a scalar type of the code's width (its ``itemsize``) whose ``type(1)``
 * (``type(0.5)`` for a float code) holds its value where numpy_scalar writes it, and
 * equals (==, hash) the one numpy_scalar makes? 1 yes, 0 no (the runner converts in
 * Python), -1 an error. */
static int
scalar_layout_ok(PyTypeObject *type, char code)
{
    int width = scalar_width(code);
    if (width == 0 || type->tp_itemsize != 0
            || type->tp_basicsize < (Py_ssize_t)(sizeof(PyObject) + width))
        return 0;
    int is_float = code == 'd' || code == 'f';
    PyObject *arg = is_float ? PyFloat_FromDouble(0.5) : PyLong_FromLong(1);
    if (arg == NULL)
        return -1;
    PyObject *probe = PyObject_CallOneArg((PyObject *)type, arg);
    Py_DECREF(arg);
    if (probe == NULL) {   /* not a type that takes the value: not one to make */
        PyErr_Clear();
        return 0;
    }
    kiln_slot want;
    memset(&want, 0, sizeof(want));
    if (code == 'd')
        want.d = 0.5;
    else if (code == 'f')
        want.f = 0.5f;
    else
        want.i = 1;
    PyObject *size = PyObject_GetAttrString(probe, "itemsize");   /* (NumPy's scalars have it) */
    long itemsize = size != NULL ? PyLong_AsLong(size) : -1;
    Py_XDECREF(size);
    PyErr_Clear();
    PyObject *made = Py_TYPE(probe) == type && itemsize == width ? numpy_scalar(type, code, &want) : NULL;
    int ok = made != NULL
        && memcmp((char *)probe + sizeof(PyObject), (char *)made + sizeof(PyObject), width) == 0;
    if (ok) {   /* and the scalar made here is the same value to Python (==, hash) */
        ok = PyObject_RichCompareBool(probe, made, Py_EQ);
        if (ok == 1 && PyObject_Hash(probe) != PyObject_Hash(made))
            ok = 0;
    }
    Py_DECREF(probe);
    Py_XDECREF(made);
    if (ok < 0)
        return -1;
    return ok;
}

/* A loop runner's results: its entry, ``int64_t entry(kiln_slot *a)``, returns a code and
 * writes its results over the first slots; the call gives ``(code, result, ...)``, each
 * result as its code says: 'q' int64, 'Q' uint64, 'd' double, 'f' float, '?' bool; or,
 * where the runner was given ``scalars``, the NumPy scalar of its type. */
static PyObject *
runner_results(Launcher *self, int64_t rc, const kiln_slot *slots)
{
    PyObject *out = PyTuple_New(1 + self->nresults);
    if (out == NULL)
        return NULL;
    PyObject *v = PyLong_FromLongLong(rc);
    if (v == NULL)
        goto error;
    PyTuple_SET_ITEM(out, 0, v);
    for (Py_ssize_t k = 0; k < self->nresults; k++) {
        if (self->scalar_types[k] != NULL) {
            v = numpy_scalar(self->scalar_types[k], self->scalar_codes[k], &slots[k]);
            if (v == NULL)
                goto error;
            PyTuple_SET_ITEM(out, 1 + k, v);
            continue;
        }
        switch (self->results[k]) {
        case 'Q': v = PyLong_FromUnsignedLongLong(slots[k].u); break;
        case 'd': v = PyFloat_FromDouble(slots[k].d); break;
        case 'f': v = PyFloat_FromDouble((double)slots[k].f); break;
        case '?': v = PyBool_FromLong(slots[k].i != 0); break;
        default: v = PyLong_FromLongLong(slots[k].i); break;
        }
        if (v == NULL)
            goto error;
        PyTuple_SET_ITEM(out, 1 + k, v);
    }
    return out;
error:
    Py_DECREF(out);
    return NULL;
}

/* Does ``a`` hold a NaN? 1 yes, 0 no, -1 cannot tell here (a dtype other than native
 * float32/float64: the handler decides). A strided walk over any layout. */
static int
array_has_nan(const kiln_array_head *a)
{
    const char *descr = (const char *)a->descr;
    /* PyArray_Descr (NumPy 1 and 2 alike): PyObject_HEAD, typeobj, then kind, type,
     * byteorder, one more char, then int type_num. */
    const char *chars = descr + sizeof(PyObject) + sizeof(PyTypeObject *);
    int type_num = *(const int *)(chars + 4);
    if (chars[0] != 'f' || chars[2] == '>' || (type_num != 11 && type_num != 12))
        return chars[0] == 'b' || chars[0] == 'i' || chars[0] == 'u' ? 0 : -1;
    Py_ssize_t index[64] = {0};
    if (a->nd > 64)
        return -1;
    for (int d = 0; d < a->nd; d++)
        if (a->dimensions[d] == 0)
            return 0;
    const char *p = a->data;
    for (;;) {   /* the innermost axis as a loop, the outer ones as an odometer */
        Py_ssize_t n = a->nd ? a->dimensions[a->nd - 1] : 1;
        Py_ssize_t step = a->nd ? a->strides[a->nd - 1] : 0;
        if (type_num == 12) {
            for (Py_ssize_t i = 0; i < n; i++) {
                double v = *(const double *)(p + i * step);
                if (v != v)
                    return 1;
            }
        }
        else {
            for (Py_ssize_t i = 0; i < n; i++) {
                float v = *(const float *)(p + i * step);
                if (v != v)
                    return 1;
            }
        }
        int d = a->nd - 2;
        for (; d >= 0; d--) {
            p += a->strides[d];
            if (++index[d] < a->dimensions[d])
                break;
            p -= a->strides[d] * a->dimensions[d];
            index[d] = 0;
        }
        if (d < 0)
            return 0;
    }
}

/* Is the kernel's "invalid" flag void because an argument it reads holds a NaN (its
 * signalling comparisons raise the flag on a NaN with no invalid operation)? 1 void,
 * 0 not, -1 cannot tell (the handler looks). */
static int
invalid_void(Launcher *self, PyObject *const *args)
{
    int unknown = 0;
    for (int k = 0; k < self->n_nan_reads; k++) {
        PyObject *v = args[self->nan_reads[k]];
        int r;
        if (PyFloat_Check(v)) {
            double x = PyFloat_AS_DOUBLE(v);
            r = x != x;
        }
        else if (PyObject_TypeCheck(v, (PyTypeObject *)self->ndarray))
            r = array_has_nan((const kiln_array_head *)v);
        else
            r = PyLong_Check(v) ? 0 : -1;
        if (r == 1)
            return 1;
        unknown |= r < 0;
    }
    return unknown ? -1 : 0;
}

/* on_fp(flags, *args): the kernel's flags and the arguments it was called with. */
static PyObject *
fp_report(PyObject *on_fp, unsigned raised, PyObject *const *args, Py_ssize_t nargs)
{
    PyObject *argv[KILN_MAX_ARGS + 1];
    PyObject *flags = PyLong_FromUnsignedLong(raised);
    if (flags == NULL)
        return NULL;
    argv[0] = flags;
    for (Py_ssize_t k = 0; k < nargs; k++)
        argv[k + 1] = args[k];
    PyObject *r = PyObject_Vectorcall(on_fp, argv, nargs + 1, NULL);
    Py_DECREF(flags);
    return r;
}

/* A runner's answer for a read-only 'w' array: ``(4, None, ...)``, nothing run. */
static PyObject *
runner_refused(Launcher *self)
{
    PyObject *out = PyTuple_New(1 + self->nresults);
    if (out == NULL)
        return NULL;
    PyObject *rc = PyLong_FromLong(4);
    if (rc == NULL) {
        Py_DECREF(out);
        return NULL;
    }
    PyTuple_SET_ITEM(out, 0, rc);
    for (Py_ssize_t k = 0; k < self->nresults; k++) {
        Py_INCREF(Py_None);
        PyTuple_SET_ITEM(out, 1 + k, Py_None);
    }
    return out;
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
                return runner_refused(self);
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
        return runner_results(self, rc, slots);
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
        if (raised == 4 && self->n_nan_reads >= 0 && invalid_void(self, args) == 1)
            Py_RETURN_NONE;
        return fp_report(self->on_fp, raised, args, nargs);
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
            int ok = strlen(code) == 1 ? scalar_layout_ok(t, code[0]) : 0;
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

/* ---- the wrapper's layout check ------------------------------------------------------- */

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

static PyTypeObject LayoutsType = KILN_VECTORCALL_TYPE(
    layouts, Layouts, "The input layouts a wrapper's kernels were built for (see launch.c).");

/* ---- NumPy's floating-point error mode ------------------------------------------------- */

/* ErrorMode(contextvar, compute[, warnings, filters_raise, not_all_ignored])() -> bool:
 * does NumPy's current error mode trap, or (with the warnings module given) would a
 * RuntimeWarning NumPy emits be raised by the warning filters (see fpmode.py)? The mode
 * is an object in a context variable, replaced whenever np.errstate or np.seterr changes
 * it; the answer of compute(mode) is kept for the last mode seen. The filter list is
 * re-read by filters_raise(filters) only when warnings.filters is another list, or its
 * length or first entry changed (catch_warnings installs a new list; simplefilter and
 * filterwarnings insert at the front or append); where it raises, not_all_ignored()
 * decides (np.errstate(all='ignore') emits nothing to raise). The wrapper's check on
 * every call is one context-variable read and one attribute read. */
typedef struct {
    PyObject_HEAD
    PyObject *var, *compute, *mode, *answer;
    PyObject *warnings, *filters_raise, *not_all_ignored, *filters, *first, *raises;
    Py_ssize_t nfilters;
    vectorcallfunc vectorcall;
} ErrorMode;

static PyObject *str_filters = NULL;

static PyObject *
error_mode_filters(ErrorMode *self)
{
    /* self->warnings is the module's dict; str_filters the interned key */
    PyObject *filters = PyDict_GetItemWithError(self->warnings, str_filters);
    if (filters == NULL) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_AttributeError, "module 'warnings' has no attribute 'filters'");
        return NULL;
    }
    Py_INCREF(filters);
    if (PyList_CheckExact(filters) && filters == self->filters && self->raises != NULL
            && PyList_GET_SIZE(filters) == self->nfilters
            && (self->nfilters == 0 || PyList_GET_ITEM(filters, 0) == self->first)) {
        Py_DECREF(filters);
    } else {
        PyObject *raises = PyObject_CallOneArg(self->filters_raise, filters);
        if (raises == NULL) {
            Py_DECREF(filters);
            return NULL;
        }
        Py_ssize_t n = PyList_CheckExact(filters) ? PyList_GET_SIZE(filters) : -1;
        PyObject *first = n > 0 ? PyList_GET_ITEM(filters, 0) : NULL;
        Py_XINCREF(first);
        Py_XSETREF(self->first, first);
        Py_XSETREF(self->filters, filters);
        Py_XSETREF(self->raises, raises);
        self->nfilters = n;
    }
    if (!PyObject_IsTrue(self->raises))
        Py_RETURN_FALSE;
    return PyObject_CallNoArgs(self->not_all_ignored);
}

static PyObject *
error_mode_vectorcall(PyObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    (void)args;
    ErrorMode *self = (ErrorMode *)op;
    if (PyVectorcall_NARGS(nargsf) != 0 || (kwnames != NULL && PyTuple_GET_SIZE(kwnames) != 0)) {
        PyErr_SetString(PyExc_TypeError, "ErrorMode() takes no arguments");
        return NULL;
    }
    PyObject *mode = NULL;
    if (PyContextVar_Get(self->var, Py_None, &mode) < 0)
        return NULL;
    if (mode != self->mode || self->answer == NULL) {
        PyObject *answer = PyObject_CallOneArg(self->compute, mode);
        if (answer == NULL) {
            Py_DECREF(mode);
            return NULL;
        }
        Py_XSETREF(self->mode, mode);
        Py_XSETREF(self->answer, answer);
    } else {
        Py_DECREF(mode);
    }
    if (self->answer != Py_False || self->warnings == NULL) {
        Py_INCREF(self->answer);
        return self->answer;
    }
    return error_mode_filters(self);
}

static PyObject *
error_mode_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    PyObject *var, *compute, *warnings_module = NULL, *filters_raise = NULL, *not_all_ignored = NULL;
    if (kiln_no_keywords(kwargs, "ErrorMode") < 0
            || !PyArg_ParseTuple(args, "O!O|OOO", &PyContextVar_Type, &var, &compute,
                                 &warnings_module, &filters_raise, &not_all_ignored))
        return NULL;
    if (warnings_module != NULL && (filters_raise == NULL || not_all_ignored == NULL)) {
        PyErr_SetString(PyExc_TypeError, "ErrorMode(): the warnings module needs filters_raise "
                                         "and not_all_ignored");
        return NULL;
    }
    PyObject *namespace = NULL;
    if (warnings_module != NULL) {
        if (!PyModule_Check(warnings_module)) {
            PyErr_SetString(PyExc_TypeError, "ErrorMode(): warnings must be a module");
            return NULL;
        }
        namespace = PyModule_GetDict(warnings_module);   /* borrowed */
        if (str_filters == NULL && (str_filters = PyUnicode_InternFromString("filters")) == NULL)
            return NULL;
    }
    ErrorMode *self = (ErrorMode *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    Py_INCREF(var); self->var = var;
    Py_INCREF(compute); self->compute = compute;
    Py_XINCREF(namespace); self->warnings = namespace;
    Py_XINCREF(filters_raise); self->filters_raise = filters_raise;
    Py_XINCREF(not_all_ignored); self->not_all_ignored = not_all_ignored;
    self->nfilters = -1;
    self->vectorcall = error_mode_vectorcall;
    return (PyObject *)self;
}

#define ERROR_MODE_FIELDS(X) X(var) X(compute) X(mode) X(answer) X(warnings) X(filters_raise) \
    X(not_all_ignored) X(filters) X(first) X(raises)
KILN_GC_FUNCTIONS(error_mode, ErrorMode, ERROR_MODE_FIELDS, )

static PyTypeObject ErrorModeType = KILN_VECTORCALL_TYPE(
    error_mode, ErrorMode, "Does NumPy's floating-point error mode trap? (see launch.c)");

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, KILN_MODULE_NAME_STR, NULL, -1, NULL,
};

PyMODINIT_FUNC
KILN_INIT(KILN_MODULE_NAME)(void)
{
    PyTypeObject *types[] = {&LauncherType, &LayoutsType, &ErrorModeType, NULL};
    return kiln_module_create(&module_def, types);
}
