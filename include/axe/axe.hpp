// Umbrella header: everything in the axe host library.
#pragma once

#include "axe/layout/layout.hpp"
#include "axe/layout/convert.hpp"
#include "axe/linear/f2.hpp"
#include "axe/linear/linear_layout.hpp"
#include "axe/core/error.hpp"
#include "axe/cute/int_tuple.hpp"
#include "axe/cute/layout.hpp"
#include "axe/cute/swizzle.hpp"
#include "axe/core/dtype.hpp"
#include "axe/exec/executor.hpp"
#include "axe/dist/mesh.hpp"
#include "axe/dist/placement.hpp"
#include "axe/plan/passes.hpp"
#include "axe/plan/plan.hpp"
#include "axe/plan/step_check.hpp"
#include "axe/exec/simulate.hpp"
