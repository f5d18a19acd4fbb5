// Blocked, mma.sync and wgmma accumulator layouts and slices (Triton's LinearLayoutConversions).
#include "axe/linear/thread_layouts.hpp"

#include <algorithm>
#include <bit>

#include "axe/core/error.hpp"
#include "axe/linear/bridge.hpp"
#include "linear/internal.hpp"

namespace axe::linear {
namespace {

std::string list_text(std::span<const std::int64_t> v) {
  std::string s = "(";
  for (std::size_t k = 0; k < v.size(); ++k) s += (k ? "," : "") + std::to_string(v[k]);
  return s + ")";
}

void check_list(std::span<const std::int64_t> v, std::size_t rank, const char* what) {
  if (v.size() != rank) {
    fail(std::string(what) + " " + list_text(v) + " has " + std::to_string(v.size()) +
         " entries but the shape has rank " + std::to_string(rank));
  }
  for (std::size_t k = 0; k < v.size(); ++k) {
    if (!internal::is_pow2(v[k]) || v[k] > (std::int64_t{1} << 30)) {
      fail(std::string(what) + " " + list_text(v) + ": entry " + std::to_string(v[k]) + " of dim " +
           std::to_string(k) + " is not a power of two in [1, 2^30]");
    }
  }
}

std::string dim_name(std::size_t k) { return "dim" + std::to_string(k); }

// k of an output dim named "dimK" with K < rank; `what` names the caller in the error.
std::size_t dim_index(const std::string& name, std::size_t rank, const char* what) {
  std::size_t k = 0;
  bool ok = name.size() > 3 && name.size() <= 6 && name.compare(0, 3, "dim") == 0;
  for (std::size_t i = 3; ok && i < name.size(); ++i) {
    ok = name[i] >= '0' && name[i] <= '9';
    k = k * 10 + static_cast<std::size_t>(name[i] - '0');
  }
  if (!ok || k >= rank)
    fail(std::string(what) + ": output dim '" + name + "' is not a logical dim dim0..dim" + std::to_string(rank - 1) +
         " (thread layouts map m, lane, warp to dim0, dim1, ...)");
  return k;
}

// Identity of in-dim `in` over `sizes`, dims taken in `order` (fastest first).
LinearLayout identity_nd(const std::string& in, std::span<const std::int64_t> sizes,
                         std::span<const std::int64_t> order) {
  LinearLayout l;
  for (auto d : order) {
    auto k = static_cast<std::size_t>(d);
    l = l * LinearLayout::identity_1d(sizes[k], in, dim_name(k));
  }
  return l;
}

// Triton's combineCtaCgaWithShape for one CTA: grow `m` until every output dim covers the
// shape, zero the bases beyond it, then put the output dims in the standard order.
LinearLayout fit_to_shape(LinearLayout l, std::span<const std::int64_t> shape) {
  for (const auto& d : std::vector<Dim>(l.out_dims())) {
    const std::size_t k = dim_index(d.name, shape.size(), "thread layout");
    if (d.size() < shape[k]) {
      l = l * LinearLayout::identity_1d(shape[k] / d.size(), "m", d.name);
    }
  }
  // Every input dim of the standard three, even of size 1, so that printing and converting
  // always see m, lane, warp.
  for (const char* in : {"m", "lane", "warp"}) {
    if (!l.has_in_dim(in)) {
      l = concat_ins(l, LinearLayout::from_columns({{in, 0}}, l.out_dims(), {}, false));
    }
  }
  LinearLayout::InBases bases;
  for (const auto& in : std::vector<std::string>{"m", "lane", "warp"}) {
    auto list = l.bases(in);
    for (auto& b : list) {
      for (std::size_t j = 0; j < b.size(); ++j) {
        const std::size_t k = dim_index(l.out_dims()[j].name, shape.size(), "thread layout");
        if (b[j] >= shape[k]) b[j] = 0;
      }
    }
    bases.emplace_back(in, std::move(list));
  }
  LinearLayout::OutSizes outs;
  for (const auto& d : l.out_dims()) {
    const std::size_t k = dim_index(d.name, shape.size(), "thread layout");
    outs.emplace_back(d.name, std::min(d.size(), shape[k]));
  }
  LinearLayout fitted(std::move(bases), std::move(outs));
  std::vector<std::string> standard;
  for (std::size_t k = shape.size(); k-- > 0;) standard.push_back(dim_name(k));
  return transpose_outs(fitted, standard);
}

void check_shape(std::span<const std::int64_t> shape, std::size_t rank_min, std::size_t rank_max,
                 const char* what) {
  if (shape.size() < rank_min || shape.size() > rank_max) {
    fail(std::string(what) + ": the shape " + list_text(shape) + " has rank " +
         std::to_string(shape.size()) + " (expected " +
         (rank_min == rank_max ? std::to_string(rank_min)
                               : std::to_string(rank_min) + ".." + std::to_string(rank_max)) +
         ")");
  }
  (void)logical_dims(shape);  // powers of two
  std::int64_t n = 1;
  for (auto e : shape) {
    if (__builtin_mul_overflow(n, e, &n) || n > (std::int64_t{1} << 40)) {
      fail(std::string(what) + ": the shape " + list_text(shape) + " has more than 2^40 elements");
    }
  }
}

}  // namespace

LinearLayout blocked_layout(std::span<const std::int64_t> shape,
                            std::span<const std::int64_t> size_per_thread,
                            std::span<const std::int64_t> threads_per_warp,
                            std::span<const std::int64_t> warps_per_cta,
                            std::span<const std::int64_t> order) {
  check_shape(shape, 1, 8, "blocked layout");
  check_list(size_per_thread, shape.size(), "size per thread");
  check_list(threads_per_warp, shape.size(), "threads per warp");
  check_list(warps_per_cta, shape.size(), "warps per CTA");
  std::int64_t lanes = 1;
  for (auto t : threads_per_warp) lanes *= t;
  if (lanes != 32) {
    fail("threads per warp " + list_text(threads_per_warp) + " multiply to " +
         std::to_string(lanes) + ", not 32");
  }
  std::vector<std::int64_t> ord(order.begin(), order.end());
  if (ord.empty()) {
    for (std::size_t k = shape.size(); k-- > 0;) ord.push_back(static_cast<std::int64_t>(k));
  }
  auto sorted = ord;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t k = 0; k < sorted.size(); ++k) {
    if (sorted.size() != shape.size() || sorted[k] != static_cast<std::int64_t>(k)) {
      fail("order " + list_text(ord) + " is not a permutation of 0.." +
           std::to_string(shape.size() - 1));
    }
  }
  if (sorted.size() != shape.size()) {
    fail("order " + list_text(ord) + " is not a permutation of 0.." + std::to_string(shape.size() - 1));
  }
  auto cta = identity_nd("m", size_per_thread, ord) * identity_nd("lane", threads_per_warp, ord) *
             identity_nd("warp", warps_per_cta, ord);
  return fit_to_shape(cta, shape);
}

