// Helpers shared by the layout-calculator subcommands (layout_commands.cpp, cute_commands.cpp):
// strict parsing of the small option values (shapes, coordinates, axis=value lists, regions)
// with messages that name the option and the offending text, and the text/JSON printers.
#pragma once

#include <algorithm>
#include <cstdint>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "axe/dist/mesh.hpp"
#include "axe/layout/layout.hpp"
#include "cli/cli.hpp"

namespace axe::cli::util {

// Elements printed by a whole-layout listing (eval without --at, cute eval): beyond this the
// command refuses instead of flooding the terminal. JSON "values" are capped at the same count.
inline constexpr std::int64_t kMaxListed = 1 << 16;

// A decimal int64 ("-12"); throws axe::Error naming `what` on bad text or 64-bit overflow.
std::int64_t parse_int(std::string_view text, std::string_view what);

// "8,16" or "(8,16)": a list of integers; empty items, junk and overflow are errors naming `what`.
std::vector<std::int64_t> parse_ints(std::string_view text, std::string_view what);

// A shape: parse_ints plus every extent > 0 and the product fits in int64.
std::vector<std::int64_t> parse_shape(std::string_view text, std::string_view what);

// A mesh option ("dp=2,tp=2", see parse_mesh); empty text and the mesh's own errors are
// axe::Error naming `what`: parse_mesh_option("", "--mesh") throws
// "--mesh: expected NAME=SIZE,... (e.g. gpu=4), got ''".
Mesh parse_mesh_option(std::string_view text, std::string_view what);

// prod(v), checked against overflow.
std::int64_t product(std::span<const std::int64_t> v, std::string_view what);

// "name=value,name=value" pairs (a name appears at most once).
std::vector<std::pair<std::string, std::int64_t>> parse_named_ints(std::string_view text,
                                                                   std::string_view what);

// "(8,16)" / "(8)"
std::string tuple_text(std::span<const std::int64_t> v);
// "[8, 16]"
std::string json_array(std::span<const std::int64_t> v);

// Row-major: the flat index of `coord` in `shape` and back.
std::int64_t flatten(std::span<const std::int64_t> coord, std::span<const std::int64_t> shape);
std::vector<std::int64_t> unflatten(std::int64_t x, std::span<const std::int64_t> shape);

// A THREADS option (--from, --to, --access): an Axe layout or a thread-layout spec on the tile
// `shape` (linear::parse_thread_layout, axe/linear/thread_spec.hpp). Errors name the option:
// "--from 'S[(8,32': parse error ..." or "--from: thread layout 'mma:2' on (32,16): ...".
AxeLayout thread_layout_option(const Args& args, std::string_view key,
                               std::span<const std::int64_t> shape);

// One line for the --help of the commands that take THREADS (the grammar: axe thread-layout
// --help).
inline constexpr const char* kThreadsHelp =
    "THREADS: an Axe layout, or blocked:SPT/TPW/WPC[/ORDER], mma:WPC, wgmma:N/WPC, "
    "slice:D:PARENT or linear:{JSON} on the --shape (axe thread-layout --help)";

// Throws "usage: <usage>" unless the number of positional arguments is in [lo, hi].
void expect_positional(const Args& args, std::size_t lo, std::size_t hi, std::string_view usage);

// A print_layout-style table (CUTLASS cute/util/print.hpp): column indices, a ruled grid of
// right-aligned cells, row indices on the left. `cell(i, j)` gives the text of row i, column j.
// `min_width` is the least cell width (CuTe uses the digits of the cosize).
std::size_t digits(std::int64_t v);  // characters of v in decimal, sign included

template <class CellFn>
void print_table(std::ostream& out, std::int64_t rows, std::int64_t cols, CellFn cell,
                 std::size_t min_width = 1) {
  std::vector<std::string> cells;
  cells.reserve(static_cast<std::size_t>(rows * cols));
  std::size_t w = min_width;
  for (std::int64_t i = 0; i < rows; ++i) {
    for (std::int64_t j = 0; j < cols; ++j) {
      cells.push_back(cell(i, j));
      w = std::max(w, cells.back().size());
    }
  }
  std::size_t label = std::max<std::size_t>(2, digits(rows - 1));
  std::string indent(label + 2, ' ');
  auto pad = [](const std::string& s, std::size_t width) {
    return std::string(width > s.size() ? width - s.size() : 0, ' ') + s;
  };
  std::string rule = indent;
  for (std::int64_t j = 0; j < cols; ++j) rule += "+" + std::string(w + 2, '-');
  rule += "+\n";
  out << indent;
  for (std::int64_t j = 0; j < cols; ++j) out << "  " << pad(std::to_string(j), w) << " ";
  out << "\n";
  for (std::int64_t i = 0; i < rows; ++i) {
    out << rule << pad(std::to_string(i), label) << "  ";
    for (std::int64_t j = 0; j < cols; ++j) {
      out << "| " << pad(cells[static_cast<std::size_t>(i * cols + j)], w) << " ";
    }
    out << "|\n";
  }
  out << rule;
}

}  // namespace axe::cli::util
