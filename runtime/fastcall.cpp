// The call path of a compiled function in C: `Dispatcher`, the base type of the objects
// `cppcodegen.compile` returns when this module is built (runtime/fastcall.py builds it once
// per Python, NumPy and compiler, and loads it like any extension module).
//
// A call through Python's own path (api.CompiledFunction.__call__) costs 2-4 us before the
// kernel runs: the arguments' layout key, a dict lookup, one cffi from_buffer per array and
// libffi's call, ~0.1 us per argument. A Dispatcher keeps, for the few argument layouts
// seen last, an `Entry`: what each argument must be (exact type; an array's dtype, shape
// and strides; an int's value) and how the kernel's arguments are made from them. A call
// whose arguments pass an entry's checks allocates its outputs, calls the kernel through
// its `ccg_slots<i>` wrapper (its arguments as one array of 64-bit slots) with the GIL
// released, and returns the output; any other call goes to `_call_slow` (the Python path,
// which compiles, checks guards and registers entries). The checks are those of the layout
// key the Python path looks variants up by, so both paths pick the same compiled code.
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

#include <cstdint>
#include <cstring>

namespace {

constexpr int kMaxArgs = 32, kMaxSlots = 64, kMaxOuts = 16, kMaxDims = 8, kMaxEntries = 8;

enum GuardKind { kArray = 0, kType = 1, kValue = 2 };
enum SlotKind { kArgData = 0, kOutData = 1, kFixed = 2, kDouble = 3, kInt = 4, kReal = 5,
                kImag = 6, kStatus = 7 };

struct Guard {
  int kind, ndim;
  PyObject* object;       // kArray: the dtype; kType / kValue: the type
  PyObject* value;        // kValue: the value the argument must equal
  npy_intp shape[kMaxDims], strides[kMaxDims];
};

struct Slot {
  int kind;
  Py_ssize_t index;       // the argument or output it comes from
  uint64_t fixed;         // kFixed: the value itself (a constant's address)
};

struct Output {
  PyArray_Descr* dtype;
  int ndim;
  npy_intp shape[kMaxDims];
};

struct Entry {
  PyObject_HEAD
  void (*fn)(const uint64_t*);
  Py_ssize_t nargs, nslots, nouts, nmut;
  PyObject* result;       // how the result is made (fastcall.py's RESULT codes)
  PyObject* keep;         // what the entry points into: the library, constants, dtypes
  PyObject* on_error;     // called with the status (4 ints) and the arguments when the kernel
                          // reports one: raises, or returns (result,) of the call run as Python
  Guard guard[kMaxArgs];
  Slot slot[kMaxSlots];
  Output out[kMaxOuts];
  Py_ssize_t mut[kMaxArgs];   // the arguments the kernel writes in place
};

struct Dispatcher {
  PyObject_HEAD
  PyObject* entries;      // list of Entry, the most recently added first
  PyObject* filled;       // the parameters' defaults, every one (or null: none to fill)
  Py_ssize_t required;    // the parameters without a default
};

PyObject* kCallSlow;      // "_call_slow"
bool g_paused = false;    // device hooks allocate the outputs: every call takes Python's path

void entry_dealloc(Entry* e) {
  for (Py_ssize_t i = 0; i < e->nargs; ++i) {
    Py_XDECREF(e->guard[i].object);
    Py_XDECREF(e->guard[i].value);
  }
  for (Py_ssize_t i = 0; i < e->nouts; ++i) Py_XDECREF(e->out[i].dtype);
  Py_XDECREF(e->keep);
  Py_XDECREF(e->result);
  Py_XDECREF(e->on_error);
  Py_TYPE(e)->tp_free(reinterpret_cast<PyObject*>(e));
}

PyTypeObject EntryType = {PyVarObject_HEAD_INIT(nullptr, 0)};

bool read_dims(PyObject* seq, int* ndim, npy_intp* dims) {
  PyObject* fast = PySequence_Fast(seq, "shape: a tuple of ints");
  if (fast == nullptr) return false;
  const Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
  bool ok = n <= kMaxDims;
  for (Py_ssize_t i = 0; ok && i < n; ++i) {
    dims[i] = PyLong_AsSsize_t(PySequence_Fast_GET_ITEM(fast, i));
    ok = !(dims[i] == -1 && PyErr_Occurred());
  }
  Py_DECREF(fast);
  if (ok) *ndim = static_cast<int>(n);
  else if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "too many dimensions");
  return ok;
}

