// Plan passes: rewrites of a RankPlan that an executor runs instead of the planner's plan
// (DESIGN §6: "the plan that `axe plan` prints is the plan that runs"). Each pass is a function
// of one rank's plan (and of values every rank agrees on), so every rank runs it alike, and
// returns a new RankPlan: the input is never modified. Every pass keeps the law of the plan:
// run by any executor (the host one, axe/exec/executor.hpp, or the CUDA one) the passed plan
// writes the same destination as the original, padding included.
//
//   fold_slices    a local step that only cuts one contiguous range out of its input for the
//                  next step is emptied; the next step reads the input itself.
//   pad_unwritten  lists, per buffer, the elements no step writes (RankPlan::pads): executors
//                  set only those to NaN (0 for integers) instead of the whole buffer.
//   pipeline       splits steps into chunks (split_step), e.g. so that a backend overlaps a
//                  chunk's pack and unpack with the neighbouring chunks' transfers.
//
// The CUDA executor runs run_passes(plan, cuda_passes()) with the pipeline chunks its ranks
// agree on (CudaExecutor::pipeline_chunks); `axe plan --passes cuda [--chunks K,...]` prints
// that plan.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "axe/plan/plan.hpp"

namespace axe {

// The elements of a buffer of `size` elements that no box of `writes` (destination sides) covers:
// empty when the writes cover the buffer. Gaps of equal length at a constant spacing become one
// 2-D box (the padding column of an uneven shard: Transfer{{rows, 1}, off, {pitch, 1}, ...}),
// others 1-D boxes (Transfer{{len}, off, {1}, off, {1}}). nullopt when that is not cheap to know
// (over max_runs runs, or over max_boxes boxes): then the whole buffer is to be padded.
// Overlapping writes are fine (the union is computed exactly, run by run).
// Example: the writes (5,2047) dst 0+(2048,1) of a 5x2048 buffer leave column 2047: one box
// (5,1) src 2047+(2048,1) dst 2047+(2048,1).
struct PadOptions {
  std::int64_t max_runs = std::int64_t{1} << 20;  // contiguous written runs examined
  std::int64_t max_boxes = 4096;                  // pad boxes listed per buffer
  bool operator==(const PadOptions&) const = default;
};
std::optional<std::vector<Transfer>> padding_boxes(std::int64_t size, const std::vector<const Transfer*>& writes,
                                                   const PadOptions& options = {});

// Local slices folded into the step that reads them. A local step (no reduction, fills or
// messages) whose copies are one contiguous range of its input (contiguous_run) written whole
// into an intermediate buffer that only the next step reads (and no other step writes) is
// emptied: the next step reads the range straight from the local step's input, its source
// offsets (copies and sends) shifted by the range's start, and the intermediate's size becomes 0.
// Steps keep their number and kind, so ranks that fold and ranks that don't still make the same
// calls. The emptied step's staging_bytes becomes 0 and the stats are recounted (restat).
// Example: (R,P) -> (S0,S1) of 64x128 f32 on x=2,y=2, rank 2 (x=1, y=0) copies its rows 32..63
// (source elements 4096..8191) into a 4096-element intermediate, then reduce-scatters them over
// y. Folded, step 0 has no copies, step 1 reads buffer 0 with every source offset 4096 further
// on, and buffers becomes (8192, 0, 2048).
RankPlan fold_slices(const RankPlan& plan);

// RankPlan::pads computed: per buffer, the boxes of elements that no fill, local copy or received
// box of any step writes (padding_boxes over the steps whose `out` is that buffer; the whole
// buffer when padding_boxes gives nullopt); nothing for the source (buffer 0). Every term of a
// reduced element is written by its term-0 box first, so the union of the boxes is the set of
// written elements. Steps are unchanged. Example: S(0) -> S(1) of 5x4095 f32 on gpu=2: rank 1's
// destination holds columns 2048..4094 (2047) at a pitch of 2048, so its pads are {{}, {(5,1)
// src 2047+(2048,1) dst 2047+(2048,1)}}: column 2047 of its 5 rows; rank 0's are {{}, {}}.
RankPlan pad_unwritten(const RankPlan& plan, const PadOptions& options = {});

// Step i of `plan` as chunks[i] >= 1 consecutive steps (split_step; 1: unchanged); `chunks`
// has one entry per step, or is empty (nothing split). A step the planner already chunked must
// have 1. Every chunk keeps the step's staging_bytes (an upper bound: a chunk stages less), pads
// are kept, and the stats are recounted (restat). The result has sum(chunks) steps; step i's
// chunks follow each other. Throws axe::Error naming the step on a wrong count. Every rank of a
// plan must pass the same chunks (the counts are part of what members of a group agree on).
// Example: S(1) -> R of 64x128 f64 on gpu=2 with chunks {4}: 4 all-gathers of 1024-element
// blocks, chunk c = 0..3 recording chunk c of 4.
RankPlan pipeline(const RankPlan& plan, const std::vector<std::int64_t>& chunks);

// PlanStats recounted from the steps: messages (sends), collectives (collective steps on groups
// of 2 or more) and staging_bytes (the intermediate buffers plus the largest
// Step::staging_bytes); bytes and the lower bound are kept. The identity on a planner's plan.
RankPlan restat(const RankPlan& plan);

// Which passes run, in this order: fold_slices, pad_unwritten, pipeline.
struct PassOptions {
  bool fold = false;
  bool pad = false;
  PadOptions padding;
  std::vector<std::int64_t> chunks;  // per step of the plan (empty: no pipelining)
  bool operator==(const PassOptions&) const = default;
};
// The passes of the CUDA executor: fold and pad, with the default PadOptions (the executor adds
// the chunks its ranks agree on).
PassOptions cuda_passes();
// "none", "cuda", or a comma-separated list of "fold" and "pad". Throws axe::Error naming the
// text and the accepted names.
PassOptions parse_passes(std::string_view text);

RankPlan run_passes(const RankPlan& plan, const PassOptions& options);
// Every rank's plan passed alike; the outline (kinds, axes, equal_blocks) follows the pipelined
// steps and the totals are recounted.
Plan run_passes(const Plan& plan, const PassOptions& options);

}  // namespace axe
