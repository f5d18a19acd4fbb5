// Shared pieces of the nanobind extension axe._axe (python/CMakeLists.txt): conversions between
// Python values and axe's (shapes, axes, layout specifications) and the per-concept binders.
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <string>
#include <vector>

#include "axe/dist/mesh.hpp"
#include "axe/dist/placement.hpp"
#include "axe/layout/layout.hpp"

namespace nb = nanobind;

namespace axe::py {

void bind_errors(nb::module_& m);
void bind_layout(nb::module_& m);
void bind_cute(nb::module_& m);
void bind_linear(nb::module_& m);
void bind_dist(nb::module_& m);
void bind_plan(nb::module_& m);
void bind_runtime(nb::module_& m);

// A shape from an int or a sequence of ints; axe::Error naming `what` otherwise.
std::vector<std::int64_t> to_shape(nb::handle h, const char* what);
// The DistLayout of a specification on (shape, mesh): a DistLayout (shape and mesh must agree), an
// axe.Layout, Axe layout text ("S[...]"), placement text ("S(0),R"), or a sequence of
// axe.Shard/Replicate/Partial. axe::Error naming the specification otherwise.
DistLayout to_dist_layout(nb::handle spec, const std::vector<std::int64_t>& shape, const Mesh& mesh,
                          const char* what);
// "axe.Layout('S[4:1]')": Python's repr of a string inside a constructor call.
std::string py_repr_call(const char* ctor, const std::string& text);

}  // namespace axe::py
