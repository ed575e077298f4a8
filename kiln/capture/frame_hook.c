/* kiln's PEP 523 frame-evaluation hook for CPython 3.11 (built by frame_hook.py with cffi).
 *
 * Code objects kiln flagged (helpers whose inlining broke, functions called inside a loop
 * that runs as Python) are intercepted before their frame starts, while the hook is active
 * on the calling thread: kiln's dispatcher (kiln.capture.frame_hook._dispatch) gets the
 * function and its arguments and returns a replacement callable, or None to run the
 * frame normally. The hook is installed only while some thread runs compiled code
 * (kiln_hook_enter/exit), so the rest of the program keeps CPython's inlined calls.
 *
 * Rules learned the hard way (measured-here.md section 4):
 *  - throw_flag set (a generator being closed or thrown into): run the default evaluator
 *    at once; never touch the pending exception.
 *  - only frames owned by the thread and not yet started are intercepted; the original
 *    frame is never run when replaced (the caller, _PyEval_Vector, clears and pops it).
 *  - while the dispatcher runs, nothing is intercepted on that thread (re-entrancy); while a
 *    replacement for code C runs, C itself is not intercepted again (its eager fallback).
 * cffi releases the GIL around calls into this library: every entry point takes it back.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define Py_BUILD_CORE
#include "internal/pycore_frame.h"
#undef Py_BUILD_CORE

static Py_ssize_t extra_index = -1;
static PyObject *dispatch = NULL;
static long active_threads = 0;
static long long intercepted = 0;
static char MARK;

static _Thread_local int depth = 0;
static _Thread_local int in_callback = 0;
static _Thread_local PyCodeObject *running = NULL;

static PyObject *kiln_eval(PyThreadState *ts, _PyInterpreterFrame *frame, int throw_flag)
{
    if (throw_flag || depth == 0 || in_callback)
        return _PyEval_EvalFrameDefault(ts, frame, throw_flag);
    PyCodeObject *code = frame->f_code;
    if (code == running || frame->owner != FRAME_OWNED_BY_THREAD || _PyInterpreterFrame_LASTI(frame) >= 0)
        return _PyEval_EvalFrameDefault(ts, frame, throw_flag);
    void *extra = NULL;
    if (_PyCode_GetExtra((PyObject *)code, extra_index, &extra) < 0) {
        PyErr_Clear();
        return _PyEval_EvalFrameDefault(ts, frame, throw_flag);
    }
    if (extra != (void *)&MARK)
        return _PyEval_EvalFrameDefault(ts, frame, throw_flag);

    int flags = code->co_flags;
    Py_ssize_t n = code->co_argcount + code->co_kwonlyargcount
                   + ((flags & CO_VARARGS) != 0) + ((flags & CO_VARKEYWORDS) != 0);
    PyObject *raw = PyTuple_New(n);
    if (raw == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *v = frame->localsplus[i];
        if (v == NULL)
            v = Py_None;
        Py_INCREF(v);
        PyTuple_SET_ITEM(raw, i, v);
    }
    in_callback = 1;
    PyObject *replacement = PyObject_CallFunctionObjArgs(dispatch, (PyObject *)frame->f_func, raw, NULL);
    in_callback = 0;
    if (replacement == NULL) {
        Py_DECREF(raw);
        return NULL;
    }
    if (replacement == Py_None) {
        Py_DECREF(replacement);
        Py_DECREF(raw);
        return _PyEval_EvalFrameDefault(ts, frame, throw_flag);
    }
    intercepted++;
    PyCodeObject *saved = running;
    running = code;
    PyObject *result = PyObject_CallOneArg(replacement, raw);
    running = saved;
    Py_DECREF(replacement);
    Py_DECREF(raw);
    return result;
}

int kiln_hook_init(void)
{
    PyGILState_STATE g = PyGILState_Ensure();
    int rc = 0;
    if (extra_index < 0)
        extra_index = _PyEval_RequestCodeExtraIndex(NULL);
    if (dispatch == NULL) {
        PyObject *m = PyImport_ImportModule("kiln.capture.frame_hook");
        if (m != NULL) {
            dispatch = PyObject_GetAttrString(m, "_dispatch");
            Py_DECREF(m);
        }
    }
    if (extra_index < 0 || dispatch == NULL) {
        PyErr_Clear();
        rc = -1;
    }
    PyGILState_Release(g);
    return rc;
}

int kiln_hook_flag(intptr_t code, int on)
{
    PyGILState_STATE g = PyGILState_Ensure();
    int rc = _PyCode_SetExtra((PyObject *)code, extra_index, on ? (void *)&MARK : NULL);
    if (rc < 0)
        PyErr_Clear();
    PyGILState_Release(g);
    return rc;
}

static _PyFrameEvalFunction previous = NULL;   /* another PEP 523 user's hook, restored */

void kiln_hook_enter(void)
{
    PyGILState_STATE g = PyGILState_Ensure();
    if (depth++ == 0 && active_threads++ == 0) {
        PyInterpreterState *interp = PyInterpreterState_Get();
        previous = _PyInterpreterState_GetEvalFrameFunc(interp);
        _PyInterpreterState_SetEvalFrameFunc(interp, kiln_eval);
    }
    PyGILState_Release(g);
}

void kiln_hook_exit(void)
{
    PyGILState_STATE g = PyGILState_Ensure();
    if (depth > 0 && --depth == 0 && --active_threads == 0) {
        PyInterpreterState *interp = PyInterpreterState_Get();
        if (_PyInterpreterState_GetEvalFrameFunc(interp) == kiln_eval)
            _PyInterpreterState_SetEvalFrameFunc(interp, previous ? previous : _PyEval_EvalFrameDefault);
    }
    PyGILState_Release(g);
}

long long kiln_hook_intercepted(void)
{
    return intercepted;
}

int kiln_hook_installed(void)
{
    PyGILState_STATE g = PyGILState_Ensure();
    int on = _PyInterpreterState_GetEvalFrameFunc(PyInterpreterState_Get()) == kiln_eval;
    PyGILState_Release(g);
    return on;
}

int kiln_hook_depth(void)
{
    return depth;
}
