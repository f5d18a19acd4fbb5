// The cuda backend's device memory (host logic, no CUDA): a caching allocator over allocations
// the caller makes (cudaMalloc), so that a buffer the runtime allocates can be exported to the
// peers with legacy CUDA IPC (the stream-ordered pool of cudaMallocAsync cannot be) and a
// redistribute still costs no cudaMalloc once the cache is warm.
//
// Sizes are rounded to classes (size_class): 512 bytes at least, then four classes per doubling,
// so a block wastes less than a quarter of what was asked. Classes up to kSlabLimit share slabs:
// one allocation of kSlabBytes cut into equal slots of one class (a peer then maps the slab once
// for all the small tensors in it, instead of one IPC mapping per tensor). A larger class gets an
// allocation of its own. Freed blocks stay cached for their class; trim() gives back every
// allocation no block uses (the caller first makes sure no device work still reads them).
//
// Not thread-safe (the backend locks around it). Blocks are reused in the order the caller frees
// them; it is the caller's stream order that makes reuse safe (every use of the backend's buffers
// is ordered on its stream, and a free is enqueued there after the streams the buffer was lent to).
//
// Example: BlockCache c(grow, release);  // grow(n): a new allocation of n bytes, 0 when refused
//   c.allocate(1000) -> a slot of class 1024 in a new 2 MiB slab (grow(2 MiB)); 2048 such slots
//   fit; c.free(a); c.allocate(900) -> a again (same class, no grow); c.trim() -> 2 MiB released.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <unordered_map>
#include <vector>

namespace axe::cuda {

class BlockCache {
 public:
  static constexpr std::size_t kAlign = 512;
  static constexpr std::size_t kSlabBytes = std::size_t{2} << 20;
  static constexpr std::size_t kSlabLimit = std::size_t{1} << 20;

  // grow(n): the address of a new allocation of n bytes (aligned to at least 256), or 0 when the
  // system refuses it. release(address, n): gives one back.
  using Grow = std::function<std::uint64_t(std::size_t)>;
  using Release = std::function<void(std::uint64_t, std::size_t)>;

  struct Stats {
    std::size_t allocations = 0;  // slabs and large blocks held from grow()
    std::size_t reserved = 0;     // their bytes
    std::size_t live = 0;         // blocks handed out and not freed
    std::size_t live_bytes = 0;   // their classes' bytes
  };

  BlockCache(Grow grow, Release release) : grow_(std::move(grow)), release_(std::move(release)) {}
  BlockCache(const BlockCache&) = delete;
  BlockCache& operator=(const BlockCache&) = delete;
  // Gives back every allocation (live blocks too: the caller frees the cache last).
  ~BlockCache();

  // The bytes of the block that holds `bytes` (> 0): a multiple of kAlign, at least `bytes`, less
  // than 1.25 × bytes + kAlign. Example: 1000 -> 1024, 1100 -> 1536, 5 MiB + 1 -> 6 MiB.
  static std::size_t size_class(std::size_t bytes);

  // The address of a block of size_class(bytes) (> 0) bytes: a cached one of that class, else a
  // new slot or allocation; 0 when grow() refuses (then trim() and ask again).
  std::uint64_t allocate(std::size_t bytes);
  // Returns a block that allocate() gave; false (and nothing changes) for any other address.
  bool free(std::uint64_t address);
  // Gives back every allocation no live block uses; returns their bytes.
  std::size_t trim();
  Stats stats() const;

 private:
  struct Slab {
    std::size_t block = 0;  // the class of its slots
    std::size_t used = 0;   // slots handed out
  };
  Grow grow_;
  Release release_;
  std::map<std::uint64_t, Slab> slabs_;                             // by start address
  std::unordered_map<std::uint64_t, std::size_t> large_;            // own allocations: bytes
  std::unordered_map<std::size_t, std::vector<std::uint64_t>> free_;  // class -> cached blocks
  std::unordered_map<std::uint64_t, std::size_t> live_;             // address -> class
};

}  // namespace axe::cuda
