// Simulating a plan on N ranks in one process (DESIGN §4 laws, checked without GPUs or MPI).
//
// Every rank of both meshes runs the real executor on its own thread over an InMemoryTransport.
// Source shards are filled from a global tensor whose element at row-major flat index x has
// value x (as float64); a partial source splits each value into exact terms (sum: x - T(T-1)/2
// on term 0 and j on term j; avg: x - T(T-1)/2 on term 0 and x + j on term j, so the mean is x;
// max/min: x on term x mod T, smaller/larger values elsewhere; prod: x on term x mod T, 1
// elsewhere). All terms are small integers, so every reduction is exact in float64.
// Example: P->R on gpu=4 (sum): element 10 is held as terms 4, 1, 2, 3 on ranks 0..3, and
// every destination rank ends with 10.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "axe/plan/plan.hpp"

namespace axe {

// The value of term `term` of element x under a partial layout with `terms` terms.
double partial_term(double x, std::int64_t term, std::int64_t terms, ReduceOp op);

// The source buffer of `rank` under layout `l` (float64, padding NaN).
std::vector<double> fill_source(const DistLayout& l, std::int64_t rank);

struct SimulationResult {
  std::map<std::int64_t, std::vector<double>> destination;  // by destination rank
  std::int64_t bytes_moved = 0;  // bytes through the transport (as float64)
};

// The simulator's bounds: it holds every rank's buffers in one process (float64) and runs one
// thread per rank, so a request beyond them is refused up front instead of exhausting memory.
inline constexpr std::int64_t kMaxSimulatedElements = std::int64_t{1} << 26;  // 512 MiB of float64
inline constexpr std::int64_t kMaxSimulatedRanks = 4096;

// Float64 elements a simulation of `plan` holds: per rank its source shard and every buffer of
// its plan, plus the destination slots of the reference verify() builds. Example: S(0)->R of
// 8x8 on gpu=2 holds 2 x 32 source + 2 x (64 + staging) buffer elements + 128 reference slots.
std::int64_t simulation_elements(const Plan& plan);

// Runs plan on every rank (threads) with float64 buffers; throws axe::Error if a rank fails, or,
// before allocating anything, if the plan has more than kMaxSimulatedRanks ranks or
// simulation_elements(plan) > kMaxSimulatedElements (the message gives both numbers).
SimulationResult simulate(const Plan& plan);

// Checks every destination buffer against the destination layout applied to the global tensor.
// Replicas equal x and padding is NaN, exactly. A partial destination only has to hold terms that
// reduce to x: for every element and replica, the op over the terms the destination holds must
// equal x (exactly; avg within 1e-9 relative), whichever term holds which part — P,R -> R,P on
// x=2,y=2 may move element 0's sum terms -1, 1 to hold 0, 0. Returns "" when correct, else the
// first mismatch (rank, memory slot, expected, got; or the element, its terms and their reduction).
std::string verify(const PlanRequest& request, const SimulationResult& r);

// Brute-force reference: element by element, every destination slot from the global tensor.
std::map<std::int64_t, std::vector<double>> reference_destination(const DistLayout& from,
                                                                  const DistLayout& to);

}  // namespace axe
