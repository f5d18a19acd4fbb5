// One message as boxes from the sender's buffer straight to the receiver's (DESIGN §4, a plan
// utility; no data moves here).
//
// A message is two box lists over the same packed elements: the sender's (the src side of its
// send boxes: where element k of the message lies in the step's input) and the receiver's (the
// dst side of its receive boxes: where element k goes in the step's output), both in packed
// order, row-major within a box. A transport that reads the sender's input and writes the
// receiver's output in one pass, with no staging between them (the peer transport inside a node),
// needs the two sides joined: boxes whose src side is the sender's and whose dst side is the
// receiver's, element for element.
//
// compose_message cuts both lists at each other's box boundaries (internal::sub_boxes) and, where
// two pieces of equal size meet, joins their shapes: the modes of the join are those between the
// union of both pieces' suffix products (e.g. (4,8) and (2,16) join as (2,2,8)). Where no such
// join exists ((3,4) against (2,6)), the pieces are cut row by row until one does (single
// elements at worst). The result keeps packed order; each box carries the receiver's term.
// nullopt when the lists hold different numbers of elements, or when the join would take more
// than `max_boxes` boxes (then staging, one pack and one unpack, moves the message better).
//
// Example: sender {(4,8) src 0+(16,1)} (4 rows of 8 from a 16-wide matrix), receiver
// {(32) dst 100+(1)} -> {(4,8) src 0+(16,1) dst 100+(8,1)}.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "axe/plan/plan.hpp"

namespace axe {

std::optional<std::vector<Transfer>> compose_message(const std::vector<Transfer>& send,
                                                     const std::vector<Transfer>& recv,
                                                     std::size_t max_boxes = 1024);

// A sender's side of a message (what compose_message reads of its send boxes: extents, source
// offsets and strides, terms) as int64 words, for its receiver on another rank: the number of
// boxes, then per box its modes, extents, src offset, src strides and term. decode_send_boxes
// reads them back from words[at] on (`at` advanced past them), destination sides zero; nullopt
// when the words run out, or a count or extent is out of range (at most 64 modes), so a
// malformed table is an error of the caller's, never a crash.
// Example: {(4,8) src 16+(16,1) term 2} <-> {1, 2, 4, 8, 16, 16, 1, 2}.
void encode_send_boxes(const std::vector<Transfer>& boxes, std::vector<std::int64_t>& out);
std::optional<std::vector<Transfer>> decode_send_boxes(std::span<const std::int64_t> words, std::size_t& at);

}  // namespace axe
