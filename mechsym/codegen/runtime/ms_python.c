/* ms_call: generated entry points called from Python without ctypes (mechsym.codegen.c_extension).

   An Entry wraps one batched entry point `void f(int ns, const double *g1, ..., const double *gk,
   const double *p, double *out)` (k = 1..4 groups per sample, then the shared parameter vector p) and
   takes numpy arrays as they are: entry(g1[, g2[, g3...]]) with each group (size,) for one state or
   (N, size) for N states (a missing or None group is zeros), returning (*shape) or (N, *shape). Arrays that
   are float64, C-contiguous, aligned, native and finite (and, where `quat` >= 0, whose quaternion q[quat:quat+4]
   has unit norm to `quat_tol`) are read in place; anything else is handed unchanged to `fallback`, the
   Python route, which converts it or raises the one-line error naming the argument. N states run with
   the GIL released. entry.evaluate(g1, ..., gk, p) is the N-state call of arrays already checked.
   An Entry made with `widen` (a callable returning the address of a second entry point with the same
   arguments and results, or 0 for none) calls it once, on the first call of at least `wide_from` states, and
   runs such calls through that address from then on: a batched entry point built only when batches come. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdlib.h>

#define MAXG 4

typedef void (*fn1)(int, const double *, const double *, double *);
typedef void (*fn2)(int, const double *, const double *, const double *, double *);
typedef void (*fn3)(int, const double *, const double *, const double *, const double *, double *);
typedef void (*fn4)(int, const double *, const double *, const double *, const double *, const double *, double *);

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    void (*fn)(void);
    void (*wide)(void);          /* the entry point for ns >= wide_from, once `widen` has given it (else NULL) */
    PyObject *widen;             /* called once for `wide`, then cleared (NULL: none to ask for) */
    npy_intp wide_from;
    int k;                       /* groups per sample */
    npy_intp sizes[MAXG];
    npy_intp size;               /* outputs per sample */
    int nshape;
    npy_intp shape[3];           /* one state's output shape; [0] left for N */
    PyArrayObject *p;            /* the parameters in use (float64, contiguous) */
    PyObject *fallback;
    Py_ssize_t quat;
    double quat_tol;
    int finite_out;              /* one state: a non-finite output goes to fallback (which names it) */
    double *zeros;
} Entry;

static void run(const Entry *e, int ns, const double **g, const double *p, double *out) {
    void (*fn)(void) = e->wide != NULL && ns >= e->wide_from ? e->wide : e->fn;
    switch (e->k) {
    case 1: ((fn1)fn)(ns, g[0], p, out); break;
    case 2: ((fn2)fn)(ns, g[0], g[1], p, out); break;
    case 3: ((fn3)fn)(ns, g[0], g[1], g[2], p, out); break;
    default: ((fn4)fn)(ns, g[0], g[1], g[2], g[3], p, out); break;
    }
}

/* before a call of n states: the wide entry point asked for once, when n reaches wide_from (-1: its error,
   e.g. an interrupted build, raised; `widen` is kept for the next call) */
static int widen(Entry *e, npy_intp n) {
    if (e->widen == NULL || n < e->wide_from)
        return 0;
    PyObject *r = PyObject_CallNoArgs(e->widen);
    if (r == NULL)
        return -1;
    unsigned long long address = PyLong_AsUnsignedLongLong(r);
    Py_DECREF(r);
    if (PyErr_Occurred())
        return -1;
    e->wide = (void (*)(void))(uintptr_t)address;
    Py_CLEAR(e->widen);
    return 0;
}

/* the array's rows (1 for a vector, N for (N, size)), or -1 where it is not usable as it is */
static npy_intp rows(PyObject *o, npy_intp size, int ndim) {
    if (!PyArray_Check(o))
        return -1;
    PyArrayObject *a = (PyArrayObject *)o;
    if (PyArray_TYPE(a) != NPY_DOUBLE || !PyArray_ISCARRAY_RO(a) || !PyArray_ISNOTSWAPPED(a) ||
        PyArray_NDIM(a) != ndim || PyArray_DIMS(a)[ndim - 1] != size)
        return -1;
    return ndim == 1 ? 1 : PyArray_DIMS(a)[0];
}

static int all_finite(const double *x, npy_intp n) {
    double z = 0.0;
    for (npy_intp i = 0; i < n; i++)
        z += x[i] * 0.0; /* 0 for a finite x, NaN for inf or NaN: exact, never overflows */
    return z == 0.0;
}

static PyObject *new_output(const Entry *e, int many, npy_intp n) {
    npy_intp dims[3];
    int nd = e->nshape;
    if (many) {
        dims[0] = n;
        for (int i = 0; i < nd; i++)
            dims[i + 1] = e->shape[i];
        nd++;
    } else {
        for (int i = 0; i < nd; i++)
            dims[i] = e->shape[i];
    }
    return PyArray_SimpleNew(nd, dims, NPY_DOUBLE);
}

static PyObject *cleared(void) {
    PyErr_SetString(PyExc_RuntimeError, "ms_call.Entry: called after the collector cleared it");
    return NULL;
}