// The result codes (fastcall.py's RESULT): (code, output) | (kArg, argument) |
// (kConstant, object) | (kTuple or kList, (items...)) | (kMaybeItem, (flag output, output)):
// a Python number where the 0-d bool output `flag` is true, a NumPy scalar where it is not |
// (kMaybeNone, (flag output, result)): None where `flag` is true, the result where it is not
enum ResultKind { kBuf = 0, kArr = 1, kItem = 2, kArg = 3, kConstant = 4, kTuple = 5, kList = 6,
                  kMaybeItem = 7, kMaybeNone = 8, kView = 9 };

// Is `spec` a well-formed result code over `nouts` outputs and `nargs` arguments?
bool valid_result(PyObject* spec, Py_ssize_t nouts, Py_ssize_t nargs, int depth = 0) {
  if (depth > 16 || !PyTuple_Check(spec) || PyTuple_GET_SIZE(spec) != 2) return false;
  const long kind = PyLong_AsLong(PyTuple_GET_ITEM(spec, 0));
  PyObject* v = PyTuple_GET_ITEM(spec, 1);
  if (kind == kTuple || kind == kList) {
    if (!PyTuple_Check(v)) return false;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(v); ++i)
      if (!valid_result(PyTuple_GET_ITEM(v, i), nouts, nargs, depth + 1)) return false;
    return true;
  }
  if (kind == kConstant) return true;
  if (kind == kView) {      // (argument index, a function of it: its view)
    if (!PyTuple_Check(v) || PyTuple_GET_SIZE(v) != 2 ||
        !PyCallable_Check(PyTuple_GET_ITEM(v, 1)))
      return false;
    const Py_ssize_t k = PyLong_AsSsize_t(PyTuple_GET_ITEM(v, 0));
    return k >= 0 && k < nargs;
  }
  if (kind == kMaybeNone) {
    if (!PyTuple_Check(v) || PyTuple_GET_SIZE(v) != 2) return false;
    const Py_ssize_t k = PyLong_AsSsize_t(PyTuple_GET_ITEM(v, 0));
    return k >= 0 && k < nouts && valid_result(PyTuple_GET_ITEM(v, 1), nouts, nargs, depth + 1);
  }
  if (kind == kMaybeItem) {
    if (!PyTuple_Check(v) || PyTuple_GET_SIZE(v) != 2) return false;
    for (Py_ssize_t i = 0; i < 2; ++i) {
      const Py_ssize_t k = PyLong_AsSsize_t(PyTuple_GET_ITEM(v, i));
      if (k < 0 || k >= nouts) return false;
    }
    return true;
  }
  if (kind < kBuf || kind > kArg || !PyLong_Check(v)) return false;
  const Py_ssize_t k = PyLong_AsSsize_t(v);
  return k >= 0 && k < (kind == kArg ? nargs : nouts);
}

