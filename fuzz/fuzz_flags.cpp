// libFuzzer target for `kjit env --flags` files (FlagRegistry::load_toml_text): any bytes load
// or are refused with a kjit::Error, and a refused file leaves the registry as it was; what
// loads resolves (or is refused with a FlagError) against an empty environment and against
// one that sets every declared flag to its default, and prints its Markdown table. Any other
// exception, crash or hang is a bug. fuzz/run.sh builds and runs it.
#include "core/error.hpp"
#include "core/flags.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

namespace {

void load_and_resolve(kjit::FlagRegistry registry, const std::string& text) {
    const std::size_t before = registry.flags().size();
    const std::size_t rules = registry.tier_rules().size();
    try {
        registry.load_toml_text(text, "fuzz.flags.toml");
    } catch (const kjit::Error&) {
        if (registry.flags().size() != before || registry.tier_rules().size() != rules)
            __builtin_trap(); // a file with a mistake changes nothing
        return;
    }
    (void)registry.markdown();
    kjit::Environment defaults;
    for (const kjit::FlagSpec& f : registry.flags())
        defaults[f.name] = f.default_value;
    for (const kjit::Environment& env : {kjit::Environment{}, defaults}) {
        try {
            const kjit::ResolvedFlags r = registry.resolve(env);
            (void)r.defines();
            (void)r.tier();
        } catch (const kjit::Error&) {
        }
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    load_and_resolve(kjit::FlagRegistry{}, text);
    load_and_resolve(kjit::builtin_flags(), text);
    return 0;
}
