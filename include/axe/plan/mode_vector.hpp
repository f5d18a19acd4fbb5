// ModeVector: the extents and strides of a plan's boxes (Transfer), a small-buffer vector.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <type_traits>
#include <vector>

namespace axe {

// The extents or strides of a box: a std::vector<std::int64_t> look-alike that keeps up to 4
// entries inline (boxes have 1-3 modes after coalescing in practice, at most 8) and spills to the
// heap beyond. A plan at 4096 ranks holds ~8k boxes; with three heap lists each, allocating them
// was half of the planning time. It converts to and from std::vector<std::int64_t>, compares
// equal to one with the same entries, and has the vector members the plan's consumers use
// (size, empty, [], front, back, data, begin/end, push_back, emplace_back, pop_back, assign,
// resize, reserve, clear, insert and erase).
class ModeVector {
 public:
  using value_type = std::int64_t;
  using size_type = std::size_t;
  using difference_type = std::ptrdiff_t;
  using reference = std::int64_t&;
  using const_reference = const std::int64_t&;
  using pointer = std::int64_t*;
  using const_pointer = const std::int64_t*;
  using iterator = std::int64_t*;
  using const_iterator = const std::int64_t*;
  static constexpr size_type inline_capacity = 4;

  ModeVector() noexcept {}
  ModeVector(std::initializer_list<std::int64_t> v) { assign(v.begin(), v.end()); }
  explicit ModeVector(size_type n, std::int64_t value = 0) { assign(n, value); }
  template <class It>
    requires(!std::is_integral_v<It>)
  ModeVector(It first, It last) {
    assign(first, last);
  }
  ModeVector(const std::vector<std::int64_t>& v) { assign(v.begin(), v.end()); }  // NOLINT: implicit
  ModeVector(const ModeVector& o) : size_(o.size_) {
    if (o.size_ <= inline_capacity) std::copy_n(o.data(), o.size_, u_.buf);
    else {
      u_.heap = new std::int64_t[o.size_];
      cap_ = o.size_;
      std::copy_n(o.u_.heap, o.size_, u_.heap);
    }
  }
  ModeVector(ModeVector&& o) noexcept { steal(o); }
  ModeVector& operator=(const ModeVector& o) {
    if (this != &o) assign(o.begin(), o.end());
    return *this;
  }
  ModeVector& operator=(ModeVector&& o) noexcept {
    if (this != &o) {
      release();
      steal(o);
    }
    return *this;
  }
  ModeVector& operator=(const std::vector<std::int64_t>& v) {
    assign(v.begin(), v.end());
    return *this;
  }
  ModeVector& operator=(std::initializer_list<std::int64_t> v) {
    assign(v.begin(), v.end());
    return *this;
  }
  ~ModeVector() { release(); }
  operator std::vector<std::int64_t>() const { return std::vector<std::int64_t>(begin(), end()); }  // NOLINT

  size_type size() const noexcept { return size_; }
  size_type max_size() const noexcept { return 0xffffffffu; }
  bool empty() const noexcept { return size_ == 0; }
  size_type capacity() const noexcept { return cap_; }
  std::int64_t* data() noexcept { return heap() ? u_.heap : u_.buf; }
  const std::int64_t* data() const noexcept { return heap() ? u_.heap : u_.buf; }
  iterator begin() noexcept { return data(); }
  iterator end() noexcept { return data() + size_; }
  const_iterator begin() const noexcept { return data(); }
  const_iterator end() const noexcept { return data() + size_; }
  const_iterator cbegin() const noexcept { return begin(); }
  const_iterator cend() const noexcept { return end(); }
  std::int64_t& operator[](size_type i) noexcept { return data()[i]; }
  const std::int64_t& operator[](size_type i) const noexcept { return data()[i]; }
  std::int64_t& front() noexcept { return data()[0]; }
  const std::int64_t& front() const noexcept { return data()[0]; }
  std::int64_t& back() noexcept { return data()[size_ - 1]; }
  const std::int64_t& back() const noexcept { return data()[size_ - 1]; }

  void reserve(size_type n) {
    if (n <= cap_) return;
    auto* p = new std::int64_t[n];
    // size_ <= cap_ < n: the min copies size_ entries, and tells GCC 12 so (without it,
    // -Wstringop-overflow sees a copy of up to 2^32 entries into n).
    std::copy_n(data(), std::min<size_type>(size_, n), p);
    release();
    u_.heap = p;
    cap_ = static_cast<std::uint32_t>(n);
  }
  void clear() noexcept { size_ = 0; }
  void push_back(std::int64_t v) {
    if (size_ == cap_) reserve(2 * size_type{cap_});
    data()[size_++] = v;
  }
  std::int64_t& emplace_back(std::int64_t v) {
    push_back(v);
    return back();
  }
  void pop_back() noexcept { --size_; }
  iterator erase(const_iterator first, const_iterator last) {
    auto* f = data() + (first - begin());
    auto* l = data() + (last - begin());
    std::copy(l, end(), f);
    size_ -= static_cast<std::uint32_t>(l - f);
    return f;
  }
  iterator erase(const_iterator pos) { return erase(pos, pos + 1); }
  void resize(size_type n, std::int64_t value = 0) {
    reserve(n);
    if (n > size_) std::fill(data() + size_, data() + n, value);
    size_ = static_cast<std::uint32_t>(n);
  }
  void assign(size_type n, std::int64_t value) {
    size_ = 0;
    resize(n, value);
  }
  template <class It>
    requires(!std::is_integral_v<It>)
  void assign(It first, It last) {
    const auto n = static_cast<size_type>(std::distance(first, last));
    size_ = 0;
    reserve(n);
    std::copy(first, last, data());
    size_ = static_cast<std::uint32_t>(n);
  }
  void assign(std::initializer_list<std::int64_t> v) { assign(v.begin(), v.end()); }
  template <class It>
    requires(!std::is_integral_v<It>)
  iterator insert(const_iterator pos, It first, It last) {
    const auto at = static_cast<size_type>(pos - begin());
    const auto n = static_cast<size_type>(std::distance(first, last));
    if (size_ + n > cap_) reserve(std::max<size_type>(size_ + n, 2 * size_type{cap_}));
    std::copy_backward(data() + at, data() + size_, data() + size_ + n);
    std::copy(first, last, data() + at);
    size_ += static_cast<std::uint32_t>(n);
    return data() + at;
  }
  iterator insert(const_iterator pos, std::int64_t v) {
    const std::int64_t x[1] = {v};
    return insert(pos, x, x + 1);
  }

  friend bool operator==(const ModeVector& a, const ModeVector& b) noexcept {
    return a.size_ == b.size_ && std::equal(a.begin(), a.end(), b.begin());
  }
  friend bool operator==(const ModeVector& a, const std::vector<std::int64_t>& b) noexcept {
    return a.size_ == b.size() && std::equal(a.begin(), a.end(), b.begin());
  }

 private:
  bool heap() const noexcept { return cap_ > inline_capacity; }
  void release() noexcept {
    if (heap()) delete[] u_.heap;
    cap_ = inline_capacity;
  }
  void steal(ModeVector& o) noexcept {
    size_ = o.size_;
    cap_ = o.cap_;
    if (o.heap()) u_.heap = o.u_.heap;
    else std::copy(o.u_.buf, o.u_.buf + o.size_, u_.buf);
    o.size_ = 0;
    o.cap_ = inline_capacity;
  }
  std::uint32_t size_ = 0;
  std::uint32_t cap_ = inline_capacity;
  union U {
    std::int64_t buf[inline_capacity];
    std::int64_t* heap;
  } u_;
};

}  // namespace axe
