// The CUDA executor decides zero-copy sends and in-place receives with the plan's contiguous_run
// (plan.hpp) on a BoxList's merged boxes. Law: merging keeps the rule, i.e. contiguous_run of a
// BoxList's boxes equals contiguous_run of the Transfers it was built from (pack and unpack:
// with the packed side written out), and equals the executor's previous rule on merged boxes.
// Host only: building a BoxList needs no GPU.
#include <gtest/gtest.h>

#include <random>

#include "axe/cuda/kernels.hpp"
#include "support/test_support.hpp"

namespace axe::cuda {
namespace {

std::string text(const std::optional<ContiguousRun>& r) {
  return r ? "src " + std::to_string(r->src) + " dst " + std::to_string(r->dst) + " n " + std::to_string(r->n)
           : "none";
}

// The executor's own rule before it used the plan's (one stride-1 mode per merged box, each
// continuing the previous one on both sides), kept as the reference the plan's rule must match.
std::optional<ContiguousRun> previous_rule(const BoxList& l) {
  if (l.empty()) return std::nullopt;
  ContiguousRun r;
  bool first = true;
  for (const auto& b : l.boxes()) {
    if (b.extents.size() != 1 || b.src_strides[0] != 1 || b.dst_strides[0] != 1) return std::nullopt;
    if (first) {
      r = {b.src_offset, b.dst_offset, 0};
      first = false;
    } else if (b.src_offset != r.src + r.n || b.dst_offset != r.dst + r.n) {
      return std::nullopt;
    }
    r.n += b.extents[0];
  }
  return r;
}

// The Transfers with one side packed back to back from `base` (what BoxList::pack / unpack build).
std::vector<Transfer> packed(std::vector<Transfer> boxes, bool dst_side, std::int64_t base) {
  for (auto& b : boxes) {
    ModeVector st(b.extents.size());
    std::int64_t s = 1;
    for (std::size_t k = b.extents.size(); k-- > 0;) {
      st[k] = s;
      s *= b.extents[k];
    }
    (dst_side ? b.dst_offset : b.src_offset) = base;
    (dst_side ? b.dst_strides : b.src_strides) = st;
    base += b.elements();
  }
  return boxes;
}

// Boxes that are often row-major contiguous, often continue one another, and often not.
std::vector<Transfer> random_boxes(std::mt19937_64& g) {
  std::vector<Transfer> out;
  std::int64_t src = static_cast<std::int64_t>(g() % 64), dst = static_cast<std::int64_t>(g() % 64);
  const auto n = 1 + g() % 3;
  for (std::size_t i = 0; i < n; ++i) {
    Transfer t;
    const auto modes = 1 + g() % 3;
    for (std::size_t k = 0; k < modes; ++k) {
      const std::int64_t choices[] = {1, 1, 2, 3, 4, 0};
      t.extents.push_back(choices[g() % (g() % 8 == 0 ? 6 : 5)]);
    }
    for (auto* side : {&t.src_strides, &t.dst_strides}) {
      side->assign(modes, 0);
      std::int64_t s = 1;
      for (std::size_t k = modes; k-- > 0;) {
        (*side)[k] = g() % 5 == 0 ? static_cast<std::int64_t>(1 + g() % 9) : s;  // mostly row-major
        s *= t.extents[k] == 0 ? 1 : t.extents[k];
      }
    }
    t.src_offset = g() % 4 == 0 ? static_cast<std::int64_t>(g() % 64) : src;  // mostly continuing
    t.dst_offset = g() % 4 == 0 ? static_cast<std::int64_t>(g() % 64) : dst;
    src = t.src_offset + t.elements();
    dst = t.dst_offset + t.elements();
    out.push_back(t);
  }
  return out;
}

TEST(BoxListRun, MergedBoxesKeepTheContiguousRunRule_Random) {
  auto g = test::make_rng(606);
  int runs = 0, none = 0;
  for (int i = 0; i < 20000; ++i) {
    const auto boxes = random_boxes(g);
    std::string what;
    for (const auto& b : boxes) what += " {" + to_string(b) + "}";
    const auto want = contiguous_run(boxes);
    EXPECT_EQ(text(contiguous_run(BoxList::copy(boxes, DType::F32).boxes())), text(want)) << what;
    EXPECT_EQ(text(contiguous_run(BoxList::pack(boxes, DType::F32, 5).boxes())), text(contiguous_run(packed(boxes, true, 5))))
        << what;
    EXPECT_EQ(text(contiguous_run(BoxList::unpack(boxes, DType::F64, 3).boxes())),
              text(contiguous_run(packed(boxes, false, 3))))
        << what;
    for (const BoxList& l : {BoxList::copy(boxes, DType::F32), BoxList::pack(boxes, DType::F32, 5),
                             BoxList::unpack(boxes, DType::F64, 3)})
      EXPECT_EQ(text(contiguous_run(l.boxes())), text(previous_rule(l))) << what;
    (want ? runs : none) += 1;
    if (HasFailure()) return;
  }
  EXPECT_GT(runs, 2000);
  EXPECT_GT(none, 2000);
}

}  // namespace
}  // namespace axe::cuda
