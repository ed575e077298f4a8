/* kiln's PEP 523 frame-evaluation hook for CPython 3.11, 3.12 and 3.13 (built by
 * frame_hook.py with cffi).
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
 *  - from 3.12 the eval function owns the frame it was given: one it does not run must be
 *    cleared and popped here (3.11's caller, _PyEval_Vector, did it). Skipping this keeps
 *    every intercepted call's arguments alive and leaks its data-stack slots.
 *  - a flagged code whose compiled version compiles nothing for the arguments at hand is
 *    run here, without asking the dispatcher (runs_as_python below): asking cost ~9 us a
 *    call (scikit-learn's euclidean_distances: 44 such helper calls per call).
 * cffi releases the GIL around calls into this library: every entry point takes it back.
 *
 * What differs per version (each use goes through the macros below):
 *   3.11  f_func, f_code; a fresh frame has LASTI -1; the caller clears and pops
 *   3.12  f_funcobj, f_code; LASTI -1; clear/pop copied from CPython (not exported)
 *   3.13  f_funcobj, f_executable; LASTI 0; _PyEval_FrameClearAndPop (exported)
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define Py_BUILD_CORE
#include "internal/pycore_frame.h"
#if PY_VERSION_HEX >= 0x030D0000
#include "internal/pycore_ceval.h"
#endif
#undef Py_BUILD_CORE
#include "cext.h"   /* kiln_array_head, kiln_size_at_most */

#if PY_VERSION_HEX < 0x030B0000 || PY_VERSION_HEX >= 0x030E0000
#error "kiln's frame hook knows CPython 3.11-3.13 frames; check the frame layout and clear/pop logic of this version first"
#endif
#ifdef Py_GIL_DISABLED
#error "kiln's frame hook does not support free-threaded CPython builds"
#endif

#if PY_VERSION_HEX >= 0x030D0000
#define FRAME_CODE(f) ((PyCodeObject *)(f)->f_executable)
#define FRAME_FUNC(f) ((PyObject *)(f)->f_funcobj)
#define FRAME_STARTED(f) (_PyInterpreterFrame_LASTI(f) > 0)
#elif PY_VERSION_HEX >= 0x030C0000
#define FRAME_CODE(f) ((f)->f_code)
#define FRAME_FUNC(f) ((PyObject *)(f)->f_funcobj)
#define FRAME_STARTED(f) (_PyInterpreterFrame_LASTI(f) >= 0)
#else
#define FRAME_CODE(f) ((f)->f_code)
#define FRAME_FUNC(f) ((PyObject *)(f)->f_func)
#define FRAME_STARTED(f) (_PyInterpreterFrame_LASTI(f) >= 0)
#endif

/* Release a thread-owned frame that never started and has no frame object (the hook only
 * intercepts those), after its eval function decided not to run it. */
static void clear_and_pop(PyThreadState *ts, _PyInterpreterFrame *frame)
{
#if PY_VERSION_HEX >= 0x030D0000
    _PyEval_FrameClearAndPop(ts, frame);
#elif PY_VERSION_HEX >= 0x030C0000
    /* CPython 3.12's clear_thread_frame (Python/ceval.c): _PyFrame_ClearExceptCode
     * (Python/frame.c; no frame object here, so no ownership transfer), the code's
     * reference, then _PyThreadState_PopFrame (Python/pystate.c). */
    ts->c_recursion_remaining--;
    for (int i = 0; i < frame->stacktop; i++)
        Py_XDECREF(frame->localsplus[i]);
    Py_XDECREF(frame->f_locals);
    Py_DECREF(frame->f_funcobj);
    Py_DECREF(frame->f_code);
    ts->c_recursion_remaining++;
    PyObject **base = (PyObject **)frame;
    _PyStackChunk *chunk = ts->datastack_chunk;
    if (base == &chunk->data[0]) {
        /* The frame opened this chunk: free it, go back to the previous one (the root
         * chunk is never popped: its first slot is skipped). */
        _PyStackChunk *previous = chunk->previous;
        ts->datastack_top = &previous->data[previous->top];
        ts->datastack_chunk = previous;
        ts->datastack_limit = (PyObject **)(((char *)previous) + previous->size);
        PyObjectArenaAllocator arena;
        PyObject_GetArenaAllocator(&arena);
        arena.free(arena.ctx, chunk, chunk->size);
    }
    else {
        ts->datastack_top = base;
    }
#else
    (void)ts;
    (void)frame;   /* 3.11: _PyEval_Vector clears and pops it after we return */
#endif
}

