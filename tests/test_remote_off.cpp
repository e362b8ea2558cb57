// A kjit built without hiredis's headers: this test executable compiles
// jit/remote/redis_client.cpp itself without KJIT_HAVE_HIREDIS (tests/CMakeLists.txt), and
// that object stands in for the library's at link time. The remote tier is then off, says
// why, and compiling goes on through the disk cache.
#include "jit/compile_cache.hpp"
#include "tests/support.hpp"

#include "tests/doctest.hpp"

using namespace kjit;

TEST_SUITE("cache") {

TEST_CASE("a build without hiredis has no remote tier and says so when one is asked for") {
    std::string why;
    CHECK_FALSE(RedisClient::available(&why));
    CHECK(why == "this kjit was built without hiredis (install libhiredis-dev and rebuild)");
    test::TempDir dir;
    std::vector<std::string> warnings;
    CacheSettings s;
    s.dir = dir.path();
    s.remote = RemoteSettings{};
    s.remote->url = "redis://127.0.0.1:6379/0";
    s.remote->allow_unsigned = true;
    s.warn = [&](const std::string& m) { warnings.push_back(m); };
    CompileCache cache(s);
    REQUIRE(cache.remote());
    CHECK_FALSE(cache.remote()->enabled());
    REQUIRE(warnings.size() == 1);
    CHECK(warnings[0] == "remote cache redis://127.0.0.1:6379/0 prefix kjit is off: this kjit was "
                         "built without hiredis (install libhiredis-dev and rebuild)");
    const std::string kernel = "extern \"C\" __global__ void z(int* y) { y[0] = 1; }\n";
    SourceSet src;
    src.add({"z.cu", "kernels/z.cu", kernel, hash128(kernel), 1});
    const Specialized a = cache.get(src, {"z", {}});
    REQUIRE(a.compiled);
    CHECK(a.origin == Origin::compiled);
    CHECK(cache.get(src, {"z", {}}).origin == Origin::disk);
    CHECK(warnings.size() == 1);
    // Without a store to reach, the configuration is still checked.
    s.remote->url = "http://127.0.0.1";
    CHECK_THROWS_AS(CompileCache{s}, ConfigError);
}

} // TEST_SUITE
