#include "tools/verbs.hpp"

#include "runtime/ledger.hpp"

#include <cstdio>
#include <memory>

namespace kjit::cli {

Action add_ledger(CLI::App& app) {
    auto file = std::make_shared<std::string>();
    auto* sub = app.add_subcommand(
        "ledger", "rank the launches a KJIT_LEDGER=1 run recorded by recoverable SM-time");
    sub->add_option("file", *file, "ledger CSV (KJIT_LEDGER_FILE of the recording run)")
        ->required();
    return [file] {
        const auto records = read_ledger_csv(*file);
        std::printf("kjit ledger %s: %zu launches\n%s", file->c_str(), records.size(),
                    ledger_table(records).c_str());
        return kOk;
    };
}

} // namespace kjit::cli
