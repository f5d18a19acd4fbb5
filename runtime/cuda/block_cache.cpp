// BlockCache (include/axe/cuda/block_cache.hpp): size classes, slabs, cached blocks.
#include "axe/cuda/block_cache.hpp"

#include <algorithm>
#include <bit>
#include <cassert>
#include <iterator>

namespace axe::cuda {

BlockCache::~BlockCache() {
  for (const auto& [base, slab] : slabs_) release_(base, kSlabBytes);
  for (const auto& [base, bytes] : large_) release_(base, bytes);
}

std::size_t BlockCache::size_class(std::size_t bytes) {
  assert(bytes > 0);
  if (bytes <= kAlign) return kAlign;
  // 2^(p-1) < bytes <= 2^p: a step of 2^(p-3) gives the classes 1.25, 1.5, 1.75 and 2 × 2^(p-1).
  const auto p = static_cast<unsigned>(std::bit_width(bytes - 1));
  const std::size_t step = std::max(kAlign, std::size_t{1} << (p - 3));
  return (bytes + step - 1) / step * step;
}

std::uint64_t BlockCache::allocate(std::size_t bytes) {
  const std::size_t block = size_class(bytes);
  auto& cached = free_[block];
  if (cached.empty()) {
    if (block <= kSlabLimit) {
      const std::uint64_t base = grow_(kSlabBytes);
      if (base == 0) return 0;
      slabs_[base] = Slab{block, 0};
      // Highest address first, so the slab is handed out from its start.
      for (std::size_t i = kSlabBytes / block; i-- > 0;) cached.push_back(base + i * block);
    } else {
      const std::uint64_t base = grow_(block);
      if (base == 0) return 0;
      large_[base] = block;
      cached.push_back(base);
    }
  }
  const std::uint64_t address = cached.back();
  cached.pop_back();
  live_[address] = block;
  if (block <= kSlabLimit) ++std::prev(slabs_.upper_bound(address))->second.used;
  return address;
}

bool BlockCache::free(std::uint64_t address) {
  const auto it = live_.find(address);
  if (it == live_.end()) return false;
  const std::size_t block = it->second;
  live_.erase(it);
  if (block <= kSlabLimit) --std::prev(slabs_.upper_bound(address))->second.used;
  free_[block].push_back(address);
  return true;
}

std::size_t BlockCache::trim() {
  std::size_t released = 0;
  for (auto s = slabs_.begin(); s != slabs_.end();) {
    if (s->second.used > 0) {
      ++s;
      continue;
    }
    const std::uint64_t base = s->first;
    auto& cached = free_[s->second.block];
    std::erase_if(cached, [&](std::uint64_t a) { return a >= base && a < base + kSlabBytes; });
    release_(base, kSlabBytes);
    released += kSlabBytes;
    s = slabs_.erase(s);
  }
  for (auto& [block, cached] : free_) {
    if (block <= kSlabLimit) continue;
    for (const std::uint64_t base : cached) {
      release_(base, block);
      large_.erase(base);
      released += block;
    }
    cached.clear();
  }
  return released;
}

BlockCache::Stats BlockCache::stats() const {
  Stats s;
  s.allocations = slabs_.size() + large_.size();
  s.reserved = slabs_.size() * kSlabBytes;
  for (const auto& [base, bytes] : large_) s.reserved += bytes;
  s.live = live_.size();
  for (const auto& [address, block] : live_) s.live_bytes += block;
  return s;
}

}  // namespace axe::cuda