static Py_ssize_t extra_index = -1;
static PyObject *dispatch = NULL;
static long active_threads = 0;
static long long intercepted = 0;
static long long skipped = 0;
static char MARK;

static _Thread_local int depth = 0;
static _Thread_local int in_callback = 0;
static _Thread_local PyCodeObject *running = NULL;
/* The compiled-function family whose segment runs now on this thread (0: none known):
 * verdicts are that family's (frame_hook.run_with). */
static _Thread_local intptr_t family = 0;
/* A second code extra slot: a borrowed tuple of verdicts, kept alive by frame_hook.py's
 * _verdicts, each (family, argument types, ((position, dtype), ...) of arrays, size
 * limit): calls of that family whose argument slots hold exactly these types, arrays of
 * these dtypes of at most ``limit`` elements, run as Python (the family's compiled
 * helper compiled nothing for them); types None: every call of that family (another
 * family flagged the code). */
static Py_ssize_t verdict_index = -1;
static PyTypeObject *ndarray_type = NULL;

/* Is this code flagged? Most calls the hook sees are not: the test reads the code's
 * extra slot directly (what _PyCode_GetExtra does after its argument checks), before any
 * thread-local state. Measured on fib(20) (benchmarks/graph_break_print.py), kiln's hook
 * then costs what a do-nothing hook costs (kiln_hook_baseline) on 3.11-3.13; before, it
 * added ~0.3x on 3.12/3.13. The struct is private to Objects/codeobject.c, the same in 3.11-3.13. */
typedef struct {
    Py_ssize_t ce_size;
    void *ce_extras[1];
} kiln_code_extra;

static inline int is_flagged(PyCodeObject *code)
{
    kiln_code_extra *co_extra = (kiln_code_extra *)code->co_extra;
    return co_extra != NULL && extra_index < co_extra->ce_size
           && co_extra->ce_extras[extra_index] == (void *)&MARK;
}

static int verdict_holds(PyObject *v, PyObject **slots, Py_ssize_t n)
{
    if (!PyTuple_CheckExact(v) || PyTuple_GET_SIZE(v) != 4
            || PyLong_AsSsize_t(PyTuple_GET_ITEM(v, 0)) != (Py_ssize_t)family)
        return 0;
    PyObject *types = PyTuple_GET_ITEM(v, 1), *arrays = PyTuple_GET_ITEM(v, 2);
    if (types == Py_None)
        return 1;   /* the family never flagged the code: none of its calls is its helper */
    if (!PyTuple_CheckExact(types) || PyTuple_GET_SIZE(types) != n || !PyTuple_CheckExact(arrays))
        return 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *value = slots[i] == NULL ? Py_None : slots[i];
        if ((PyObject *)Py_TYPE(value) != PyTuple_GET_ITEM(types, i))
            return 0;
    }
    Py_ssize_t limit = PyLong_AsSsize_t(PyTuple_GET_ITEM(v, 3));
    if (limit < 0)
        return 0;
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(arrays); k++) {
        PyObject *item = PyTuple_GET_ITEM(arrays, k);
        if (!PyTuple_CheckExact(item) || PyTuple_GET_SIZE(item) != 2)
            return 0;
        Py_ssize_t i = PyLong_AsSsize_t(PyTuple_GET_ITEM(item, 0));
        if (i < 0 || i >= n || slots[i] == NULL || ndarray_type == NULL
                || Py_TYPE(slots[i]) != ndarray_type)
            return 0;
        kiln_array_head *a = (kiln_array_head *)slots[i];
        if (a->descr != PyTuple_GET_ITEM(item, 1) || !kiln_size_at_most(a, limit))
            return 0;
    }
    return 1;
}

/* Does a verdict of the running family say this call runs as Python? */
static int runs_as_python(PyCodeObject *code, _PyInterpreterFrame *frame, Py_ssize_t n)
{
    kiln_code_extra *co_extra = (kiln_code_extra *)code->co_extra;
    if (family == 0 || verdict_index < 0 || co_extra == NULL || verdict_index >= co_extra->ce_size)
        return 0;
    PyObject *verdicts = (PyObject *)co_extra->ce_extras[verdict_index];
    if (verdicts == NULL || !PyTuple_CheckExact(verdicts))
        return 0;
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(verdicts); k++)
        if (verdict_holds(PyTuple_GET_ITEM(verdicts, k), frame->localsplus, n))
            return 1;
    if (PyErr_Occurred())
        PyErr_Clear();
    return 0;
}

