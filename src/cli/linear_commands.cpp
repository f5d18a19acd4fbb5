// `axe linear` (an Axe layout as an F2 linear layout), `axe thread-layout` (Triton-style thread
// layouts written on the command line, printed as Axe layouts) and `axe banks` (shared-memory
// wavefronts of a thread layout's accesses); include/axe/linear/. Every THREADS argument is an
// Axe layout or a thread-layout spec (blocked:..., mma:..., ...; axe/linear/thread_spec.hpp).
//
// JSON of `axe linear` (and of `axe thread-layout --json`):
//   "layout"      the Axe layout (text)
//   "in"          per axis (m first, then in order of appearance): its bases, bit 0 first, each the
//                 logical coordinate (row-major dim order) that the hardware location 2^bit holds;
//                 zeros for a broadcast bit; as many bits as the axis' span needs
//   "out"         the tile shape
//   "offset"      per axis, the layout's offset O (a location h holds the element at h - O)
//   "broadcast"   per axis, the bits along which the layout broadcasts (replicas and unused bits)
//   "injective", "surjective"
//   "duplicate_free"  the Axe layout without the broadcast bits
//   "linear"      the linear layout's own text form (dims [dim{n-1}, ..., dim0])
//
// JSON of `axe banks`: "vector_bytes", "instructions" (per warp), "warps", "wavefronts" (total
// over all warps and instructions), "ideal" (sum of ceil(distinct words / 32) per instruction),
// "per_instruction" (wavefronts of each, warp-major) and "f2_wavefronts" (the F2 formula per
// instruction for 4-byte scalar accesses, null where it does not apply).
//
// JSON of `axe swizzle`: see kSwizzleUsage (shown by `axe swizzle --help`).
#include <algorithm>
#include <cctype>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "axe/core/error.hpp"
#include "axe/layout/layout.hpp"
#include "axe/core/dtype.hpp"
#include "axe/cute/swizzle.hpp"
#include "axe/linear/banks.hpp"
#include "axe/linear/bridge.hpp"
#include "axe/linear/linear_layout.hpp"
#include "axe/linear/swizzle.hpp"
#include "axe/linear/thread_layouts.hpp"
#include "axe/linear/thread_spec.hpp"
#include "cli/cli.hpp"
#include "cli/cli_util.hpp"

