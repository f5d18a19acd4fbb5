// HostTensor: sizes checked where they are computed (no overflow, no negative extents) and
// element access bounds-checked; each error an axe::Error naming the shape or the index.
#include <gtest/gtest.h>

#include <cstdint>

#include "axe/core/error.hpp"
#include "axe/runtime/dist_tensor.hpp"
#include "runtime_test_util.hpp"

namespace axe {
namespace {

using test::error_of;

TEST(HostTensor, SizeOverflow_IsAnErrorNamingTheShape) {
  // 2^40 * 2^22 = 2^62 elements fit in 64 bits; their 2^65 bytes do not.
  std::string e = error_of([] { HostTensor h({std::int64_t{1} << 40, std::int64_t{1} << 22}, DType::F64); });
  EXPECT_NE(e.find("HostTensor of shape (1099511627776,4194304) f64"), std::string::npos) << e;
  EXPECT_NE(e.find("overflow"), std::string::npos) << e;
  // 2^32 * 2^32 = 2^64 elements: the element count itself overflows.
  e = error_of([] { HostTensor h({std::int64_t{1} << 32, std::int64_t{1} << 32}, DType::U8); });
  EXPECT_NE(e.find("HostTensor of shape (4294967296,4294967296)"), std::string::npos) << e;
}

// 2^62 bytes fit in 64 bits but not in memory: an error naming the shape, not std::bad_alloc.
TEST(HostTensor, UnallocatableSize_IsAnErrorNamingTheShape) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer reports a 2^62-byte allocation as fatal instead of throwing std::bad_alloc";
#endif
  std::string e = error_of([] { HostTensor h({std::int64_t{1} << 31, std::int64_t{1} << 31}, DType::U8); });
  EXPECT_NE(e.find("HostTensor of shape (2147483648,2147483648) u8: cannot allocate 4611686018427387904 bytes"),
            std::string::npos)
      << e;
}

TEST(HostTensor, NegativeExtent_IsAnError) {
  std::string e = error_of([] { HostTensor h({-4, 6}, DType::F32); });
  EXPECT_NE(e.find("HostTensor of shape (-4,6): extent -4 is negative"), std::string::npos) << e;
  // Two negative extents would multiply to a positive count (6): still an error.
  e = error_of([] { HostTensor h({-2, -3}, DType::F32); });
  EXPECT_NE(e.find("HostTensor of shape (-2,-3): extent -2 is negative"), std::string::npos) << e;
  // A shape changed after construction is checked where the count is used.
  HostTensor h({2, 3}, DType::F32);
  h.shape = {-2, -3};
  EXPECT_NE(error_of([&] { (void)h.elements(); }).find("extent -2 is negative"), std::string::npos);
}

TEST(HostTensor, GetSet_AreBoundsChecked) {
  HostTensor h({2, 3}, DType::I32);  // 6 elements
  h.set(5, 7);
  EXPECT_EQ(h.get(5), 7);
  EXPECT_EQ(h.get(0), 0);
  std::string e = error_of([&] { h.set(6, 1); });
  EXPECT_NE(e.find("HostTensor::set: index 6 outside the 6 elements of shape (2,3)"), std::string::npos) << e;
  e = error_of([&] { (void)h.get(-1); });
  EXPECT_NE(e.find("HostTensor::get: index -1 outside the 6 elements of shape (2,3)"), std::string::npos) << e;
  // Data shorter than the shape says (a public member, changed by hand): checked too.
  h.data.resize(8);  // 2 elements of i32
  e = error_of([&] { (void)h.get(2); });
  EXPECT_NE(e.find("HostTensor::get: index 2 outside the data (8 bytes of i32)"), std::string::npos) << e;
  EXPECT_EQ(h.get(1), 0);
}

TEST(HostTensor, EmptyShapes_AreFine) {
  HostTensor zero({0, 5}, DType::F64);
  EXPECT_EQ(zero.elements(), 0);
  EXPECT_TRUE(zero.data.empty());
  HostTensor scalar(std::vector<std::int64_t>{}, DType::F64);  // no dims: one element
  EXPECT_EQ(scalar.elements(), 1);
  EXPECT_EQ(scalar.data.size(), 8u);
  auto of = HostTensor::of<double>({0}, std::span<const double>());
  EXPECT_EQ(of.elements(), 0);
}

}  // namespace
}  // namespace axe
