// Plan passes (passes.hpp): fold_slices, pad_unwritten, pipeline. Formerly rewrites inside the
// CUDA executor; here values in, values out, so `axe plan` can print what runs.
#include "axe/plan/passes.hpp"

#include <algorithm>
#include <string>

#include "axe/core/error.hpp"
#include "plan/internal.hpp"

namespace axe {

std::optional<std::vector<Transfer>> padding_boxes(std::int64_t size, const std::vector<const Transfer*>& writes,
                                                   const PadOptions& options) {
  const std::int64_t kMaxRuns = options.max_runs, kMaxGaps = options.max_boxes;
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

RankPlan restat(const RankPlan& plan) {
  RankPlan r = plan;
  const std::int64_t es = size_of(plan.dtype);
  r.stats.messages = r.stats.collectives = 0;
  std::int64_t peak = 0, staging = 0;
  for (const Step& s : r.steps) {
    r.stats.messages += static_cast<std::int64_t>(s.sends.size());
    if (is_collective(s.kind) && s.group.size() > 1) ++r.stats.collectives;
    peak = std::max(peak, s.staging_bytes);
  }
  for (std::size_t i = 1; i + 1 < r.buffers.size(); ++i) staging += r.buffers[i] * es;
  r.stats.staging_bytes = staging + peak;
  return r;
}

RankPlan fold_slices(const RankPlan& plan) {
  RankPlan pl = plan;
  const auto nb = static_cast<int>(pl.buffers.size());
  bool folded = false;
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
    const auto run = contiguous_run(s.copies);
    if (!run || run->dst != 0 || run->n != pl.buffers[static_cast<std::size_t>(b)]) continue;
    auto shift = [&](std::vector<Transfer>& boxes) {
      for (auto& t : boxes) t.src_offset += run->src;
    };
    shift(next.copies);
    for (auto& m : next.sends) shift(m.boxes);
    next.in = s.in;
    s.copies.clear();
    s.staging_bytes = 0;
    pl.buffers[static_cast<std::size_t>(b)] = 0;
    if (!pl.pads.empty()) pl.pads[static_cast<std::size_t>(b)].clear();
    folded = true;
  }
  return folded ? restat(pl) : pl;
}

RankPlan pad_unwritten(const RankPlan& plan, const PadOptions& options) {
  RankPlan pl = plan;
  const std::size_t nb = pl.buffers.size();
  pl.pads.assign(nb, {});
  for (std::size_t i = 1; i < nb; ++i) {
    std::vector<const Transfer*> writes;
    for (const Step& s : pl.steps) {
      if (static_cast<std::size_t>(s.out) != i) continue;
      for (const auto& t : s.fills) writes.push_back(&t);
      for (const auto& t : s.copies) writes.push_back(&t);
      for (const auto& m : s.recvs)
        for (const auto& t : m.boxes) writes.push_back(&t);
    }
    auto gaps = padding_boxes(pl.buffers[i], writes, options);
    if (!gaps) gaps = std::vector<Transfer>{Transfer{{pl.buffers[i]}, 0, {1}, 0, {1}, 0}};
    pl.pads[i] = std::move(*gaps);
  }
  return pl;
}

RankPlan pipeline(const RankPlan& plan, const std::vector<std::int64_t>& chunks) {
  if (chunks.empty()) return plan;
  const std::string who = "pipeline (rank " + std::to_string(plan.rank) + "): ";
  if (chunks.size() != plan.steps.size())
    fail(who + std::to_string(chunks.size()) + " chunk counts for a plan of " + std::to_string(plan.steps.size()) +
         " steps");
  RankPlan r = plan;
  r.steps.clear();
  bool split = false;
  for (std::size_t i = 0; i < plan.steps.size(); ++i) {
    const Step& s = plan.steps[i];
    const std::int64_t k = chunks[i];
    if (k < 1) fail(who + "step " + std::to_string(i) + ": " + std::to_string(k) + " chunks (must be >= 1)");
    if (k > 1 && s.chunks > 1)
      fail(who + "step " + std::to_string(i) + " is already chunk " + std::to_string(s.chunk + 1) + " of " +
           std::to_string(s.chunks) + " (the planner's); it cannot be split in " + std::to_string(k));
    if (k == 1) {
      r.steps.push_back(s);
      continue;
    }
    for (auto& x : split_step(s, k)) {
      x.staging_bytes = s.staging_bytes;
      r.steps.push_back(std::move(x));
    }
    split = true;
  }
  return split ? restat(r) : r;
}

PassOptions cuda_passes() {
  PassOptions o;
  o.fold = o.pad = true;
  return o;
}

PassOptions parse_passes(std::string_view text) {
  if (text == "none") return {};
  if (text == "cuda") return cuda_passes();
  PassOptions o;
  std::size_t at = 0;
  while (true) {
    const std::size_t comma = text.find(',', at);
    const std::string_view name = text.substr(at, comma == std::string_view::npos ? text.npos : comma - at);
    if (name == "fold") o.fold = true;
    else if (name == "pad") o.pad = true;
    else
      fail("passes '" + std::string(text) + "': unknown pass '" + std::string(name) +
           "' (expected none, cuda, or a comma-separated list of fold and pad)");
    if (comma == std::string_view::npos) break;
    at = comma + 1;
  }
  return o;
}

RankPlan run_passes(const RankPlan& plan, const PassOptions& o) {
  RankPlan r = o.fold ? fold_slices(plan) : plan;
  if (o.pad) r = pad_unwritten(r, o.padding);
  return pipeline(r, o.chunks);
}

Plan run_passes(const Plan& plan, const PassOptions& o) {
  Plan p = plan;
  for (auto& rp : p.ranks) rp = run_passes(rp, o);
  if (!o.chunks.empty()) {
    if (o.chunks.size() != plan.kinds.size())
      fail("pipeline: " + std::to_string(o.chunks.size()) + " chunk counts for a plan of " +
           std::to_string(plan.kinds.size()) + " steps");
    p.kinds.clear();
    p.axes.clear();
    p.equal_blocks.clear();
    for (std::size_t i = 0; i < plan.kinds.size(); ++i)
      for (std::int64_t c = 0; c < o.chunks[i]; ++c) {
        p.kinds.push_back(plan.kinds[i]);
        p.axes.push_back(plan.axes[i]);
        p.equal_blocks.push_back(plan.equal_blocks[i]);
      }
  }
  internal::sum_rank_stats(p);
  return p;
}

}  // namespace axe