// make_entry(address, guards, slots, outputs, result, mutates, on_error, keep)
//   guards:  per argument (0, dtype, shape, strides in bytes) | (1, type) | (2, type, value)
//   slots:   per 64-bit slot of the kernel's arguments (kind, index, fixed value)
//   outputs: per array the call allocates (dtype, shape); `result`: how the result is made
//   mutates: the arguments written in place (writeable, overlapping no other array argument)
PyObject* make_entry(PyObject*, PyObject* args) {
  unsigned long long address;
  PyObject *guards, *slots, *outputs, *result, *mutates, *on_error, *keep;
  if (!PyArg_ParseTuple(args, "KO!O!O!OO!OO", &address, &PyTuple_Type, &guards, &PyTuple_Type,
                        &slots, &PyTuple_Type, &outputs, &result, &PyTuple_Type, &mutates,
                        &on_error, &keep))
    return nullptr;
  const Py_ssize_t nargs = PyTuple_GET_SIZE(guards), nslots = PyTuple_GET_SIZE(slots),
                   nouts = PyTuple_GET_SIZE(outputs), nmut = PyTuple_GET_SIZE(mutates);
  if (nargs > kMaxArgs || nslots > kMaxSlots || nouts > kMaxOuts || nmut > nargs ||
      !valid_result(result, nouts, nargs)) {
    if (!PyErr_Occurred())
      PyErr_SetString(PyExc_ValueError, "make_entry: too many arguments, slots or outputs");
    return nullptr;
  }
  Entry* e = PyObject_New(Entry, &EntryType);
  if (e == nullptr) return nullptr;
  e->fn = reinterpret_cast<void (*)(const uint64_t*)>(static_cast<uintptr_t>(address));
  e->nargs = e->nouts = 0;
  e->nslots = nslots;
  e->nmut = nmut;
  Py_INCREF(result);
  e->result = result;
  Py_INCREF(keep);
  e->keep = keep;
  Py_INCREF(on_error);
  e->on_error = on_error;
  for (Py_ssize_t i = 0; i < nargs; ++i) {
    Guard& g = e->guard[i];
    g.object = g.value = nullptr;
    e->nargs = i + 1;
    PyObject* t = PyTuple_GET_ITEM(guards, i);
    int ndim = 0, sdim = 0;
    if (!PyTuple_Check(t) || PyTuple_GET_SIZE(t) < 2) goto bad;
    g.kind = static_cast<int>(PyLong_AsLong(PyTuple_GET_ITEM(t, 0)));
    g.object = PyTuple_GET_ITEM(t, 1);
    Py_INCREF(g.object);
    if (g.kind == kArray) {
      if (PyTuple_GET_SIZE(t) != 4 || !PyArray_DescrCheck(g.object) ||
          !read_dims(PyTuple_GET_ITEM(t, 2), &ndim, g.shape) ||
          !read_dims(PyTuple_GET_ITEM(t, 3), &sdim, g.strides) || ndim != sdim)
        goto bad;
      g.ndim = ndim;
    } else if (g.kind == kValue) {
      if (PyTuple_GET_SIZE(t) != 3 || !PyType_Check(g.object)) goto bad;
      g.value = PyTuple_GET_ITEM(t, 2);
      Py_INCREF(g.value);
    } else if (g.kind != kType || !PyType_Check(g.object)) {
      goto bad;
    }
  }
  for (Py_ssize_t i = 0; i < nmut; ++i) {
    e->mut[i] = PyLong_AsSsize_t(PyTuple_GET_ITEM(mutates, i));
    if (e->mut[i] < 0 || e->mut[i] >= nargs || e->guard[e->mut[i]].kind != kArray) goto bad;
  }
  for (Py_ssize_t i = 0; i < nslots; ++i) {
    PyObject* t = PyTuple_GET_ITEM(slots, i);
    Slot& s = e->slot[i];
    if (!PyArg_ParseTuple(t, "inK", &s.kind, &s.index, &s.fixed)) goto bad;
    const bool on_arg = s.kind == kArgData || s.kind == kDouble || s.kind == kInt ||
                        s.kind == kReal || s.kind == kImag;
    if ((on_arg && (s.index < 0 || s.index >= nargs)) ||
        (s.kind == kOutData && (s.index < 0 || s.index >= nouts)) || s.kind < 0 ||
        s.kind > kStatus)
      goto bad;
  }
  for (Py_ssize_t i = 0; i < nouts; ++i) {
    PyObject* t = PyTuple_GET_ITEM(outputs, i);
    Output& o = e->out[i];
    o.dtype = nullptr;
    e->nouts = i + 1;
    if (!PyTuple_Check(t) || PyTuple_GET_SIZE(t) != 2 ||
        !PyArray_DescrCheck(PyTuple_GET_ITEM(t, 0)))
      goto bad;
    o.dtype = reinterpret_cast<PyArray_Descr*>(PyTuple_GET_ITEM(t, 0));
    Py_INCREF(o.dtype);
    if (!read_dims(PyTuple_GET_ITEM(t, 1), &o.ndim, o.shape)) goto bad;
  }
  return reinterpret_cast<PyObject*>(e);
bad:
  if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "make_entry: a malformed plan");
  Py_DECREF(e);
  return nullptr;
}

