#pragma once
// doctest, as every test includes it. doctest 2.4.9 (Debian 12's) writes a `const char*` in INFO
// and CAPTURE as its address: a test looping `for (const char* shape : {...})` logged
// "0x55dd93c16928" where the shape belonged. Up to 2.4.9 the text is written instead; a later
// doctest is left as it comes.
#include <doctest/doctest.h>

#include <ostream>

#if DOCTEST_VERSION < 20410
namespace doctest::detail {
template <> struct filldata<const char*> {
    static void fill(std::ostream* stream, const char* in) { *stream << (in ? in : "(null)"); }
};
} // namespace doctest::detail
#endif
