// The copy-engine policy and BoxList::split (include/axe/cuda/copy_engine.hpp).
#include <algorithm>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "axe/core/error.hpp"
#include "axe/core/tunables.hpp"
#include "axe/cuda/box_list.hpp"
#include "axe/cuda/copy_engine.hpp"
#include "cuda/internal.hpp"

namespace axe::cuda {

using internal::box_elements;
using internal::unit_log2;

// ---- copy engines ----------------------------------------------------------------------------

namespace {

// True when copy_boxes moves merged box `t` as realigned rows (copy_engine.hpp).
bool realigns(const Transfer& t, std::int64_t es, const CopyEnginePolicy& policy) {
  const std::size_t r = t.extents.size();
  return policy.realign_min_row > 0 && t.src_strides[r - 1] == 1 && t.dst_strides[r - 1] == 1 &&
         t.extents[r - 1] * es >= policy.realign_min_row && unit_log2(t, es, 16) <= 2;
}

// The policy the AXE_COPY_ENGINE_* / AXE_REALIGN_MIN_ROW tunables give (their defaults are
// CopyEnginePolicy's, a test keeps them equal).
CopyEnginePolicy env_policy() {
  CopyEnginePolicy p;
  p.min_bytes = tunable_int("AXE_COPY_ENGINE_MIN");
  p.unit_below = static_cast<int>(tunable_int("AXE_COPY_ENGINE_UNIT"));
  p.realign_min_row = tunable_int("AXE_REALIGN_MIN_ROW");
  p.generated_min_run = tunable_int("AXE_GENERATED_COPY_MIN_RUN");
  return p;
}

std::mutex& policy_mu() {
  static std::mutex m;
  return m;
}
CopyEnginePolicy& policy_ref() {
  static CopyEnginePolicy p = env_policy();
  return p;
}

// The copy-engine calls for merged box `t` (element size es), appended to `out`; false (nothing
// appended) when the box does not qualify.
bool engine_calls(const Transfer& t, std::int64_t es, int source, const CopyEnginePolicy& policy,
                  std::vector<EngineCopy>& out) {
  const std::size_t r = t.extents.size();
  if (policy.min_bytes <= 0 || box_elements(t) * es < policy.min_bytes) return false;
  if (t.src_strides[r - 1] != 1 || t.dst_strides[r - 1] != 1) return false;
  // One contiguous run: cudaMemcpyAsync at any unit (it beats the kernel even on aligned runs).
  const std::int64_t unit = realigns(t, es, policy) ? 16 : std::int64_t{1} << unit_log2(t, es, 16);
  if (r > 1 && unit >= policy.unit_below) return false;
  const std::int64_t width = t.extents[r - 1] * es;
  constexpr std::int64_t kMaxPitch = std::numeric_limits<int>::max();  // cudaDeviceProp::memPitch
  EngineCopy c{source, t.src_offset * es, width, t.dst_offset * es, width, width, 1};
  if (r == 1) {
    out.push_back(c);
    return true;
  }
  if (width < kCopyEngineMinRow || r > 3) return false;
  const std::int64_t sp = t.src_strides[r - 2] * es, dp = t.dst_strides[r - 2] * es;
  if (sp < width || dp < width || sp > kMaxPitch || dp > kMaxPitch) return false;
  c.src_pitch = sp;
  c.dst_pitch = dp;
  const std::int64_t rows = t.extents[r - 2];
  const std::int64_t planes = r == 3 ? t.extents[0] : 1;
  if (r == 3 && (planes > 4 || t.src_strides[0] < 0 || t.dst_strides[0] < 0)) return false;
  // Calls of at most kMaxCopyEngineRows rows. (Added while chasing an "invalid argument" that
  // turned out to be a source range past its allocation; a probe on an H200 copied 131072 rows
  // in one call. The pieces cost nothing measurable and keep each call's size bounded.)
  const std::int64_t pieces = (rows + kMaxCopyEngineRows - 1) / kMaxCopyEngineRows;
  if (planes * pieces > kMaxCopyEngineCalls) return false;
  for (std::int64_t i = 0; i < planes; ++i)
    for (std::int64_t p = 0; p < pieces; ++p) {
      EngineCopy ci = c;
      ci.src_offset += (r == 3 ? i * t.src_strides[0] * es : 0) + p * kMaxCopyEngineRows * sp;
      ci.dst_offset += (r == 3 ? i * t.dst_strides[0] * es : 0) + p * kMaxCopyEngineRows * dp;
      ci.height = std::min(kMaxCopyEngineRows, rows - p * kMaxCopyEngineRows);
      out.push_back(ci);
    }
  return true;
}

}  // namespace

CopyEnginePolicy copy_engine_policy() {
  std::lock_guard<std::mutex> g(policy_mu());
  return policy_ref();
}

CopyEnginePolicy set_copy_engine_policy(CopyEnginePolicy policy) {
  if (policy.min_bytes < 0)
    fail("set_copy_engine_policy: min_bytes " + std::to_string(policy.min_bytes) + " is negative");
  if (policy.unit_below < 1 || policy.unit_below > 17)
    fail("set_copy_engine_policy: unit_below " + std::to_string(policy.unit_below) + " is outside 1..17");
  if (policy.realign_min_row < 0)
    fail("set_copy_engine_policy: realign_min_row " + std::to_string(policy.realign_min_row) +
         " is negative");
  if (policy.generated_min_run < 0)
    fail("set_copy_engine_policy: generated_min_run " + std::to_string(policy.generated_min_run) +
         " is negative");
  std::lock_guard<std::mutex> g(policy_mu());
  return std::exchange(policy_ref(), policy);
}

BoxList::Split BoxList::split(const CopyEnginePolicy& policy) const {
  if (!tables_) return {};
  std::lock_guard<std::mutex> g(tables_->mu);
  Split& sp = tables_->split;
  if (tables_->split_policy == policy) return sp;
  sp = Split{};
  const std::int64_t es = size_of(dtype_);
  auto rows = std::make_shared<BoxList>(), rest = std::make_shared<BoxList>();
  for (auto* l : {rows.get(), rest.get()}) {
    l->dtype_ = dtype_;
    l->tables_ = std::make_shared<Tables>();
  }
  for (std::size_t i = 0; i < boxes_.size(); ++i) {
    std::vector<EngineCopy> calls;
    if (sp.engine.size() < static_cast<std::size_t>(kMaxCopyEngineCalls) &&
        engine_calls(boxes_[i], es, source_[i], policy, calls) &&
        sp.engine.size() + calls.size() <= static_cast<std::size_t>(kMaxCopyEngineCalls)) {
      sp.engine.insert(sp.engine.end(), calls.begin(), calls.end());
      continue;
    }
    BoxList& to = realigns(boxes_[i], es, policy) ? *rows : *rest;
    to.boxes_.push_back(boxes_[i]);
    to.source_.push_back(source_[i]);
  }
  if (!sp.engine.empty() || !rows->empty()) {
    if (!rows->empty()) sp.rows = std::move(rows);
    if (!rest->empty()) sp.rest = std::move(rest);
  }
  tables_->split_policy = policy;
  return sp;
}

std::vector<EngineCopy> engine_copies(const BoxList& list, const CopyEnginePolicy& policy) {
  return list.split(policy).engine;
}

std::vector<Transfer> realigned_rows(const BoxList& list, const CopyEnginePolicy& policy) {
  const auto rows = list.split(policy).rows;
  return rows ? rows->boxes() : std::vector<Transfer>{};
}

}  // namespace axe::cuda
