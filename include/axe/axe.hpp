// Umbrella header: everything in the axe host library.
#pragma once

#include "axe/axe_layout.hpp"
#include "axe/convert.hpp"
#include "axe/error.hpp"
#include "axe/int_tuple.hpp"
#include "axe/layout.hpp"
#include "axe/swizzle.hpp"
#include "axe/dtype.hpp"
#include "axe/executor.hpp"
#include "axe/mesh.hpp"
#include "axe/placement.hpp"
#include "axe/plan.hpp"
#include "axe/simulate.hpp"
