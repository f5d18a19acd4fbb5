// Subcommands over Axe layouts (DESIGN.md §2.2): eval, backward, canon, span, group, tile, slice,
// storage, validate. Each parses its layout operands with parse_axe_layout (so malformed text is
// reported with its position), checks the option values against the layout before calling the
// library, and prints either one human-readable result or, with --json, one JSON object.
//
// Logical shapes are row-major (last dim fastest), as the layouts' D. --shape defaults to the
// 1-D shape (size) of the layout.
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "axe/layout/layout.hpp"
#include "axe/core/error.hpp"
#include "cli/cli.hpp"
#include "cli/cli_util.hpp"

namespace axe::cli {
namespace {

using util::json_array;
using util::tuple_text;

// --- shared pieces ------------------------------------------------------------------------------

// The logical shape of `l` from --`key` (default: (size)); its product must equal size(l).
std::vector<std::int64_t> shape_for(const AxeLayout& l, const Args& args,
                                    std::string_view key = "shape") {
  if (!args.has(key)) return {l.size()};
  std::string what = "--" + std::string(key);
  auto shape = util::parse_shape(args.get(key), what);
  std::int64_t n = util::product(shape, what);
  if (n != l.size()) {
    fail(what + " " + tuple_text(shape) + " has " + std::to_string(n) + " elements but " +
         to_string(l) + " has " + std::to_string(l.size()));
  }
  return shape;
}

// A logical coordinate of `shape` given as --`what`, each entry in [0, shape[k]).
std::vector<std::int64_t> coord_in(std::string_view text, const std::vector<std::int64_t>& shape,
                                   std::string_view what) {
  auto c = util::parse_ints(text, what);
  if (c.size() != shape.size()) {
    fail(std::string(what) + " " + tuple_text(c) + " has " + std::to_string(c.size()) +
         " entries but the shape " + tuple_text(shape) + " has rank " +
         std::to_string(shape.size()));
  }
  for (std::size_t k = 0; k < c.size(); ++k) {
    if (c[k] < 0 || c[k] >= shape[k]) {
      fail(std::string(what) + " " + tuple_text(c) + ": coordinate " + std::to_string(c[k]) +
           " of dim " + std::to_string(k) + " is out of range [0, " + std::to_string(shape[k]) +
           ")");
    }
  }
  return c;
}

// The axes to show for `l`: its own (m last); `m` alone for a layout that names none.
std::vector<Axis> axes_of(const AxeLayout& l) {
  auto axes = l.axes();
  if (axes.empty()) axes.push_back(Axis::memory());
  return axes;
}

// "{lane 8, warp 6, m 1}": every axis of the layout, in the layout's order.
std::string coord_text(const PhysCoord& c, const std::vector<Axis>& axes) {
  std::string s = "{";
  for (std::size_t k = 0; k < axes.size(); ++k) {
    s += (k ? ", " : "") + std::string(axes[k].name()) + " " + std::to_string(c[axes[k]]);
  }
  return s + "}";
}

// {"lane": 8, "warp": 6, "m": 1}
std::string coord_json(const PhysCoord& c, const std::vector<Axis>& axes) {
  std::string s = "{";
  for (std::size_t k = 0; k < axes.size(); ++k) {
    s += (k ? ", " : "") + json_string(axes[k].name()) + ": " + std::to_string(c[axes[k]]);
  }
  return s + "}";
}

// "8,6,1": a compact coordinate for table cells (axis order given in the header).
std::string coord_cell(const PhysCoord& c, const std::vector<Axis>& axes) {
  std::string s;
  for (std::size_t k = 0; k < axes.size(); ++k) s += (k ? "," : "") + std::to_string(c[axes[k]]);
  return s;
}

std::string axes_tuple(const std::vector<Axis>& axes) {
  std::string s = "(";
  for (std::size_t k = 0; k < axes.size(); ++k) s += (k ? "," : "") + std::string(axes[k].name());
  return s + ")";
}

// "[{...}, {...}]" for the coordinates, plus the replica and term of each, in forward's order.
struct PlacementsJson {
  std::string coords, replica, term;
};
PlacementsJson placements_json(const std::vector<Placement>& ps, const std::vector<Axis>& axes) {
  PlacementsJson j{"[", "[", "["};
  for (std::size_t k = 0; k < ps.size(); ++k) {
    const char* sep = k ? ", " : "";
    j.coords += sep + coord_json(ps[k].coord, axes);
    j.replica += sep + std::to_string(ps[k].replica);
    j.term += sep + std::to_string(ps[k].term);
  }
  j.coords += "]";
  j.replica += "]";
  j.term += "]";
  return j;
}

void print_result(const Args& args, std::ostream& out, const AxeLayout& result) {
  if (args.json) {
    out << "{\"result\": " << json_string(to_string(result)) << "}\n";
  } else {
    out << to_string(result) << "\n";
  }
}

// --- eval ---------------------------------------------------------------------------------------

constexpr const char* kEvalUsage = "eval LAYOUT [--shape 8,16] [--at 2,9]";

int run_eval(const Args& args, std::ostream& out) {
  args.allow_only({"shape", "at"});
  util::expect_positional(args, 1, 1, kEvalUsage);
  AxeLayout l = parse_axe_layout(args.positional[0]);
  auto shape = shape_for(l, args);
  auto axes = axes_of(l);
  bool annotate_replica = l.replicas() > 1, annotate_term = l.terms() > 1;
  // Every element has replicas() * terms() placements; refuse to print unbounded output.
  std::int64_t copies = checked_mul(l.replicas(), l.terms(), "replicas * terms");
  if (copies > util::kMaxListed) {
    fail(to_string(l) + " places each element " + std::to_string(copies) +
         " times (replicas x partial terms), too many to list (limit " +
         std::to_string(util::kMaxListed) + ")");
  }

  if (args.has("at")) {
    auto at = coord_in(args.get("at"), shape, "--at");
    std::int64_t x = util::flatten(at, shape);
    auto ps = l.forward(x);
    if (args.json) {
      auto j = placements_json(ps, axes);
      out << "{\"at\": " << json_array(at) << ", \"index\": " << x << ", \"coords\": " << j.coords
          << ", \"replica\": " << j.replica << ", \"term\": " << j.term << "}\n";
      return 0;
    }
    for (const auto& p : ps) {
      out << coord_text(p.coord, axes);
      if (annotate_replica) out << "  replica " << p.replica;
      if (annotate_term) out << "  term " << p.term;
      out << "\n";
    }
    return 0;
  }

  if (l.size() > util::kMaxListed / copies) {
    fail(to_string(l) + " has " + std::to_string(l.size()) + " elements" +
         (copies > 1 ? " x " + std::to_string(copies) + " placements" : std::string()) +
         ", too many to list (limit " + std::to_string(util::kMaxListed) + "); use --at");
  }
  if (args.json) {
    out << "{\"layout\": " << json_string(to_string(l)) << ", \"shape\": " << json_array(shape)
        << ", \"axes\": [";
    for (std::size_t k = 0; k < axes.size(); ++k)
      out << (k ? ", " : "") << json_string(axes[k].name());
    out << "], \"elements\": [";
    for (std::int64_t x = 0; x < l.size(); ++x) {
      auto j = placements_json(l.forward(x), axes);
      out << (x ? ", " : "") << "{\"at\": " << json_array(util::unflatten(x, shape))
          << ", \"coords\": " << j.coords << "}";
    }
    out << "]}\n";
    return 0;
  }
  if (shape.size() == 2) {
    // print_layout: one cell per logical (row, column), listing its coordinates; a cell with
    // several placements (replicas, partial terms) lists them separated by spaces.
    out << to_string(l) << " on " << tuple_text(shape) << ", cells " << axes_tuple(axes) << "\n";
    util::print_table(out, shape[0], shape[1], [&](std::int64_t i, std::int64_t j) {
      std::string cell;
      for (const auto& p : l.forward(i * shape[1] + j)) {
        cell += (cell.empty() ? "" : " ") + coord_cell(p.coord, axes);
      }
      return cell;
    });
    return 0;
  }
  for (std::int64_t x = 0; x < l.size(); ++x) {
    out << tuple_text(util::unflatten(x, shape)) << " ->";
    const char* sep = " ";
    for (const auto& p : l.forward(x)) {
      out << sep << coord_text(p.coord, axes);
      sep = ", ";
    }
    out << "\n";
  }
  return 0;
}

// --- backward -----------------------------------------------------------------------------------

constexpr const char* kBackwardUsage = "backward LAYOUT [--shape S] --at lane=8,warp=6,m=1";

int run_backward(const Args& args, std::ostream& out) {
  args.allow_only({"shape", "at"});
  util::expect_positional(args, 1, 1, kBackwardUsage);
  AxeLayout l = parse_axe_layout(args.positional[0]);
  auto shape = shape_for(l, args);
  PhysCoord c;
  for (const auto& [name, value] : util::parse_named_ints(args.get("at"), "--at")) {
    c.set(Axis(name), value);
  }
  auto pre = l.backward(c);
  if (!pre) {
    if (args.json) {
      out << "{\"held\": false}\n";
    } else {
      out << "not held\n";
    }
    return 1;
  }
  auto at = util::unflatten(pre->index, shape);
  if (args.json) {
    out << "{\"held\": true, \"at\": " << json_array(at) << ", \"index\": " << pre->index
        << ", \"replica\": " << pre->replica << ", \"term\": " << pre->term << "}\n";
    return 0;
  }
  out << tuple_text(at);
  if (l.replicas() > 1) out << "  replica " << pre->replica;
  if (l.terms() > 1) out << "  term " << pre->term;
  out << "\n";
  return 0;
}

// --- canon, span, storage
// -------------------------------------------------------------------------

int run_canon(const Args& args, std::ostream& out) {
  args.allow_only({});
  util::expect_positional(args, 1, 1, "canon LAYOUT");
  print_result(args, out, canonicalize(parse_axe_layout(args.positional[0])));
  return 0;
}

int run_storage(const Args& args, std::ostream& out) {
  args.allow_only({});
  util::expect_positional(args, 1, 1, "storage LAYOUT");
  print_result(args, out, storage(parse_axe_layout(args.positional[0])));
  return 0;
}

int run_span(const Args& args, std::ostream& out) {
  args.allow_only({});
  util::expect_positional(args, 1, 1, "span LAYOUT");
  AxeLayout l = parse_axe_layout(args.positional[0]);
  auto axes = axes_of(l);
  PhysCoord span;
  for (const auto& a : axes) span.set(a, l.span(a));
  if (args.json) {
    out << "{\"span\": " << coord_json(span, axes) << ", \"size\": " << l.size()
        << ", \"replicas\": " << l.replicas() << ", \"terms\": " << l.terms() << "}\n";
  } else {
    out << coord_text(span, axes) << "\n";
  }
  return 0;
}

// --- group --------------------------------------------------------------------------------------

int run_group(const Args& args, std::ostream& out) {
  args.allow_only({"shape"});
  util::expect_positional(args, 1, 1, "group LAYOUT --shape S");
  AxeLayout l = parse_axe_layout(args.positional[0]);
  auto shape = util::parse_shape(args.get("shape"), "--shape");
  auto g = group(l, shape);
  if (!g) {
    fail(to_string(l) + " cannot be grouped by " + tuple_text(shape) +
         ": an iter's extent does not split along the shape");
  }
  std::vector<std::int64_t> b(g->boundaries.begin(), g->boundaries.end());
  if (args.json) {
    out << "{\"result\": " << json_string(to_string(g->layout))
        << ", \"boundaries\": " << json_array(b) << "}\n";
  } else {
    std::string bs = "[";
    for (std::size_t k = 0; k < b.size(); ++k) bs += (k ? "," : "") + std::to_string(b[k]);
    out << to_string(g->layout) << "\nboundaries " << bs << "]\n";
  }
  return 0;
}

// --- tile ---------------------------------------------------------------------------------------

int run_tile(const Args& args, std::ostream& out) {
  args.allow_only({"outer-shape", "inner-shape"});
  util::expect_positional(args, 2, 2, "tile OUTER INNER --outer-shape A --inner-shape B");
  AxeLayout outer = parse_axe_layout(args.positional[0]);
  AxeLayout inner = parse_axe_layout(args.positional[1]);
  auto outer_shape = shape_for(outer, args, "outer-shape");
  auto inner_shape = shape_for(inner, args, "inner-shape");
  if (outer_shape.size() != inner_shape.size()) {
    fail("--outer-shape " + tuple_text(outer_shape) + " and --inner-shape " +
         tuple_text(inner_shape) + " must have the same rank");
  }
  AxeLayout r = tile(outer, outer_shape, inner, inner_shape);
  if (args.json) {
    std::vector<std::int64_t> shape(outer_shape.size());
    for (std::size_t k = 0; k < shape.size(); ++k) {
      shape[k] = checked_mul(outer_shape[k], inner_shape[k], "tile shape");
    }
    out << "{\"result\": " << json_string(to_string(r))
        << ", \"canonical\": " << json_string(to_string(canonicalize(r)))
        << ", \"shape\": " << json_array(shape) << "}\n";
  } else {
    out << to_string(r) << "\n";
  }
  return 0;
}

// --- slice --------------------------------------------------------------------------------------

constexpr const char* kSliceUsage = "slice LAYOUT [--shape S] --region 0:8,8:24";

int run_slice(const Args& args, std::ostream& out) {
  args.allow_only({"shape", "region"});
  util::expect_positional(args, 1, 1, kSliceUsage);
  AxeLayout l = parse_axe_layout(args.positional[0]);
  auto shape = shape_for(l, args);
  const std::string& text = args.get("region");
  std::vector<Range> region;
  std::vector<std::int64_t> sub_shape;
  std::size_t pos = 0;
  while (true) {
    std::size_t end = text.find(',', pos);
    std::string item = text.substr(pos, end == std::string::npos ? end : end - pos);
    auto colon = item.find(':');
    if (colon == std::string::npos) {
      fail("--region: expected begin:end, got '" + item + "' in '" + text + "'");
    }
    Range r{util::parse_int(item.substr(0, colon), "--region begin"),
            util::parse_int(item.substr(colon + 1), "--region end")};
    std::size_t k = region.size();
    if (k < shape.size() && (r.begin < 0 || r.end > shape[k] || r.begin >= r.end)) {
      fail("--region: range " + item + " of dim " + std::to_string(k) +
           " must satisfy 0 <= begin < end <= " + std::to_string(shape[k]));
    }
    region.push_back(r);
    sub_shape.push_back(r.end - r.begin);
    if (end == std::string::npos) break;
    pos = end + 1;
  }
  if (region.size() != shape.size()) {
    fail("--region '" + text + "' has " + std::to_string(region.size()) + " ranges but the shape " +
         tuple_text(shape) + " has rank " + std::to_string(shape.size()));
  }
  auto r = slice(l, shape, region);
  if (!r) {
    fail("the region '" + text + "' of " + to_string(l) + " on " + tuple_text(shape) +
         " is not a layout (neither the no-wrap nor the one-wrap rule applies)");
  }
  if (args.json) {
    out << "{\"result\": " << json_string(to_string(*r)) << ", \"shape\": " << json_array(sub_shape)
        << "}\n";
  } else {
    out << to_string(*r) << "\n";
  }
  return 0;
}

// --- validate -----------------------------------------------------------------------------------

int run_validate(const Args& args, std::ostream& out) {
  args.allow_only({"mesh"});
  util::expect_positional(args, 1, 1, "validate LAYOUT [--mesh gpu=4,...]");
  AxeLayout l = parse_axe_layout(args.positional[0]);
  std::vector<std::pair<Axis, std::int64_t>> mesh;
  if (args.has("mesh")) {
    for (const auto& [name, extent] : util::parse_named_ints(args.get("mesh"), "--mesh")) {
      if (extent <= 0) {
        fail("--mesh: axis " + name + " has extent " + std::to_string(extent) +
             ", must be positive");
      }
      mesh.emplace_back(Axis(name), extent);
    }
  }
  std::string why = check_valid(l, mesh);
  if (args.json) {
    out << "{\"valid\": " << (why.empty() ? "true" : "false");
    if (!why.empty()) out << ", \"reason\": " << json_string(why);
    out << "}\n";
  } else {
    out << (why.empty() ? "valid" : "invalid: " + why) << "\n";
  }
  return why.empty() ? 0 : 1;
}

const bool registered = [] {
  register_command({"eval", kEvalUsage, &run_eval});
  register_command({"backward", kBackwardUsage, &run_backward});
  register_command({"canon", "canon LAYOUT", &run_canon});
  register_command({"span", "span LAYOUT", &run_span});
  register_command({"group", "group LAYOUT --shape S", &run_group});
  register_command({"tile", "tile OUTER INNER --outer-shape A --inner-shape B", &run_tile});
  register_command({"slice", kSliceUsage, &run_slice});
  register_command({"storage", "storage LAYOUT", &run_storage});
  register_command({"validate", "validate LAYOUT [--mesh gpu=4,...]", &run_validate});
  return true;
}();

}  // namespace
}  // namespace axe::cli
