// parse_bytes / parse_byte_list / bytes_text (axe/core/bytes.hpp): exact examples and errors.
#include <gtest/gtest.h>

#include "axe/core/bytes.hpp"
#include "axe/core/error.hpp"

namespace axe {
namespace {

TEST(Bytes, ParseExamples) {
  EXPECT_EQ(parse_bytes("0", "x"), 0);
  EXPECT_EQ(parse_bytes("32768", "x"), 32768);
  EXPECT_EQ(parse_bytes("64K", "x"), 65536);
  EXPECT_EQ(parse_bytes("64kib", "x"), 65536);
  EXPECT_EQ(parse_bytes("1M", "x"), 1 << 20);
  EXPECT_EQ(parse_bytes("2G", "x"), std::int64_t{2} << 30);
  EXPECT_EQ(parse_byte_list("1M,16M", "--sizes"), (std::vector<std::int64_t>{1 << 20, 16 << 20}));
}

TEST(Bytes, ErrorsNameTheInputAndTheText) {
  for (const char* bad : {"", "-1", "1.5M", "12T", "K", "99999999999999999999"}) {
    try {
      parse_bytes(bad, "--sizes");
      ADD_FAILURE() << "no error for '" << bad << "'";
    } catch (const Error& e) {
      const std::string w = e.what();
      EXPECT_NE(w.find("--sizes"), std::string::npos) << w;
      EXPECT_NE(w.find("'" + std::string(bad) + "'"), std::string::npos) << w;
    }
  }
  EXPECT_THROW(parse_byte_list("1M,,2M", "--sizes"), Error);  // empty item
  EXPECT_THROW(parse_byte_list("1M,0", "--sizes"), Error);    // a size of 0
}

TEST(Bytes, TextExamples) {
  EXPECT_EQ(bytes_text(100), "100");
  EXPECT_EQ(bytes_text(1536), "1.5K");
  EXPECT_EQ(bytes_text(1 << 20), "1M");
  EXPECT_EQ(bytes_text(static_cast<double>(std::int64_t{3} << 30)), "3G");
}

}  // namespace
}  // namespace axe
