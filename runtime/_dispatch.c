/* fusejit call dispatcher: a tiny CPython extension that turns a tuple of arguments into raw
   data pointers and calls a compiled entry point, with the GIL released.
   call(entry_address, objects, arena) -> int status
   objects: ndarrays (their data pointer), Python float/int/bool/complex (stored as
   double/int64/uint8/two doubles in a slot), or NumPy scalars (their value copied into a slot). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>
#include <numpy/arrayscalars.h>
#include <string.h>

#define FJ_MAX_ARGS 256

typedef int (*fj_entry_fn)(char *const *io, char *arena);
typedef union { double d; int64_t i; uint8_t b; char raw[32]; } fj_slot;

static PyObject *fj_call(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "call(entry, objects, arena)");
        return NULL;
    }
    void *entry = PyLong_AsVoidPtr(args[0]);
    if (entry == NULL && PyErr_Occurred()) return NULL;
    PyObject *objs = args[1];
    if (!PyTuple_CheckExact(objs)) {
        PyErr_SetString(PyExc_TypeError, "objects must be a tuple");
        return NULL;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(objs);
    if (n > FJ_MAX_ARGS) {
        PyErr_SetString(PyExc_ValueError, "too many buffers");
        return NULL;
    }
    char *ptrs[FJ_MAX_ARGS];
    fj_slot slots[FJ_MAX_ARGS];
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *o = PyTuple_GET_ITEM(objs, i);
        if (PyArray_Check(o)) {
            ptrs[i] = PyArray_BYTES((PyArrayObject *)o);
        } else if (PyFloat_CheckExact(o)) {
            slots[i].d = PyFloat_AS_DOUBLE(o);
            ptrs[i] = slots[i].raw;
        } else if (PyBool_Check(o)) {
            slots[i].b = (o == Py_True);
            ptrs[i] = slots[i].raw;
        } else if (PyComplex_CheckExact(o)) { /* as C's double _Complex: real, imaginary */
            double parts[2] = {PyComplex_RealAsDouble(o), PyComplex_ImagAsDouble(o)};
            memcpy(slots[i].raw, parts, sizeof parts);
            ptrs[i] = slots[i].raw;
        } else if (PyLong_CheckExact(o)) {
            slots[i].i = PyLong_AsLongLong(o);
            if (slots[i].i == -1 && PyErr_Occurred()) return NULL;
            ptrs[i] = slots[i].raw;
        } else if (PyArray_IsScalar(o, Generic)) {
            /* Only the scalar types fusejit traces reach here (at most 8 bytes). */
            PyArray_ScalarAsCtype(o, slots[i].raw);
            ptrs[i] = slots[i].raw;
        } else {
            PyErr_Format(PyExc_TypeError, "cannot pass %.100s to a compiled program",
                         Py_TYPE(o)->tp_name);
            return NULL;
        }
    }
    char *arena = NULL;
    if (args[2] != Py_None) {
        if (!PyArray_Check(args[2])) {
            PyErr_SetString(PyExc_TypeError, "arena must be an ndarray or None");
            return NULL;
        }
        arena = PyArray_BYTES((PyArrayObject *)args[2]);
    }
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = ((fj_entry_fn)entry)(ptrs, arena);
    Py_END_ALLOW_THREADS
    return PyLong_FromLong(status);
}

/* key(args) -> bytes or None: the call signature of a tuple of arguments (dtype, shape and,
   for non-contiguous arrays, strides; the kind of Python and NumPy scalars). None when an
   argument needs the slow path (a subclass, a foreign object, a non-native byte order). */
static PyObject *fj_key(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 1 || !PyTuple_CheckExact(args[0])) {
        PyErr_SetString(PyExc_TypeError, "key(tuple)");
        return NULL;
    }
    PyObject *tup = args[0];
    Py_ssize_t n = PyTuple_GET_SIZE(tup);
    int64_t buf[512];
    Py_ssize_t k = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *o = PyTuple_GET_ITEM(tup, i);
        if (k > 400) Py_RETURN_NONE;
        if (PyArray_CheckExact(o)) {
            PyArrayObject *a = (PyArrayObject *)o;
            PyArray_Descr *d = PyArray_DESCR(a);
            if (!PyArray_ISNBO(d->byteorder)) Py_RETURN_NONE;
            int nd = PyArray_NDIM(a);
            if (nd > 32) Py_RETURN_NONE;
            int contig = PyArray_IS_C_CONTIGUOUS(a) || PyArray_SIZE(a) == 0;
            buf[k++] = ((int64_t)d->type_num << 16) | (contig ? 0x100 : 0x200) | nd;
            npy_intp *shape = PyArray_DIMS(a);
            for (int j = 0; j < nd; j++) buf[k++] = shape[j];
            if (!contig) {
                npy_intp *st = PyArray_STRIDES(a);
                for (int j = 0; j < nd; j++) buf[k++] = st[j];
            }
        } else if (PyFloat_CheckExact(o)) {
            buf[k++] = 1;
        } else if (PyBool_Check(o)) {
            buf[k++] = 2;
        } else if (PyComplex_CheckExact(o)) {
            buf[k++] = 4;
        } else if (PyLong_CheckExact(o)) {
            buf[k++] = 3;
        } else if (PyArray_IsScalar(o, Generic)) {
            PyArray_Descr *d = PyArray_DescrFromScalar(o);
            if (d == NULL) return NULL;
            int nbo = PyArray_ISNBO(d->byteorder);
            buf[k++] = ((int64_t)d->type_num << 16) | 0x400;
            Py_DECREF(d);
            if (!nbo) Py_RETURN_NONE;
        } else {
            Py_RETURN_NONE;
        }
    }
    return PyBytes_FromStringAndSize((const char *)buf, k * (Py_ssize_t)sizeof(int64_t));
}

static PyMethodDef fj_methods[] = {
    {"call", (PyCFunction)(void (*)(void))fj_call, METH_FASTCALL, "Call a compiled entry."},
    {"key", (PyCFunction)(void (*)(void))fj_key, METH_FASTCALL, "Signature of arguments."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef fj_module = {PyModuleDef_HEAD_INIT, "_fusejit_dispatch", NULL, -1,
                                       fj_methods};

PyMODINIT_FUNC PyInit__fusejit_dispatch(void) {
    import_array();
    return PyModule_Create(&fj_module);
}
