/* kiln's kernel launcher in C (launch.c lists the parts): a loop runner's results, the
 * values its entry writes over the first slots, as Python or NumPy scalars. */
#include "launch.h"

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
int
kiln_scalar_layout_ok(PyTypeObject *type, char code)
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
PyObject *
kiln_runner_results(Launcher *self, int64_t rc, const kiln_slot *slots)
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

/* A runner's answer for a read-only 'w' array: ``(4, None, ...)``, nothing run. */
PyObject *
kiln_runner_refused(Launcher *self)
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
