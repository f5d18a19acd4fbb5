// split_step: one step as k consecutive chunks (plan.hpp). Used by the planner for the staging
// bound and by executors that pipeline a step's pack and unpack with its transfer.
#include <algorithm>

#include "axe/core/error.hpp"
#include "axe/plan/plan.hpp"
#include "plan/internal.hpp"

namespace axe {

namespace {

// Elements [lo, hi) of the boxes packed back to back.
void list_range(const std::vector<Transfer>& boxes, std::int64_t lo, std::int64_t hi, std::vector<Transfer>& out) {
  std::int64_t pos = 0;
  for (const auto& b : boxes) {
    if (pos >= hi) break;
    const std::int64_t e = b.elements(), l = std::max(lo, pos), h = std::min(hi, pos + e);
    if (l < h) {
      if (l == pos && h == pos + e) out.push_back(b);
      else internal::sub_boxes(b, l - pos, h - pos, out);
    }
    pos += e;
  }
}

}  // namespace

std::vector<Step> split_step(const Step& st, std::int64_t k) {
  if (k < 1) fail("split_step: " + std::to_string(k) + " chunks (must be >= 1)");
  if (st.chunks > 1) fail("split_step: the step is already chunk " + std::to_string(st.chunk) + " of " +
                          std::to_string(st.chunks));
  if (k == 1) return {st};
  // Point-to-point reductions combine terms of one element from several messages and the local
  // copies: split every box alike so they stay in one chunk. Elsewhere whole messages are split
  // (equal messages give equal chunks: equal_blocks holds per chunk).
  const bool per_box = st.reduce && !is_collective(st.kind);
  auto piece = [&](const std::vector<Transfer>& boxes, std::int64_t c, std::vector<Transfer>& dst) {
    if (per_box) {
      for (const auto& b : boxes) {
        const std::int64_t e = b.elements();
        internal::sub_boxes(b, e * c / k, e * (c + 1) / k, dst);
      }
    } else {
      std::int64_t m = 0;
      for (const auto& b : boxes) m += b.elements();
      list_range(boxes, m * c / k, m * (c + 1) / k, dst);
    }
  };
  std::vector<Step> out;
  out.reserve(static_cast<std::size_t>(k));
  for (std::int64_t c = 0; c < k; ++c) {
    Step x;
    x.kind = st.kind;
    x.axes = st.axes;
    x.group = st.group;
    x.in = st.in;
    x.out = st.out;
    x.reduce = st.reduce;
    x.op = st.op;
    x.terms = st.terms;
    x.equal_blocks = st.equal_blocks;
    x.root = st.root;
    x.chunk = c;
    x.chunks = k;
    if (c == 0) x.fills = st.fills;
    piece(st.copies, c, x.copies);
    for (const auto* list : {&st.sends, &st.recvs}) {
      auto& dst = list == &st.sends ? x.sends : x.recvs;
      for (const auto& m : *list) {
        Message y;
        y.peer = m.peer;
        piece(m.boxes, c, y.boxes);
        if (!y.boxes.empty()) dst.push_back(std::move(y));
      }
    }
    out.push_back(std::move(x));
  }
  return out;
}

}  // namespace axe