LinearLayout mma_accumulator(std::span<const std::int64_t> shape,
                             std::span<const std::int64_t> warps_per_cta) {
  check_shape(shape, 2, 2, "mma accumulator");
  check_list(warps_per_cta, 2, "warps per CTA");
  LinearLayout tile({{"m", {{1, 0}, {0, 8}}}, {"lane", {{2, 0}, {4, 0}, {0, 1}, {0, 2}, {0, 4}}}},
                    std::vector<std::string>{"dim1", "dim0"});
  std::int64_t order[] = {1, 0};
  return fit_to_shape(tile * identity_nd("warp", warps_per_cta, order), shape);
}

LinearLayout wgmma_accumulator(std::span<const std::int64_t> shape, std::int64_t n,
                               std::span<const std::int64_t> warps_per_cta) {
  check_shape(shape, 2, 2, "wgmma accumulator");
  check_list(warps_per_cta, 2, "warps per CTA");
  if (!internal::is_pow2(n) || n < 8 || n > 256) {
    fail("wgmma instruction N " + std::to_string(n) + " is not a power of two in [8, 256]");
  }
  LinearLayout tile({{"m", {{1, 0}, {0, 8}}}, {"lane", {{2, 0}, {4, 0}, {0, 1}, {0, 2}, {0, 4}}}},
                    std::vector<std::string>{"dim1", "dim0"});
  tile = tile * LinearLayout::identity_1d(n / 8, "m", "dim1");
  std::int64_t order[] = {0, 1};
  std::vector<std::string> outs{"dim1", "dim0"};
  auto warps = transpose_outs(identity_nd("warp", warps_per_cta, order), outs);
  return fit_to_shape(tile * warps, shape);
}

LinearLayout slice_layout(const LinearLayout& parent, int dim) {
  int rank = static_cast<int>(parent.out_dims().size());
  if (dim < 0 || dim >= rank || !parent.has_out_dim(dim_name(static_cast<std::size_t>(dim)))) {
    fail("slice: dim " + std::to_string(dim) + " is not a logical dim of " +
         internal::brief(parent) + " (rank " + std::to_string(rank) + ")");
  }
  for (const auto& d : parent.out_dims()) dim_index(d.name, static_cast<std::size_t>(rank), "slice");
  std::vector<std::string> keep;
  for (const auto& d : parent.out_dims()) {
    if (d.name != dim_name(static_cast<std::size_t>(dim))) keep.push_back(d.name);
  }
  auto s = sublayout(parent, parent.in_names(), keep);
  std::vector<Dim> outs;
  for (const auto& d : s.out_dims()) {
    const int k = static_cast<int>(dim_index(d.name, static_cast<std::size_t>(rank), "slice"));
    outs.push_back({dim_name(static_cast<std::size_t>(k > dim ? k - 1 : k)), d.bits});
  }
  // Drop the registers that became zero.
  std::vector<Dim> ins;
  std::vector<std::uint64_t> cols;
  for (const auto& d : s.in_dims()) {
    int kept = 0;
    for (int i = 0; i < d.bits; ++i) {
      std::uint64_t c = s.column(d.name, i);
      if (d.name == "m" && c == 0) continue;
      cols.push_back(c);
      ++kept;
    }
    ins.push_back({d.name, kept});
  }
  return LinearLayout::from_columns(std::move(ins), std::move(outs), std::move(cols));
}

}  // namespace axe::linear
