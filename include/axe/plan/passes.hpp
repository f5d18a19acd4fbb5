// Plan passes, moved from the CUDA executor (axe/cuda/executor.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "axe/plan/plan.hpp"

namespace axe {

// The padding of a written buffer (see "padding" above): the elements of a buffer of `size`
// elements that no box of `writes` covers (destination sides), as fill boxes; empty when covered,
// nullopt when the whole buffer is to be padded. Exposed for tests.
std::optional<std::vector<Transfer>> padding_boxes(std::int64_t size, const std::vector<const Transfer*>& writes);

// The executor runs each plan with its local slices folded into the step that reads them: a local
// step that copies one contiguous range of its input whole into an intermediate buffer read only
// by the next step is emptied, the next step reads the range from the input itself (source
// offsets shifted), and the intermediate's size becomes 0. Steps keep their number and kind.
// Public for tests.
void fold_slices(RankPlan& plan);

}  // namespace axe
