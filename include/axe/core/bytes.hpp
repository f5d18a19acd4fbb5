// Byte counts as people write them on command lines and in environment variables.
//
// parse_bytes("64K", "--spread-min") == 65536: a decimal integer >= 0 with an optional binary
// suffix K, M or G (also KiB, MiB, GiB; any case), 1K = 1024. Junk, a negative value, an unknown
// suffix and 64-bit overflow are axe::Error naming `what` and the text.
// parse_byte_list("1M,16M", "--sizes") == {1048576, 16777216}: comma-separated, each > 0.
// bytes_text(1048576) == "1M", bytes_text(1536) == "1.5K", bytes_text(100) == "100".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace axe {

std::int64_t parse_bytes(std::string_view text, std::string_view what);
std::vector<std::int64_t> parse_byte_list(std::string_view text, std::string_view what);
std::string bytes_text(double bytes);

}  // namespace axe
