#pragma once
// doctest, as every test includes it. doctest writes a `const char*` in INFO and CAPTURE as its
// address (2.4.9, Debian 12's, and the releases after it alike): a test looping
// `for (const char* shape : {...})` logged "0x55dd93c16928" where the shape belonged. Here it
// writes the text.
#include <doctest/doctest.h>

#include <ostream>

namespace doctest::detail {
template <> struct filldata<const char*> {
    static void fill(std::ostream* stream, const char* in) { *stream << (in ? in : "(null)"); }
};
} // namespace doctest::detail
