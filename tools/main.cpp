// kjit: one binary, verbs. Exit codes: 0 ok, 1 findings or failed checks, 2 usage or
// environment error.
#include "tools/verbs.hpp"

#include "core/flags.hpp"
#include "core/names.hpp"
#include "jit/compile_options.hpp"
#include "jit/error.hpp"
#include "runtime/driver.hpp"

#include <iostream>
#include <functional>
#include <map>

int main(int argc, char** argv) {
    using namespace kjit::cli;
    CLI::App app{"kjit: runtime-compiled CUDA kernels: compile, audit, check, launch"};
    app.require_subcommand(1);
    std::map<std::string, Action> actions;
    for (auto add : {add_audit, add_check, add_compile, add_env, add_info, add_specialize, add_fresh, add_cache,
                     add_compile_worker, add_ledger, add_bench, add_digest, add_lint, add_sig, add_sweep, add_tune}) {
        auto action = add(app);
        actions[app.get_subcommands({}).back()->get_name()] = std::move(action);
    }
    // A repeatable option takes one value per occurrence (`--arch sm_90 --arch sm_80`): a
    // greedy one would swallow the positionals after it (`kjit lint --shape F a.cu` read a.cu
    // as a second shape file and linted the default tree).
    const std::function<void(CLI::App&)> one_value_each = [&](CLI::App& a) {
        for (CLI::Option* o : a.get_options())
            if (!o->get_positional() && o->get_items_expected_max() > 1)
                o->allow_extra_args(false);
        for (CLI::App* sub : a.get_subcommands({}))
            one_value_each(*sub);
    };
    one_value_each(app);
    if (argc > 1 && argv[1][0] != '-' && !actions.contains(argv[1])) {
        std::vector<std::string> verbs;
        for (const auto& [name, _] : actions)
            verbs.push_back(name);
        std::cerr << "kjit: error: unknown verb '" << argv[1] << "' (verbs: " << kjit::join(verbs)
                  << ")\n";
        return kUsage;
    }
    // A define given twice with two values (`-D B=64 -D B=128`) is a mistake, not "the last
    // one wins": every -D of every verb is checked once parsed.
    const std::function<void(CLI::App&)> defines_once = [&](CLI::App& a) {
        for (CLI::Option* o : a.get_options())
            if (o->check_lname("define")) {
                std::map<std::string, std::string> seen;
                for (const std::string& d : o->results()) {
                    const auto [name, value] = kjit::split_define(d);
                    if (const auto [it, fresh] = seen.emplace(name, value);
                        !fresh && it->second != value)
                        throw CLI::ValidationError("--define", name + " is given twice, as " +
                                                                   it->second + " and as " + value +
                                                                   ": give it once");
                }
            }
        for (CLI::App* sub : a.get_subcommands())
            defines_once(*sub);
    };
    try {
        app.parse(argc, argv);
        defines_once(app);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        app.exit(e);
        return kUsage;
    }
    try {
        const std::string verb = app.get_subcommands().front()->get_name();
        // Every verb starts as an engine does: a misspelled or malformed KJIT_* variable is an
        // error, not a silently ignored setting (`kjit env` reports them itself).
        if (verb != "env" && verb != "compile-worker")
            (void)kjit::builtin_flags().resolve();
        return actions.at(verb)();
    } catch (const kjit::FlagError& e) {
        for (const auto& d : e.diagnostics)
            std::cerr << "kjit: " << kjit::severity_name(d.severity) << ": " << d.message << '\n';
        return kUsage;
    } catch (const kjit::ConfigError& e) {
        std::cerr << "kjit: " << e.what() << '\n';
        return kUsage;
    } catch (const kjit::NotFoundError& e) {
        std::cerr << "kjit: error: " << e.what() << '\n';
        return kUsage;
    } catch (const kjit::NoDeviceError& e) {
        std::cerr << "kjit: error: " << e.what() << '\n';
        return kUsage;
    } catch (const kjit::CompileError& e) {
        std::cerr << "kjit: error: " << e.what() << '\n';
        return kFindings;
    } catch (const std::exception& e) {
        std::cerr << "kjit: error: " << e.what() << '\n';
        return kFindings;
    }
    return kUsage;
}
