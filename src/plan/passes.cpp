// Plan passes (passes.hpp), moved from the CUDA executor.
#include "axe/plan/passes.hpp"

#include <algorithm>

namespace axe {

// The elements of a buffer of `size` elements that no box of `writes` (destination sides) covers:
// empty when the writes cover the buffer. Gaps of equal length at a constant spacing become one
// 2-D box (the padding column of an uneven shard: Transfer{{rows, 1}, off, {pitch, 1}, ...}),
// others 1-D boxes (Transfer{{len}, off, {1}, off, {1}}). nullopt when that is not cheap to know
// (over 2^20 runs, or over 4096 boxes): then the whole buffer is padded. Overlapping writes are
// fine (the union is computed exactly, run by run).
std::optional<std::vector<Transfer>> padding_boxes(std::int64_t size, const std::vector<const Transfer*>& writes) {
  constexpr std::int64_t kMaxRuns = std::int64_t{1} << 20, kMaxGaps = 4096;
  std::vector<std::pair<std::int64_t, std::int64_t>> runs;  // [begin, end)
  for (const Transfer* t : writes) {
    // merge destination modes (extent-1 modes dropped, row-major contiguous modes joined)
    std::vector<std::int64_t> ext, st;
    bool empty = false;
    for (std::size_t k = 0; k < t->extents.size(); ++k) {
      if (t->extents[k] <= 0) empty = true;
      if (t->extents[k] == 1) continue;
      if (!ext.empty() && st.back() == t->dst_strides[k] * t->extents[k]) {
        ext.back() *= t->extents[k];
        st.back() = t->dst_strides[k];
        continue;
      }
      ext.push_back(t->extents[k]);
      st.push_back(t->dst_strides[k]);
    }
    if (empty) continue;
    std::int64_t len = 1;
    if (!ext.empty() && st.back() == 1) {
      len = ext.back();
      ext.pop_back();
      st.pop_back();
    }
    std::int64_t n = 1;
    for (auto e : ext) n *= e;
    if (static_cast<std::int64_t>(runs.size()) + n > kMaxRuns) return std::nullopt;
    std::vector<std::int64_t> idx(ext.size(), 0);
    for (std::int64_t i = 0; i < n; ++i) {
      std::int64_t off = t->dst_offset;
      for (std::size_t k = 0; k < ext.size(); ++k) off += idx[k] * st[k];
      runs.push_back({off, off + len});
      for (std::size_t k = ext.size(); k-- > 0;) {
        if (++idx[k] < ext[k]) break;
        idx[k] = 0;
      }
    }
  }
  std::sort(runs.begin(), runs.end());
  std::vector<std::pair<std::int64_t, std::int64_t>> holes;  // [begin, length)
  std::int64_t at = 0;
  auto gap = [&](std::int64_t b, std::int64_t e) {
    if (e > b) holes.push_back({b, e - b});
  };
  for (const auto& [b, e] : runs) {
    gap(at, std::min(b, size));
    at = std::max(at, e);
  }
  gap(at, size);
  std::vector<Transfer> gaps;
  for (std::size_t i = 0; i < holes.size();) {
    const auto [b, len] = holes[i];
    std::size_t j = i + 1;
    const std::int64_t pitch = j < holes.size() ? holes[j].first - b : 0;
    while (j < holes.size() && holes[j].second == len && holes[j].first - holes[j - 1].first == pitch) ++j;
    const auto n = static_cast<std::int64_t>(j - i);
    if (n > 1)
      gaps.push_back(Transfer{{n, len}, b, {pitch, 1}, b, {pitch, 1}, 0});
    else
      gaps.push_back(Transfer{{len}, b, {1}, b, {1}, 0});
    if (static_cast<std::int64_t>(gaps.size()) > kMaxGaps) return std::nullopt;
    i = j;
  }
  return gaps;
}

// Local slices folded into the step that reads them. A local step whose copies are one
// contiguous range of its input written whole into an intermediate buffer that only the next step
// reads (and no other step writes) is emptied: the next step reads the range straight from the
// local step's input, its source offsets shifted by the range's start, and the intermediate shrinks
// to nothing. Example: (R,P) -> (S0,S1) on a 2x2 mesh slices this rank's rows of the replicated
// term, then reduce-scatters them over y; folded, the reduce-scatter packs its column blocks
// straight from the source: one copy and the intermediate (half the tensor) less. Steps keep
// their number and kind, so ranks that fold and ranks that don't still make the same calls.
void fold_slices(RankPlan& pl) {
  const auto nb = static_cast<int>(pl.buffers.size());
  for (std::size_t i = 0; i + 1 < pl.steps.size(); ++i) {
    Step& s = pl.steps[i];
    Step& next = pl.steps[i + 1];
    const int b = s.out;
    if (s.kind != StepKind::LocalCopy || s.reduce || s.copies.empty() || !s.fills.empty() || !s.sends.empty() ||
        !s.recvs.empty() || b <= 0 || b >= nb - 1 || s.in == b || next.in != b || next.out == b)
      continue;
    bool alone = true;  // b is written by step i only and read by step i + 1 only
    for (std::size_t k = 0; k < pl.steps.size() && alone; ++k)
      if (k != i && k != i + 1) alone = pl.steps[k].in != b && pl.steps[k].out != b;
    if (!alone) continue;
    const auto run = axe::contiguous_run(s.copies);
    if (!run || run->dst != 0 || run->n != pl.buffers[static_cast<std::size_t>(b)]) continue;
    auto shift = [&](std::vector<Transfer>& boxes) {
      for (auto& t : boxes) t.src_offset += run->src;
    };
    shift(next.copies);
    for (auto& m : next.sends) shift(m.boxes);
    next.in = s.in;
    s.copies.clear();
    pl.buffers[static_cast<std::size_t>(b)] = 0;
  }
}

}  // namespace axe
