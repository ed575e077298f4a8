/* What the parts of kiln's cache-hit path in C share (fastcheck.c lists the parts; an
 * internal header: nothing outside kiln/guards/fastcheck*.c includes it). Each part is its
 * own translation unit: what one part defines for another is declared here with a
 * ``kiln_`` name and hidden visibility (the module still exports its init function
 * alone), and the helpers a cache hit runs across parts (run_graph, on every SimpleEntry
 * hit) are ``static inline always_inline`` here, inlined as they were when the parts were
 * one file. */
#ifndef KILN_FASTCHECK_H
#define KILN_FASTCHECK_H

#include "cext.h"

#pragma GCC visibility push(hidden)

/* numpy.ndarray, numpy.number, numpy.bool_ and functools.partial, fetched when the module
 * is created (fastcheck.c) and kept for the process. */
extern PyObject *kiln_ndarray_type, *kiln_number_type, *kiln_bool_type, *kiln_partial_type;

/* The most arrays the overlap checks take (any_overlap; a writing graph's inputs). */
#define KILN_OVERLAP_MAX 64

/* fastcheck_arrays.c */
PyObject *kiln_array_matches(PyObject *module, PyObject *const *args, Py_ssize_t nargs);
PyObject *kiln_any_overlap(PyObject *module, PyObject *arrays);
int kiln_array_extent(PyObject *x, char **lo, char **hi);
int kiln_overlaps_itself(PyObject *x);

/* fastcheck_dispatch.c */
extern PyTypeObject kiln_DispatcherType;
PyObject *kiln_enable_vectorcall(PyObject *module, PyObject *cls);

/* fastcheck_entry.c */
extern PyTypeObject kiln_SimpleEntryType;

/* fastcheck_graph.c */
extern PyTypeObject kiln_PlainRunType, kiln_GraphCallType;
PyObject *kiln_short_paths(PyObject *owner);
PyObject *kiln_plain_call(PyObject *paths, PyObject *const *inputs, Py_ssize_t ni);

#pragma GCC visibility pop

/* The callable that runs ``graph`` for these inputs: _direct when ``paths`` (an
 * AOTFunction's short paths, or None) has it set and no input is a ``tensor`` (what
 * AOTFunction.__call__ would pick), else the graph. A new reference; *plain is set to
 * 1 when there is no _direct but no input is a tensor (run_graph may take _plain). */
static inline __attribute__((always_inline)) PyObject *
graph_target(PyObject *graph, PyObject *paths, PyObject *tensor, PyObject *const *inputs, Py_ssize_t ni,
             int *plain)
{
    *plain = 0;
    if (paths != Py_None) {
        PyObject *direct = PyList_GET_ITEM(paths, 0);
        Py_ssize_t i = 0;
        /* (exact floats, ints and ndarrays are no Tensor: no walk of their MRO) */
        while (i < ni && (PyFloat_CheckExact(inputs[i]) || PyLong_CheckExact(inputs[i])
                          || (PyObject *)Py_TYPE(inputs[i]) == kiln_ndarray_type
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

/* Run ``graph`` for these inputs the way AOTFunction.__call__ would (see graph_target,
 * plain_call); a new reference, NULL with an error. */
static inline __attribute__((always_inline)) PyObject *
run_graph(PyObject *graph, PyObject *paths, PyObject *tensor, PyObject *const *inputs, Py_ssize_t ni)
{
    int plain;
    PyObject *target = graph_target(graph, paths, tensor, inputs, ni, &plain);
    if (target == NULL)
        return NULL;
    if (plain) {
        PyObject *out = kiln_plain_call(paths, inputs, ni);
        if (out != NULL || PyErr_Occurred()) {
            Py_DECREF(target);
            return out;
        }
    }
    PyObject *out = kiln_vectorcall(target, inputs, ni, NULL);
    Py_DECREF(target);
    return out;
}

#endif
