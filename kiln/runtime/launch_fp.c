/* kiln's kernel launcher in C (launch.c lists the parts): NumPy's floating-point
 * semantics around a launch: the flags a kernel raised, reported to runtime/fpwarn.py
 * (launch.c's doc, "Floating-point flags"), and ErrorMode, the wrapper's check of
 * NumPy's floating-point error mode. */
#include "launch.h"

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
int
kiln_invalid_void(Launcher *self, PyObject *const *args)
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
PyObject *
kiln_fp_report(PyObject *on_fp, unsigned raised, PyObject *const *args, Py_ssize_t nargs)
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

PyTypeObject kiln_ErrorModeType = KILN_VECTORCALL_TYPE(
    error_mode, ErrorMode, "Does NumPy's floating-point error mode trap? (see launch.c)");