// The bytes an array's elements span: [lo, hi); lo == hi when it has none.
void extent(PyArrayObject* x, char** lo, char** hi) {
  char* data = static_cast<char*>(PyArray_DATA(x));
  *lo = *hi = data;
  npy_intp low = 0, high = PyArray_ITEMSIZE(x);
  for (int k = 0; k < PyArray_NDIM(x); ++k) {
    const npy_intp n = PyArray_DIM(x, k), step = PyArray_STRIDE(x, k);
    if (n == 0) return;
    (step < 0 ? low : high) += (n - 1) * step;
  }
  *lo = data + low;
  *hi = data + high;
}

// May the kernel write the arguments it updates in place? Not when one is read-only or
// shares bytes with another array argument: the Python path raises or runs NumPy then.
bool may_write(const Entry* e, PyObject* args) {
  for (Py_ssize_t m = 0; m < e->nmut; ++m) {
    PyArrayObject* x = reinterpret_cast<PyArrayObject*>(PyTuple_GET_ITEM(args, e->mut[m]));
    if (!PyArray_ISWRITEABLE(x)) return false;
    char *lo, *hi;
    extent(x, &lo, &hi);
    for (Py_ssize_t i = 0; i < e->nargs && lo != hi; ++i) {
      if (i == e->mut[m] || e->guard[i].kind != kArray) continue;
      char *lo2, *hi2;
      extent(reinterpret_cast<PyArrayObject*>(PyTuple_GET_ITEM(args, i)), &lo2, &hi2);
      if (lo2 != hi2 && lo < hi2 && lo2 < hi) return false;
    }
  }
  return true;
}

// Do `args` pass the entry's checks? -1: an error was raised.
int matches(const Entry* e, PyObject* args) {
  if (PyTuple_GET_SIZE(args) != e->nargs) return 0;
  for (Py_ssize_t i = 0; i < e->nargs; ++i) {
    PyObject* a = PyTuple_GET_ITEM(args, i);
    const Guard& g = e->guard[i];
    if (g.kind == kArray) {
      if (Py_TYPE(a) != &PyArray_Type) return 0;
      PyArrayObject* x = reinterpret_cast<PyArrayObject*>(a);
      PyArray_Descr* d = PyArray_DESCR(x);
      if (PyArray_NDIM(x) != g.ndim) return 0;
      if (d != reinterpret_cast<PyArray_Descr*>(g.object) &&
          !PyArray_EquivTypes(d, reinterpret_cast<PyArray_Descr*>(g.object)))
        return 0;
      const npy_intp *shape = PyArray_DIMS(x), *strides = PyArray_STRIDES(x);
      for (int k = 0; k < g.ndim; ++k)
        if (shape[k] != g.shape[k] || strides[k] != g.strides[k]) return 0;
    } else if (Py_TYPE(a) != reinterpret_cast<PyTypeObject*>(g.object)) {
      return 0;
    } else if (g.kind == kValue && a != g.value) {
      const int same = PyObject_RichCompareBool(a, g.value, Py_EQ);
      if (same != 1) return same;
    }
  }
  return may_write(e, args) ? 1 : 0;
}

