#include "tools/verbs.hpp"

#include "core/flags.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <iostream>
#include <memory>

namespace kjit::cli {

namespace {
struct EnvArgs {
    std::vector<std::string> flag_files;
    bool restore = false, markdown = false;
};

std::string doc_column(const FlagSpec& spec) {
    std::string doc = spec.doc;
    for (const auto& r : spec.requires_)
        doc += (doc.empty() ? "" : "; ") + std::string("requires ") + r;
    if (!spec.define.empty())
        doc += (doc.empty() ? "" : "; ") + std::string("-D") + spec.define;
    return doc;
}

bool is_shell_name(const std::string& s) {
    return !s.empty() && !std::isdigit(static_cast<unsigned char>(s[0])) &&
           std::all_of(s.begin(), s.end(), [](char c) {
               return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
           });
}

void print_diagnostic(const Diagnostic& d) {
    std::cerr << "kjit: " << severity_name(d.severity) << ": " << d.message << '\n';
}

int run_env(const EnvArgs& args) {
    FlagRegistry registry = builtin_flags();
    for (const auto& file : args.flag_files)
        registry.load_toml(file);
    if (args.markdown) {
        std::cout << registry.markdown();
        return kOk;
    }
    const Environment env = process_environment();
    if (args.restore) {
        // Every variable under a registered prefix, declared or not: unsetting them all
        // returns every flag to its default and clears the typos too.
        for (const auto& name : registry.restore_set(env)) {
            if (is_shell_name(name))
                std::cout << "unset " << name << '\n';
            else
                std::cerr << "kjit: warning: a variable under a flag prefix has a name the "
                             "shell cannot unset; use env -u\n";
        }
        return kOk;
    }
    ResolvedFlags resolved;
    try {
        resolved = registry.resolve(env);
    } catch (const FlagError& e) {
        for (const auto& d : e.diagnostics)
            print_diagnostic(d);
        return kFindings;
    }
    for (const auto& d : resolved.warnings())
        print_diagnostic(d);

    std::vector<std::array<std::string, 5>> rows{{"flag", "value", "source", "type", "doc"}};
    for (const auto& f : resolved.flags())
        rows.push_back({f.spec.name, f.value.empty() ? "(empty)" : f.value,
                        f.source == FlagSource::environment ? "env" : "default",
                        flag_type_text(f.spec), doc_column(f.spec)});
    std::array<std::size_t, 4> width{};
    for (const auto& row : rows)
        for (std::size_t c = 0; c < width.size(); ++c)
            width[c] = std::max(width[c], row[c].size());
    for (const auto& row : rows) {
        std::string line;
        for (std::size_t c = 0; c < width.size(); ++c)
            line += row[c] + std::string(width[c] - row[c].size() + 2, ' ');
        std::cout << line << row[4] << '\n';
    }
    std::cout << "tier=" << resolved.tier() << '\n';
    return kOk;
}
} // namespace

Action add_env(CLI::App& app) {
    auto args = std::make_shared<EnvArgs>();
    auto* sub = app.add_subcommand(
        "env", "declared environment flags: values, where they came from, the restore set");
    sub->add_option("--flags", args->flag_files,
                    "a TOML file declaring an application's prefix, flags and tier rules")
        ->check(CLI::ExistingFile);
    sub->add_flag("--restore", args->restore,
                  "print the `unset` lines that return every flag to its default");
    sub->add_flag("--markdown", args->markdown, "print the declared flags as a Markdown table");
    return [args] { return run_env(*args); };
}

} // namespace kjit::cli