static PyObject *fall_back(Entry *e, PyObject *const *args, size_t nargsf) {
    return PyObject_Vectorcall(e->fallback, args, PyVectorcall_NARGS(nargsf), NULL);
}

static PyObject *entry_call(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    Entry *e = (Entry *)self;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (e->p == NULL || e->fallback == NULL)
        return cleared();
    if (kwnames != NULL || nargs < 1 || nargs > e->k || !PyArray_Check(args[0]))
        return fall_back(e, args, nargsf);
    int ndim = PyArray_NDIM((PyArrayObject *)args[0]);
    if (ndim != 1 && ndim != 2)
        return fall_back(e, args, nargsf);
    const double *g[MAXG];
    npy_intp n = -1;
    for (int i = 0; i < e->k; i++) {
        if (i >= nargs || args[i] == Py_None) {
            g[i] = NULL;
            continue;
        }
        npy_intp r = rows(args[i], e->sizes[i], ndim);
        if (r < 0 || (n >= 0 && r != n))
            return fall_back(e, args, nargsf);
        n = r;
        g[i] = (const double *)PyArray_DATA((PyArrayObject *)args[i]);
        if (!all_finite(g[i], r * e->sizes[i]))
            return fall_back(e, args, nargsf);
    }
    if (n > INT_MAX)
        return fall_back(e, args, nargsf);
    if (e->quat >= 0) {
        for (npy_intp s = 0; s < n; s++) {
            const double *x = g[0] + s * e->sizes[0] + e->quat;
            if (!(fabs(sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2] + x[3] * x[3]) - 1.0) <= e->quat_tol))
                return fall_back(e, args, nargsf);
        }
    }
    int many = ndim == 2;
    if (many && widen(e, n) < 0)
        return NULL;
    double *scratch = NULL;
    for (int i = 0; i < e->k; i++) {
        if (g[i] != NULL)
            continue;
        if (!many) {
            g[i] = e->zeros;
            continue;
        }
        if (scratch == NULL) {
            npy_intp most = 0;
            for (int j = 0; j < e->k; j++)
                most = e->sizes[j] > most ? e->sizes[j] : most;
            scratch = calloc((size_t)(n > 0 ? n : 1) * (size_t)(most > 0 ? most : 1), sizeof(double));
            if (scratch == NULL)
                return PyErr_NoMemory();
        }
        g[i] = scratch;
    }
    PyObject *out = new_output(e, many, n);
    if (out == NULL) {
        free(scratch);
        return NULL;
    }
    double *o = (double *)PyArray_DATA((PyArrayObject *)out);
    const double *p = (const double *)PyArray_DATA(e->p);
    if (many) {
        Py_BEGIN_ALLOW_THREADS
        run(e, (int)n, g, p, o);
        Py_END_ALLOW_THREADS
        free(scratch);
    } else {
        run(e, 1, g, p, o);
        if (e->finite_out && !all_finite(o, e->size)) {
            Py_DECREF(out);
            return fall_back(e, args, nargsf);
        }
    }
    return out;
}

static int vector(PyObject *o, npy_intp size, npy_intp n, int ndim, const char *what) {
    npy_intp r = rows(o, size, ndim);
    if (r < 0 || r != n) {
        PyErr_Format(PyExc_ValueError, "ms_call.evaluate: %s must be a C-contiguous float64 array of %zd rows "
                     "of %zd", what, (Py_ssize_t)n, (Py_ssize_t)size);
        return 0;
    }
    return 1;
}

static PyObject *entry_evaluate(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    Entry *e = (Entry *)self;
    if (e->p == NULL)
        return cleared();
    if (nargs != e->k + 1) {
        PyErr_Format(PyExc_TypeError, "ms_call.evaluate takes %d arrays", e->k + 1);
        return NULL;
    }
    if (!PyArray_Check(args[0]) || PyArray_NDIM((PyArrayObject *)args[0]) != 2) {
        PyErr_SetString(PyExc_ValueError, "ms_call.evaluate: the first group must be (N, size)");
        return NULL;
    }
    npy_intp n = PyArray_DIMS((PyArrayObject *)args[0])[0];
    const double *g[MAXG];
    for (int i = 0; i < e->k; i++) {
        if (!vector(args[i], e->sizes[i], n, 2, "a group"))
            return NULL;
        g[i] = (const double *)PyArray_DATA((PyArrayObject *)args[i]);
    }
    if (!vector(args[e->k], PyArray_DIMS(e->p)[0], 1, 1, "p"))
        return NULL;
    if (n > INT_MAX) {
        PyErr_SetString(PyExc_ValueError, "ms_call.evaluate: more than INT_MAX states in one call");
        return NULL;
    }
    if (widen(e, n) < 0)
        return NULL;
    PyObject *out = new_output(e, 1, n);
    if (out == NULL)
        return NULL;
    const double *p = (const double *)PyArray_DATA((PyArrayObject *)args[e->k]);
    double *o = (double *)PyArray_DATA((PyArrayObject *)out);
    Py_BEGIN_ALLOW_THREADS
    run(e, (int)n, g, p, o);
    Py_END_ALLOW_THREADS
    return out;
}