// The call's result from its outputs (`spec`: a valid result code): new reference or null.
PyObject* build_result(PyObject* spec, PyObject** outs, PyObject* args) {
  const long kind = PyLong_AsLong(PyTuple_GET_ITEM(spec, 0));
  PyObject* v = PyTuple_GET_ITEM(spec, 1);
  if (kind == kTuple || kind == kList) {
    const Py_ssize_t n = PyTuple_GET_SIZE(v);
    PyObject* r = kind == kTuple ? PyTuple_New(n) : PyList_New(n);
    for (Py_ssize_t i = 0; r != nullptr && i < n; ++i) {
      PyObject* item = build_result(PyTuple_GET_ITEM(v, i), outs, args);
      if (item == nullptr) Py_CLEAR(r);
      else if (kind == kTuple) PyTuple_SET_ITEM(r, i, item);
      else PyList_SET_ITEM(r, i, item);
    }
    return r;
  }
  if (kind == kConstant) {
    Py_INCREF(v);
    return v;
  }
  if (kind == kView)        // a view of an argument (x[1:-1], x.T): taken by its function
    return PyObject_CallOneArg(PyTuple_GET_ITEM(v, 1),
                               PyTuple_GET_ITEM(args, PyLong_AsSsize_t(PyTuple_GET_ITEM(v, 0))));
  if (kind == kMaybeNone) {
    PyArrayObject* flag = reinterpret_cast<PyArrayObject*>(
        outs[PyLong_AsSsize_t(PyTuple_GET_ITEM(v, 0))]);
    if (*static_cast<const npy_bool*>(PyArray_DATA(flag))) Py_RETURN_NONE;
    return build_result(PyTuple_GET_ITEM(v, 1), outs, args);
  }
  if (kind == kMaybeItem) {
    PyArrayObject* flag = reinterpret_cast<PyArrayObject*>(
        outs[PyLong_AsSsize_t(PyTuple_GET_ITEM(v, 0))]);
    PyObject* out = outs[PyLong_AsSsize_t(PyTuple_GET_ITEM(v, 1))];
    if (*static_cast<const npy_bool*>(PyArray_DATA(flag)))
      return PyObject_CallMethod(out, "item", nullptr);
    Py_INCREF(out);
    return PyArray_Return(reinterpret_cast<PyArrayObject*>(out));
  }
  const Py_ssize_t k = PyLong_AsSsize_t(v);
  if (kind == kArg) {
    PyObject* a = PyTuple_GET_ITEM(args, k);
    Py_INCREF(a);
    return a;
  }
  PyObject* out = outs[k];
  if (kind == kItem) return PyObject_CallMethod(out, "item", nullptr);
  Py_INCREF(out);
  if (kind == kArr) return out;
  return PyArray_Return(reinterpret_cast<PyArrayObject*>(out));   // (0-d: a scalar; stolen)
}

// One call through the entry (its checks passed): new reference, or null with an error.
PyObject* run(const Entry* e, PyObject* args) {
  PyObject* outs[kMaxOuts] = {};
  uint64_t slots[kMaxSlots];
  int64_t status[4] = {0, 0, 0, 0};
  PyObject* result = nullptr;
  for (Py_ssize_t i = 0; i < e->nouts; ++i) {
    const Output& o = e->out[i];
    Py_INCREF(o.dtype);   // (stolen)
    outs[i] = PyArray_Empty(o.ndim, const_cast<npy_intp*>(o.shape), o.dtype, 0);
    if (outs[i] == nullptr) goto done;
  }
  for (Py_ssize_t i = 0; i < e->nslots; ++i) {
    const Slot& s = e->slot[i];
    PyObject* a = s.kind == kOutData ? outs[s.index] : s.kind == kFixed || s.kind == kStatus
                                                           ? nullptr
                                                           : PyTuple_GET_ITEM(args, s.index);
    switch (s.kind) {
      case kArgData:
      case kOutData:
        slots[i] = reinterpret_cast<uintptr_t>(PyArray_DATA(reinterpret_cast<PyArrayObject*>(a)));
        break;
      case kFixed:
        slots[i] = s.fixed;
        break;
      case kDouble:
      case kReal:
      case kImag: {
        const double v = s.kind == kDouble ? PyFloat_AsDouble(a)
                         : s.kind == kReal ? PyComplex_RealAsDouble(a)
                                           : PyComplex_ImagAsDouble(a);
        if (v == -1.0 && PyErr_Occurred()) goto done;
        std::memcpy(&slots[i], &v, sizeof v);
        break;
      }
      case kInt: {
        const long long v = PyLong_AsLongLong(a);
        if (v == -1 && PyErr_Occurred()) goto done;
        slots[i] = static_cast<uint64_t>(v);
        break;
      }
      default:   // kStatus
        slots[i] = reinterpret_cast<uintptr_t>(status);
    }
  }
  Py_BEGIN_ALLOW_THREADS
  e->fn(slots);
  Py_END_ALLOW_THREADS
  if (status[0] != 0) {
    PyObject* r = PyObject_CallFunction(e->on_error, "((LLLL)O)", (long long)status[0],
                                        (long long)status[1], (long long)status[2],
                                        (long long)status[3], args);
    if (r == nullptr) goto done;   // (it raises the program's error)
    if (PyTuple_Check(r) && PyTuple_GET_SIZE(r) == 1) {   // (the call run as Python instead:
      result = PyTuple_GET_ITEM(r, 0);                     // its result)
      Py_INCREF(result);
      Py_DECREF(r);
      goto done;
    }
    Py_DECREF(r);
  }
  result = build_result(e->result, outs, args);
done:
  for (Py_ssize_t i = 0; i < e->nouts; ++i) Py_XDECREF(outs[i]);
  return result;
}

