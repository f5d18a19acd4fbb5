// One compact text form for thread layouts, shared by the `axe` commands that take THREADS, the
// tile benchmark and the Triton Gluon script that writes the same grammar:
//
//   blocked:SPT/TPW/WPC[/ORDER]  Triton's BlockedLayout (blocked_layout): size per thread,
//                                threads per warp, warps per CTA and the order (dims fastest
//                                first; default row-major, the last dim fastest), each a
//                                comma-separated list of ints with one entry per dim of the shape
//   mma:WPC                      the mma.sync m16n8 accumulator (mma_accumulator), 2-D
//   wgmma:N/WPC                  the wgmma accumulator of instrShape 16 x N x 16
//                                (wgmma_accumulator), 2-D
//   slice:D:PARENT               slice_layout(PARENT, D), PARENT (any of these forms but an Axe
//                                layout) built on the shape with extent 1 inserted at D
//   linear:{"reg":[[..]],"lane":[[..]],"warp":[[..]]}
//                                the bases of a distributed linear layout (JSON): per hardware
//                                bit, the logical coordinate [dim0, dim1, ...] it holds (Triton's
//                                DistributedLinearLayout order, and the order of "in" in
//                                `axe linear --json`); [0,...,0] is a broadcast bit; a key may be
//                                left out when empty; "register" and "m" are other names of "reg"
//   anything else                an Axe layout text, parsed by parse_axe_layout and returned
//                                unchanged (the shape is not used)
//
// A form is a kind when the text starts with letters followed by ':'; an Axe layout starts
// with 'S', so the two never meet. No spaces, except inside linear's JSON.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "axe/layout/layout.hpp"

namespace axe::linear {

// The Axe layout over m (registers), lane and warp of the thread layout `spec` on the logical
// tile `shape` (row-major): the Triton forms are built by the functions of thread_layouts.hpp
// (fitted to the shape: a smaller layout repeats in the registers, a larger one broadcasts) and
// printed with from_linear (bridge.hpp).
// @pre the shape's extents are powers of two (for the Triton forms).
// @post for a Triton form, to_linear(result, shape).layout equals the layout of the direct call,
// e.g. blocked_layout(shape, SPT, TPW, WPC, ORDER), up to the order of its input dims.
// Errors: malformed text is axe::ParseError (the position in `spec` and what was expected);
// a well-formed spec that names no layout is axe::Error "thread layout 'SPEC' on (SHAPE): WHY"
// (an unknown kind, a list whose length is not the shape's rank, an entry that is not a power of
// two, threads per warp whose product is not 32, a basis outside the shape, two bases on one
// logical bit, ...).
//
// Worked examples:
//   blocked:1,4/8,4/4,1/1,0 on (32,32): m -> columns 1,2; lane -> columns 4,8, rows 1,2,4;
//     warp -> rows 8,16; the 32x16 CTA tile repeats once along columns: m bit 2 -> column 16.
//     The row-major index 32 row + col has bits (low first) m m lane lane m lane lane lane
//     warp warp: S[(4,8,2,4,4):(1@warp,4@lane,4,1@lane,1)]
//   blocked:4/32/4/0 on (512): S[(4,32,4):(1@warp,1@lane,1)]
//   mma:2,2 on (32,16): m -> column 1, row 8; lane -> columns 2,4, rows 1,2,4; warp -> column
//     8, row 16: S[(2,2,8,2,4,2):(2@warp,2,4@lane,1@warp,1@lane,1)]
//   wgmma:128/4,1 on (64,128): S[(4,2,8,16,4,2):(1@warp,2,4@lane,4,1@lane,1)]
//   slice:1:blocked:1,1/32,1/4,1/0,1 on (128): the parent on (128,1) puts lanes on rows 1..16
//     and warps on rows 32,64: S[(4,32):(1@warp,1@lane)]
//   linear:{"reg":[[0,1]],"lane":[[0,2],[0,4],[1,0],[2,0],[4,0]],"warp":[[0,8]]} on (8,16):
//     S[(8,2,4,2):(4@lane,1@warp,1@lane,1)]
//   S[(4,4):(1@lane,1)] on anything: S[(4,4):(1@lane,1)]
AxeLayout parse_thread_layout(std::string_view spec, std::span<const std::int64_t> shape);

// The grammar above in a few lines, for the --help of the commands that take THREADS.
std::string thread_layout_spec_help();

}  // namespace axe::linear