static PyObject *kiln_eval(PyThreadState *ts, _PyInterpreterFrame *frame, int throw_flag)
{
    PyCodeObject *code = FRAME_CODE(frame);
    if (!is_flagged(code) || throw_flag || depth == 0 || in_callback)
        return _PyEval_EvalFrameDefault(ts, frame, throw_flag);
    if (code == running || frame->owner != FRAME_OWNED_BY_THREAD || FRAME_STARTED(frame)
            || frame->frame_obj != NULL)
        return _PyEval_EvalFrameDefault(ts, frame, throw_flag);

    int flags = code->co_flags;
    Py_ssize_t n = code->co_argcount + code->co_kwonlyargcount
                   + ((flags & CO_VARARGS) != 0) + ((flags & CO_VARKEYWORDS) != 0);
    if (runs_as_python(code, frame, n)) {
        skipped++;
        return _PyEval_EvalFrameDefault(ts, frame, throw_flag);
    }
    PyObject *raw = PyTuple_New(n);
    if (raw == NULL) {
        clear_and_pop(ts, frame);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *v = frame->localsplus[i];
        if (v == NULL)
            v = Py_None;
        Py_INCREF(v);
        PyTuple_SET_ITEM(raw, i, v);
    }
    in_callback = 1;
    PyObject *replacement = PyObject_CallFunctionObjArgs(dispatch, FRAME_FUNC(frame), raw, NULL);
    in_callback = 0;
    if (replacement == NULL) {
        Py_DECREF(raw);
        clear_and_pop(ts, frame);
        return NULL;
    }
    if (replacement == Py_None) {
        Py_DECREF(replacement);
        Py_DECREF(raw);
        return _PyEval_EvalFrameDefault(ts, frame, throw_flag);
    }
    intercepted++;
    /* The arguments live on in raw: release the frame before the replacement runs, so its
     * own frames reuse the data-stack space. */
    clear_and_pop(ts, frame);
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
    if (verdict_index < 0)
        verdict_index = _PyEval_RequestCodeExtraIndex(NULL);
    if (ndarray_type == NULL) {
        PyObject *np = PyImport_ImportModule("numpy");
        if (np != NULL) {
            ndarray_type = (PyTypeObject *)PyObject_GetAttrString(np, "ndarray");
            Py_DECREF(np);
        }
    }
    if (dispatch == NULL) {
        PyObject *m = PyImport_ImportModule("kiln.capture.frame_hook");
        if (m != NULL) {
            dispatch = PyObject_GetAttrString(m, "_dispatch");
            Py_DECREF(m);
        }
    }
    if (extra_index < 0 || verdict_index < 0 || ndarray_type == NULL || dispatch == NULL) {
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

/* Set the verdicts of a code (a tuple its caller keeps alive, or 0 for none). */
int kiln_hook_verdicts(intptr_t code, intptr_t verdicts)
{
    PyGILState_STATE g = PyGILState_Ensure();
    int rc = _PyCode_SetExtra((PyObject *)code, verdict_index, (void *)verdicts);
    if (rc < 0)
        PyErr_Clear();
    PyGILState_Release(g);
    return rc;
}

/* The family running on this thread from now on; the previous one (restored after). */
intptr_t kiln_hook_family(intptr_t now)
{
    intptr_t before = family;
    family = now;
    return before;
}

long long kiln_hook_skipped(void)
{
    return skipped;
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

/* A do-nothing PEP 523 hook, for benchmarks only: what any eval-frame function costs on
 * this CPython (calls are no longer inlined by the interpreter), the floor under kiln's. */
static PyObject *passthrough_eval(PyThreadState *ts, _PyInterpreterFrame *frame, int throw_flag)
{
    return _PyEval_EvalFrameDefault(ts, frame, throw_flag);
}

void kiln_hook_baseline(int on)
{
    PyGILState_STATE g = PyGILState_Ensure();
    PyInterpreterState *interp = PyInterpreterState_Get();
    if (on && _PyInterpreterState_GetEvalFrameFunc(interp) == _PyEval_EvalFrameDefault)
        _PyInterpreterState_SetEvalFrameFunc(interp, passthrough_eval);
    else if (!on && _PyInterpreterState_GetEvalFrameFunc(interp) == passthrough_eval)
        _PyInterpreterState_SetEvalFrameFunc(interp, _PyEval_EvalFrameDefault);
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