PyObject* dispatcher_new(PyTypeObject* type, PyObject*, PyObject*) {
  Dispatcher* self = reinterpret_cast<Dispatcher*>(type->tp_alloc(type, 0));
  if (self == nullptr) return nullptr;
  self->entries = PyList_New(0);
  if (self->entries == nullptr) {
    Py_DECREF(self);
    return nullptr;
  }
  return reinterpret_cast<PyObject*>(self);
}

void dispatcher_dealloc(Dispatcher* self) {
  Py_CLEAR(self->entries);
  Py_CLEAR(self->filled);
  Py_TYPE(self)->tp_free(reinterpret_cast<PyObject*>(self));
}

// `args` followed by the defaults of the parameters it leaves out (a new reference), or
// null (with no error set) where it leaves out one without a default or gives too many
PyObject* with_defaults(Dispatcher* self, PyObject* args) {
  const Py_ssize_t given = PyTuple_GET_SIZE(args);
  if (self->filled == nullptr || given < self->required ||
      given >= PyTuple_GET_SIZE(self->filled))
    return nullptr;
  const Py_ssize_t n = PyTuple_GET_SIZE(self->filled);
  PyObject* full = PyTuple_New(n);
  if (full == nullptr) return nullptr;
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* v = i < given ? PyTuple_GET_ITEM(args, i) : PyTuple_GET_ITEM(self->filled, i);
    Py_INCREF(v);
    PyTuple_SET_ITEM(full, i, v);
  }
  return full;
}

PyObject* dispatcher_call(Dispatcher* self, PyObject* args, PyObject* kwargs) {
  if (!g_paused && (kwargs == nullptr || PyDict_GET_SIZE(kwargs) == 0)) {
    PyObject* full = with_defaults(self, args);     // (f(x) of f(x, tol=1e-12))
    if (full == nullptr && PyErr_Occurred()) return nullptr;
    PyObject* used = full != nullptr ? full : args;
    const Py_ssize_t n = PyList_GET_SIZE(self->entries);
    for (Py_ssize_t i = 0; i < n; ++i) {
      Entry* e = reinterpret_cast<Entry*>(PyList_GET_ITEM(self->entries, i));
      const int m = matches(e, used);
      if (m < 0) {
        Py_XDECREF(full);
        return nullptr;
      }
      if (m) {
        Py_INCREF(e);       // (a call in another thread may replace the list's items)
        PyObject* r = run(e, used);
        Py_DECREF(e);
        Py_XDECREF(full);
        return r;
      }
    }
    Py_XDECREF(full);
  }
  PyObject* slow = PyObject_GetAttr(reinterpret_cast<PyObject*>(self), kCallSlow);
  if (slow == nullptr) return nullptr;
  PyObject* r = PyObject_Call(slow, args, kwargs);
  Py_DECREF(slow);
  return r;
}

PyObject* dispatcher_add(Dispatcher* self, PyObject* entry) {
  if (Py_TYPE(entry) != &EntryType) {
    PyErr_SetString(PyExc_TypeError, "_fast_add takes an entry made by make_entry");
    return nullptr;
  }
  if (PyList_Insert(self->entries, 0, entry) < 0) return nullptr;
  if (PyList_GET_SIZE(self->entries) > kMaxEntries &&
      PyList_SetSlice(self->entries, kMaxEntries, PyList_GET_SIZE(self->entries), nullptr) < 0)
    return nullptr;
  Py_RETURN_NONE;
}