static int set_p(Entry *e, PyObject *value) {
    if (value == NULL || !PyArray_Check(value) || PyArray_NDIM((PyArrayObject *)value) != 1 ||
        rows(value, PyArray_DIMS((PyArrayObject *)value)[0], 1) < 0) {
        PyErr_SetString(PyExc_TypeError, "ms_call.Entry.p must be a C-contiguous float64 vector");
        return -1;
    }
    Py_INCREF(value);
    Py_XSETREF(e->p, (PyArrayObject *)value);
    return 0;
}

static PyObject *entry_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    (void)kwds;
    unsigned long long address;
    PyObject *sizes, *shape, *p, *fallback, *wide = Py_None;
    Py_ssize_t quat, wide_from = 0;
    double quat_tol;
    int finite_out;
    if (!PyArg_ParseTuple(args, "KO!O!OOndp|On", &address, &PyTuple_Type, &sizes, &PyTuple_Type, &shape, &p, &fallback,
                          &quat, &quat_tol, &finite_out, &wide, &wide_from))
        return NULL;
    Py_ssize_t k = PyTuple_GET_SIZE(sizes), nshape = PyTuple_GET_SIZE(shape);
    if (k < 1 || k > MAXG || nshape < 1 || nshape > 2 || !PyCallable_Check(fallback) ||
        (wide != Py_None && !PyCallable_Check(wide))) {
        PyErr_SetString(PyExc_ValueError, "ms_call.Entry: 1 to 4 groups, an output shape of 1 or 2 dimensions, "
                        "a callable fallback and a callable or None widen");
        return NULL;
    }
    Entry *e = (Entry *)type->tp_alloc(type, 0);
    if (e == NULL)
        return NULL;
    e->vectorcall = entry_call;
    e->fn = (void (*)(void))(uintptr_t)address;
    e->k = (int)k;
    npy_intp most = 1;
    for (Py_ssize_t i = 0; i < k; i++) {
        e->sizes[i] = PyLong_AsSsize_t(PyTuple_GET_ITEM(sizes, i));
        most = e->sizes[i] > most ? e->sizes[i] : most;
    }
    e->nshape = (int)nshape;
    e->size = 1;
    for (Py_ssize_t i = 0; i < nshape; i++) {
        e->shape[i] = PyLong_AsSsize_t(PyTuple_GET_ITEM(shape, i));
        e->size *= e->shape[i];
    }
    if (PyErr_Occurred() || set_p(e, p) < 0) {
        Py_DECREF(e);
        return NULL;
    }
    Py_INCREF(fallback);
    e->fallback = fallback;
    e->quat = quat;
    e->quat_tol = quat_tol;
    e->finite_out = finite_out;
    if (wide != Py_None) {
        Py_INCREF(wide);
        e->widen = wide;
    }
    e->wide_from = wide_from;
    e->zeros = calloc((size_t)most, sizeof(double));
    if (e->zeros == NULL) {
        Py_DECREF(e);
        return PyErr_NoMemory();
    }
    return (PyObject *)e;
}

/* the fallback is usually a method of the object that holds the entry: a cycle the collector must see */
static int entry_traverse(PyObject *self, visitproc visit, void *arg) {
    Entry *e = (Entry *)self;
    Py_VISIT(e->p);
    Py_VISIT(e->fallback);
    Py_VISIT(e->widen);
    return 0;
}

static int entry_clear(PyObject *self) {
    Entry *e = (Entry *)self;
    Py_CLEAR(e->p);
    Py_CLEAR(e->fallback);
    Py_CLEAR(e->widen);
    return 0;
}

static void entry_dealloc(PyObject *self) {
    Entry *e = (Entry *)self;
    PyObject_GC_UnTrack(self);
    entry_clear(self);
    free(e->zeros);
    Py_TYPE(self)->tp_free(self);
}

static PyMethodDef entry_methods[] = {
    {"evaluate", (PyCFunction)(void (*)(void))entry_evaluate, METH_FASTCALL,
     "evaluate(g1, ..., gk, p): N states of checked (N, size) float64 arrays, with the GIL released"},
    {NULL, NULL, 0, NULL}};

static PyTypeObject EntryType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "ms_call.Entry",
    .tp_basicsize = sizeof(Entry),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_HAVE_GC,
    .tp_traverse = entry_traverse,
    .tp_clear = entry_clear,
    .tp_free = PyObject_GC_Del,
    .tp_doc = "Entry(address, sizes, shape, p, fallback, quat, quat_tol, finite_out[, widen, wide_from]): a generated "
              "entry point",
    .tp_new = entry_new,
    .tp_dealloc = entry_dealloc,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(Entry, vectorcall),
    .tp_methods = entry_methods,
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "ms_call", NULL, -1, NULL, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit_ms_call(void) {
    import_array();
    if (PyType_Ready(&EntryType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    Py_INCREF(&EntryType);
    if (PyModule_AddObject(m, "Entry", (PyObject *)&EntryType) < 0) {
        Py_DECREF(&EntryType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
