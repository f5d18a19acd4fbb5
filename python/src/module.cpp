// axe._axe: the extension module of the Python package `axe` (python/axe/__init__.py re-exports
// it). C++ axe::Error becomes axe.Error (a RuntimeError), axe::ParseError axe.ParseError (also a
// ValueError, with the position in .position); nanobind maps the other C++ exceptions.
#include <Python.h>

#include "axe/core/error.hpp"
#include "common.hpp"

namespace axe::py {
namespace {
PyObject* g_error = nullptr;
PyObject* g_parse_error = nullptr;
}  // namespace

void bind_errors(nb::module_& m) {
  g_error = PyErr_NewExceptionWithDoc(
      "axe.Error", "An error of axe (the C++ library's axe::Error and its message).",
      PyExc_RuntimeError, nullptr);
  nb::object bases = nb::make_tuple(nb::handle(g_error), nb::handle(PyExc_ValueError));
  g_parse_error = PyErr_NewExceptionWithDoc(
      "axe.ParseError",
      "Malformed layout, mesh or placement text; .position is the offending character.",
      bases.ptr(), nullptr);
  m.attr("Error") = nb::handle(g_error);
  m.attr("ParseError") = nb::handle(g_parse_error);
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const ParseError& e) {
      PyObject* exc = PyObject_CallFunction(g_parse_error, "s", e.what());
      if (!exc) return;
      PyObject* pos = PyLong_FromSize_t(e.position());
      if (pos) {
        PyObject_SetAttrString(exc, "position", pos);
        Py_DECREF(pos);
      }
      PyErr_SetObject(g_parse_error, exc);
      Py_DECREF(exc);
    } catch (const Error& e) {
      PyErr_SetString(g_error, e.what());
    } catch (const nb::cast_error&) {
      // A value of the wrong Python type inside an argument (e.g. a string where a region pair
      // goes).
      PyErr_SetString(PyExc_TypeError,
                      "an argument holds a value of the wrong type (see the function's signature)");
    }
  });
}

std::string py_repr_call(const char* ctor, const std::string& text) {
  nb::str r = nb::repr(nb::str(text.c_str(), text.size()));
  return std::string(ctor) + "(" + r.c_str() + ")";
}

std::vector<std::int64_t> to_shape(nb::handle h, const char* what) {
  std::vector<std::int64_t> v;
  if (nb::isinstance<nb::int_>(h)) {
    v.push_back(nb::cast<std::int64_t>(h));
    return v;
  }
  if (nb::isinstance<nb::str>(h))
    fail(std::string(what) + ": expected a sequence of integers, got a string");
  try {
    for (nb::handle x : h) v.push_back(nb::cast<std::int64_t>(x));
  } catch (const nb::python_error&) {
    throw;
  } catch (const std::exception&) {
    fail(std::string(what) + ": expected an integer or a sequence of integers, got " +
         nb::cast<std::string>(nb::repr(h)));
  }
  return v;
}

}  // namespace axe::py

NB_MODULE(_axe, m) {
  m.doc() =
      "axe: Axe layouts, CuTe layouts, F2 linear layouts, the redistribution planner and "
      "distributed tensors";
  axe::py::bind_errors(m);
  axe::py::bind_layout(m);
  nb::module_ cute = m.def_submodule(
      "cute", "CuTe layouts, their algebra and swizzles (colexicographic, as NVIDIA CuTe)");
  axe::py::bind_cute(cute);
  nb::module_ linear = m.def_submodule(
      "linear", "F2 linear layouts, thread layouts, the bank model, swizzles and conversion plans");
  axe::py::bind_linear(linear);
  axe::py::bind_dist(m);
  axe::py::bind_plan(m);
  axe::py::bind_runtime(m);
}