PyObject* dispatcher_defaults(Dispatcher* self, PyObject* args) {
  PyObject* filled;
  Py_ssize_t required;
  if (!PyArg_ParseTuple(args, "O!n", &PyTuple_Type, &filled, &required)) return nullptr;
  if (PyTuple_GET_SIZE(filled) > kMaxArgs || required < 0) {
    PyErr_SetString(PyExc_ValueError, "_fast_defaults: too many parameters");
    return nullptr;
  }
  Py_INCREF(filled);
  Py_XSETREF(self->filled, filled);
  self->required = required;
  Py_RETURN_NONE;
}

PyObject* dispatcher_clear(Dispatcher* self, PyObject*) {
  if (PyList_SetSlice(self->entries, 0, PyList_GET_SIZE(self->entries), nullptr) < 0)
    return nullptr;
  Py_RETURN_NONE;
}

PyObject* dispatcher_count(Dispatcher* self, PyObject*) {
  return PyLong_FromSsize_t(PyList_GET_SIZE(self->entries));
}

PyMethodDef dispatcher_methods[] = {
    {"_fast_add", reinterpret_cast<PyCFunction>(dispatcher_add), METH_O,
     "Put an entry first in the list the C path tries."},
    {"_fast_defaults", reinterpret_cast<PyCFunction>(dispatcher_defaults), METH_VARARGS,
     "The parameters' defaults (every one) and how many have none: a call leaving out some "
     "is matched with them filled in."},
    {"_fast_clear", reinterpret_cast<PyCFunction>(dispatcher_clear), METH_NOARGS,
     "Forget every entry."},
    {"_fast_count", reinterpret_cast<PyCFunction>(dispatcher_count), METH_NOARGS,
     "How many entries the C path tries."},
    {nullptr, nullptr, 0, nullptr}};

PyTypeObject DispatcherType = {PyVarObject_HEAD_INIT(nullptr, 0)};

PyObject* set_paused(PyObject*, PyObject* flag) {
  const int on = PyObject_IsTrue(flag);
  if (on < 0) return nullptr;
  g_paused = on != 0;
  Py_RETURN_NONE;
}

PyMethodDef module_methods[] = {
    {"make_entry", make_entry, METH_VARARGS, "An entry of the C call path (see fastcall.py)."},
    {"set_paused", set_paused, METH_O, "Send every call to the Python path (device hooks)."},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "ccg_fastcall",
                          "The C call path of compiled functions.", -1, module_methods};

}  // namespace

PyMODINIT_FUNC PyInit_ccg_fastcall(void) {
  import_array();
  kCallSlow = PyUnicode_InternFromString("_call_slow");
  EntryType.tp_name = "ccg_fastcall.Entry";
  EntryType.tp_basicsize = sizeof(Entry);
  EntryType.tp_dealloc = reinterpret_cast<destructor>(entry_dealloc);
  EntryType.tp_flags = Py_TPFLAGS_DEFAULT;
  EntryType.tp_doc = "One argument layout's way into a compiled kernel.";
  DispatcherType.tp_name = "ccg_fastcall.Dispatcher";
  DispatcherType.tp_basicsize = sizeof(Dispatcher);
  DispatcherType.tp_dealloc = reinterpret_cast<destructor>(dispatcher_dealloc);
  DispatcherType.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE;
  DispatcherType.tp_doc = "Calls a compiled kernel from C when the arguments fit an entry.";
  DispatcherType.tp_new = dispatcher_new;
  DispatcherType.tp_call = reinterpret_cast<ternaryfunc>(dispatcher_call);
  DispatcherType.tp_methods = dispatcher_methods;
  if (kCallSlow == nullptr || PyType_Ready(&EntryType) < 0 || PyType_Ready(&DispatcherType) < 0)
    return nullptr;
  PyObject* m = PyModule_Create(&module_def);
  if (m == nullptr) return nullptr;
  Py_INCREF(&DispatcherType);
  if (PyModule_AddObject(m, "Dispatcher", reinterpret_cast<PyObject*>(&DispatcherType)) < 0) {
    Py_DECREF(&DispatcherType);
    Py_DECREF(m);
    return nullptr;
  }
  return m;
}