namespace axe::cli {
namespace {

using linear::LinearLayout;
using util::json_array;
using util::tuple_text;

// The logical coordinate (row-major dims) of a basis whose values are in [dim{n-1}..dim0] order.
std::vector<std::int64_t> coordinate(const LinearLayout::Basis& b) {
  return std::vector<std::int64_t>(b.rbegin(), b.rend());
}

std::string bits_text(std::uint64_t mask) {
  std::string s;
  for (int i = 0; i < 64; ++i) {
    if (mask >> i & 1) s += (s.empty() ? "" : ",") + std::to_string(i);
  }
  return s;
}

void print_linear(const Args& args, std::ostream& out, const AxeLayout& l,
                  const std::vector<std::int64_t>& shape) {
  auto al = linear::to_linear(l, shape);
  const auto& ll = al.layout;
  auto masks = linear::broadcast_masks(ll);
  auto dup_free = linear::from_linear(linear::remove_duplicates(ll), al.offset).layout;
  bool inj = linear::is_injective(ll), sur = linear::is_surjective(ll);
  if (args.json) {
    out << "{\"layout\": " << json_string(to_string(l)) << ", \"in\": {";
    for (std::size_t k = 0; k < ll.in_dims().size(); ++k) {
      const auto& d = ll.in_dims()[k];
      out << (k ? ", " : "") << json_string(d.name) << ": [";
      for (int i = 0; i < d.bits; ++i) out << (i ? ", " : "") << json_array(coordinate(ll.basis(d.name, i)));
      out << "]";
    }
    out << "}, \"out\": " << json_array(shape) << ", \"offset\": {";
    for (std::size_t k = 0; k < al.offset.size(); ++k) {
      out << (k ? ", " : "") << json_string(al.offset[k].first) << ": " << al.offset[k].second;
    }
    out << "}, \"broadcast\": {";
    for (std::size_t k = 0; k < masks.size(); ++k) {
      out << (k ? ", " : "") << json_string(masks[k].first) << ": [" << bits_text(masks[k].second) << "]";
    }
    out << "}, \"injective\": " << (inj ? "true" : "false")
        << ", \"surjective\": " << (sur ? "true" : "false")
        << ", \"duplicate_free\": " << json_string(to_string(dup_free))
        << ", \"linear\": " << json_string(linear::to_string(ll)) << "}\n";
    return;
  }
  out << to_string(l) << " on " << tuple_text(shape)
      << ": hardware bit -> logical coordinate\n";
  std::size_t width = 0;
  for (const auto& d : ll.in_dims()) width = std::max(width, d.name.size());
  for (const auto& d : ll.in_dims()) {
    out << "  " << d.name << ":" << std::string(width - d.name.size() + 1, ' ') << "[";
    for (int i = 0; i < d.bits; ++i) out << (i ? ", " : "") << tuple_text(coordinate(ll.basis(d.name, i)));
    out << "]\n";
  }
  if (!al.offset.empty()) {
    out << "offset:";
    for (const auto& [a, v] : al.offset) out << " " << a << " " << v;
    out << "\n";
  }
  std::string bc;
  for (const auto& [a, m] : masks) {
    if (m) bc += (bc.empty() ? "" : "; ") + a + " bits " + bits_text(m);
  }
  out << "broadcast: " << (bc.empty() ? "none" : bc) << "\n";
  out << "injective: " << (inj ? "yes" : "no") << ", surjective: " << (sur ? "yes" : "no") << "\n";
  if (!inj) out << "duplicate-free: " << to_string(dup_free) << "\n";
}

// --- linear -------------------------------------------------------------------------------------

constexpr const char* kLinearUsage = "linear LAYOUT [--shape 8,16]";

int run_linear(const Args& args, std::ostream& out) {
  args.allow_only({"shape"});
  util::expect_positional(args, 1, 1, kLinearUsage);
  AxeLayout l = parse_axe_layout(args.positional[0]);
  std::vector<std::int64_t> shape{l.size()};
  if (args.has("shape")) shape = util::parse_shape(args.get("shape"), "--shape");
  auto why = linear::linear_refusal(l, shape);
  if (!why.empty()) fail("no linear layout for " + to_string(l) + ": " + why);
  print_linear(args, out, l, shape);
  return 0;
}

// --- thread-layout ------------------------------------------------------------------------------

// The short form for usage errors; --help adds the spec grammar (thread_layout_spec_help).
constexpr const char* kThreadUsage =
    "thread-layout SPEC --shape S   (SPEC: blocked:SPT/TPW/WPC[/ORDER], mma:WPC, wgmma:N/WPC,\n"
    "    slice:D:PARENT, linear:{JSON} or an Axe layout; printed as an Axe layout)\n"
    "  thread-layout blocked --shape S --size-per-thread A --threads-per-warp B --warps-per-cta C "
    "[--order O] [--slice D]\n"
    "  thread-layout mma --shape S --warps-per-cta C [--slice D]   (mma.sync m16n8 accumulator)\n"
    "  thread-layout wgmma --shape S --n N --warps-per-cta C [--slice D]   (wgmma 16xNxK "
    "accumulator)";

std::vector<std::int64_t> list_option(const Args& args, std::string_view key) {
  return util::parse_ints(args.get(key), "--" + std::string(key));
}

bool is_flag_kind(std::string_view kind) {
  return kind == "blocked" || kind == "mma" || kind == "wgmma";
}

int run_thread_layout(const Args& args, std::ostream& out) {
  util::expect_positional(args, 1, 1, kThreadUsage);
  const std::string& kind = args.positional[0];
  if (!is_flag_kind(kind)) {
    // A bare word is a misspelt kind, not an Axe layout (those start with "S[").
    if (!kind.empty() && std::all_of(kind.begin(), kind.end(), [](char c) {
          return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
        })) {
      fail("unknown thread layout '" + kind +
           "' (expected blocked, mma or wgmma with flags, or a spec such as "
           "blocked:1,4/8,4/4,1 or mma:2,2; see axe thread-layout --help)");
    }
    args.allow_only({"shape"});
    auto shape = util::parse_shape(args.get("shape"), "--shape");
    AxeLayout l = linear::parse_thread_layout(kind, shape);
    if (args.json) {
      print_linear(args, out, l, shape);
    } else {
      out << to_string(l) << "\n";
    }
    return 0;
  }
  auto shape = util::parse_shape(args.get("shape"), "--shape");
  // With --slice D the parent is built on the shape with extent 1 inserted at D.
  std::vector<std::int64_t> parent_shape = shape;
  int slice_dim = -1;
  if (args.has("slice")) {
    std::int64_t d = util::parse_int(args.get("slice"), "--slice");
    if (d < 0 || d > static_cast<std::int64_t>(shape.size())) {
      fail("--slice " + std::to_string(d) + " is not a dim in 0.." + std::to_string(shape.size()) +
           " of the parent of " + tuple_text(shape));
    }
    slice_dim = static_cast<int>(d);
    parent_shape.insert(parent_shape.begin() + d, 1);
  }
  LinearLayout ll;
  if (kind == "blocked") {
    args.allow_only({"shape", "slice", "size-per-thread", "threads-per-warp", "warps-per-cta", "order"});
    std::vector<std::int64_t> order;
    if (args.has("order")) order = list_option(args, "order");
    ll = linear::blocked_layout(parent_shape, list_option(args, "size-per-thread"),
                                list_option(args, "threads-per-warp"),
                                list_option(args, "warps-per-cta"), order);
  } else if (kind == "mma") {
    args.allow_only({"shape", "slice", "warps-per-cta"});
    ll = linear::mma_accumulator(parent_shape, list_option(args, "warps-per-cta"));
  } else {  // wgmma
    args.allow_only({"shape", "slice", "n", "warps-per-cta"});
    ll = linear::wgmma_accumulator(parent_shape, util::parse_int(args.get("n"), "--n"),
                                   list_option(args, "warps-per-cta"));
  }
  if (slice_dim >= 0) ll = linear::slice_layout(ll, slice_dim);
  AxeLayout l = linear::from_linear(ll).layout;
  if (args.json) {
    print_linear(args, out, l, shape);
  } else {
    out << to_string(l) << "\n";
  }
  return 0;
}

// --- banks --------------------------------------------------------------------------------------

constexpr const char* kBanksUsage =
    "banks SMEM --access THREADS --shape S --dtype T [--swizzle B,M,S]   (SMEM: an Axe layout)";

int run_banks(const Args& args, std::ostream& out) {
  args.allow_only({"access", "shape", "dtype", "swizzle"});
  util::expect_positional(args, 1, 1, kBanksUsage);
  AxeLayout smem = parse_axe_layout(args.positional[0]);
  auto shape = util::parse_shape(args.get("shape"), "--shape");
  AxeLayout threads = util::thread_layout_option(args, "access", shape);
  std::int64_t bytes = size_of(parse_dtype(args.get("dtype")));
  std::optional<cute::Swizzle> sw;
  if (args.has("swizzle")) {
    auto v = util::parse_ints(args.get("swizzle"), "--swizzle");
    if (v.size() != 3) fail("--swizzle: expected B,M,S, got '" + args.get("swizzle") + "'");
    for (auto x : v) {
      if (x < -64 || x > 64) fail("--swizzle: " + std::to_string(x) + " is out of range");
    }
    sw = cute::Swizzle(static_cast<int>(v[0]), static_cast<int>(v[1]), static_cast<int>(v[2]));
  }
  auto rep = linear::bank_conflicts(smem, threads, shape, bytes, sw);
  std::optional<std::int64_t> f2;
  if (bytes == 4 && rep.vector_bytes == 4) f2 = linear::f2_wavefronts(smem, threads, shape, sw);
  if (args.json) {
    out << "{\"vector_bytes\": " << rep.vector_bytes << ", \"instructions\": " << rep.instructions
        << ", \"warps\": " << rep.warps << ", \"wavefronts\": " << rep.wavefronts
        << ", \"ideal\": " << rep.ideal << ", \"per_instruction\": " << json_array(rep.per_instruction)
        << ", \"f2_wavefronts\": " << (f2 ? std::to_string(*f2) : std::string("null")) << "}\n";
    return 0;
  }
  out << rep.warps << " warp(s) x " << rep.instructions << " instruction(s) of " << rep.vector_bytes
      << " bytes per lane\n";
  out << "wavefronts per instruction: " << tuple_text(rep.per_instruction) << "\n";
  out << "total " << rep.wavefronts << " wavefronts, ideal " << rep.ideal << "\n";
  if (f2) out << "F2 formula: " << *f2 << " per instruction\n";
  return 0;
}


// --- swizzle ------------------------------------------------------------------------------------

constexpr const char* kSwizzleUsage =
    "swizzle --from THREADS --to THREADS --shape S --dtype T   (optimal shared layout for a\n"
    "    register -> shared -> register exchange; --json keys: \"offset_bases\" (bit i: the\n"
    "    logical coordinate, row-major, at shared element offset 2^i; XOR-linear),\n"
    "    \"store_wavefronts\", \"load_wavefronts\" (totals over all warps), \"store_vector_bytes\",\n"
    "    \"load_vector_bytes\", \"store_instructions\", \"load_instructions\" (per warp), \"origin\"\n"
    "    (generic, swizzle or row-major), \"swizzle\" and \"axe_layout\" (the layout as\n"
    "    Sw<B,M,S> o Axe layout, null when not expressible), \"row_major\" and \"best_swizzle\"\n"
    "    (the same costs, best_swizzle with its \"swizzle\"; null when none fits))";

void json_costs(std::ostream& out, const linear::ExchangeCost& c) {
  out << "\"store_wavefronts\": " << c.store.wavefronts << ", \"load_wavefronts\": " << c.load.wavefronts
      << ", \"store_vector_bytes\": " << c.store.vector_bytes
      << ", \"load_vector_bytes\": " << c.load.vector_bytes
      << ", \"store_instructions\": " << c.store.instructions
      << ", \"load_instructions\": " << c.load.instructions;
}

int run_swizzle(const Args& args, std::ostream& out) {
  args.allow_only({"from", "to", "shape", "dtype"});
  util::expect_positional(args, 0, 0, kSwizzleUsage);
  auto shape = util::parse_shape(args.get("shape"), "--shape");
  AxeLayout from = util::thread_layout_option(args, "from", shape);
  AxeLayout to = util::thread_layout_option(args, "to", shape);
  std::int64_t bytes = size_of(parse_dtype(args.get("dtype")));
  auto plan = linear::optimal_swizzle(from, to, shape, bytes);
  const auto& ll = plan.shared;
  std::string sw_text, axe_text;
  if (plan.axe) {
    sw_text = cute::to_string(plan.axe->swizzle);
    axe_text = to_string(plan.axe->layout);
  }
  if (args.json) {
    out << "{\"offset_bases\": [";
    for (int i = 0; i < ll.in_bits("m"); ++i) out << (i ? ", " : "") << json_array(coordinate(ll.basis("m", i)));
    out << "], ";
    json_costs(out, plan.cost);
    out << ", \"origin\": " << json_string(plan.origin) << ", \"swizzle\": "
        << (plan.axe ? json_string(sw_text) : "null")
        << ", \"axe_layout\": " << (plan.axe ? json_string(axe_text) : "null") << ", \"row_major\": {";
    json_costs(out, plan.row_major);
    out << "}, \"best_swizzle\": ";
    if (plan.best_swizzle) {
      out << "{\"swizzle\": " << json_string(cute::to_string(*plan.best_swizzle)) << ", ";
      json_costs(out, plan.best_swizzle_cost);
      out << "}";
    } else {
      out << "null";
    }
    out << ", \"linear\": " << json_string(linear::to_string(ll)) << "}\n";
    return 0;
  }
  out << "shared layout (" << plan.origin << "): offset bit -> logical coordinate\n  m: [";
  for (int i = 0; i < ll.in_bits("m"); ++i) out << (i ? ", " : "") << tuple_text(coordinate(ll.basis("m", i)));
  out << "]\n";
  if (plan.axe) {
    out << "as Swizzle o Axe layout: " << sw_text << " o " << axe_text << "\n";
  } else {
    out << "as Swizzle o Axe layout: not expressible (no Sw<B,M,S> leaves a bit permutation)\n";
  }
  out << "chosen:    " << linear::to_string(plan.cost) << "\n";
  out << "row-major: " << linear::to_string(plan.row_major) << "\n";
  if (plan.best_swizzle) {
    out << "best " << cute::to_string(*plan.best_swizzle) << " over row-major: "
        << linear::to_string(plan.best_swizzle_cost) << "\n";
  } else {
    out << "best Sw<B,M,S> over row-major: none fits the tile\n";
  }
  return 0;
}

const bool registered = [] {
  register_command({"linear", kLinearUsage, &run_linear});
  static const std::string banks = std::string(kBanksUsage) + "\n    " + util::kThreadsHelp;
  static const std::string thread_layout =
      std::string(kThreadUsage) + "\n  " + linear::thread_layout_spec_help();
  static const std::string swizzle = std::string(kSwizzleUsage) + "\n    " + util::kThreadsHelp;
  register_command({"banks", banks.c_str(), &run_banks});
  register_command({"thread-layout", thread_layout.c_str(), &run_thread_layout});
  register_command({"swizzle", swizzle.c_str(), &run_swizzle});
  return true;
}();

}  // namespace
}  // namespace axe::cli
