/* What the parts of kiln's kernel launcher in C share (launch.c lists the parts; an
 * internal header: nothing outside kiln/runtime/launch*.c includes it). Each part is its
 * own translation unit: what one part defines for another is declared here with a
 * ``kiln_`` name and hidden visibility (the module exports its init function alone). A
 * launch's hot path (arguments into slots, the kernel's call) stays in launch.c; the
 * calls into other parts are a runner's results and a raised floating-point flag. */
#ifndef KILN_LAUNCH_H
#define KILN_LAUNCH_H

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

#pragma GCC visibility push(hidden)

/* launch_results.c */
int kiln_scalar_layout_ok(PyTypeObject *type, char code);
PyObject *kiln_runner_results(Launcher *self, int64_t rc, const kiln_slot *slots);
PyObject *kiln_runner_refused(Launcher *self);

/* launch_fp.c */
int kiln_invalid_void(Launcher *self, PyObject *const *args);
PyObject *kiln_fp_report(PyObject *on_fp, unsigned raised, PyObject *const *args, Py_ssize_t nargs);
extern PyTypeObject kiln_ErrorModeType;

/* launch_layouts.c */
extern PyTypeObject kiln_LayoutsType;

#pragma GCC visibility pop

#endif
