// SHA-256 and its hex form, against the FIPS 180-2 test vector.

#include <exactly/common/digest.hpp>

#include <gtest/gtest.h>

namespace exactly {
namespace {

TEST(digest, sha256_of_abc_in_hex_is_the_published_vector) {
  EXPECT_EQ(to_hex(sha256("abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(digest, to_hex_writes_two_lowercase_digits_per_byte) {
  EXPECT_EQ(to_hex(std::string("\x00\x0f\xa0\xff", 4)), "000fa0ff");
  EXPECT_EQ(to_hex(""), "");
}

}  // namespace
}  // namespace exactly
