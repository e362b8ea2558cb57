#include "runtime/module.hpp"

#include "core/warnings.hpp"
#include "runtime/context.hpp"

#include <cstdio>
#include <utility>

namespace kjit {

Module::Module(CUmodule m, std::string label, int device_ordinal, std::string arch,
               std::shared_ptr<const void> context)
    : module_(m), label_(std::move(label)), device_ordinal_(device_ordinal),
      arch_(std::move(arch)), context_(std::move(context)) {}

Module Module::load(const Context& context, const std::string& image, const std::string& label) {
    context.make_current();
    const std::string arch = context.device().arch(); // before the load: nothing to unload
    CUmodule m = nullptr;
    // PTX must be NUL-terminated (std::string is); CUBIN is read by its ELF header.
    check(driver().cuModuleLoadData(&m, image.c_str()), "cuModuleLoadData", [&] {
        return "module=" + label + " bytes=" + std::to_string(image.size()) +
               " dev=" + std::to_string(context.device().ordinal());
    });
    return {m, label, context.device().ordinal(), arch, context.share()};
}

Module::Module(Module&& other) noexcept
    : module_(std::exchange(other.module_, nullptr)), label_(std::move(other.label_)),
      device_ordinal_(other.device_ordinal_), arch_(std::move(other.arch_)),
      context_(std::move(other.context_)) {}

Module& Module::operator=(Module&& other) noexcept {
    std::swap(module_, other.module_);
    std::swap(label_, other.label_);
    std::swap(device_ordinal_, other.device_ordinal_);
    std::swap(arch_, other.arch_);
    std::swap(context_, other.context_);
    return *this;
}

Module::~Module() {
    if (module_)
        if (const CUresult r = driver().cuModuleUnload(module_); r != CUDA_SUCCESS)
            warn("cuModuleUnload(" + label_ + "): " + describe(r));
}

std::vector<Function> Module::functions() const {
    unsigned count = 0;
    check(driver().cuModuleGetFunctionCount(&count, module_), "cuModuleGetFunctionCount",
          [&] { return "module=" + label_; });
    std::vector<CUfunction> handles(count);
    check(driver().cuModuleEnumerateFunctions(handles.data(), count, module_),
          "cuModuleEnumerateFunctions", [&] { return "module=" + label_; });
    std::vector<Function> out;
    for (CUfunction f : handles) {
        const char* name = nullptr;
        check(driver().cuFuncGetName(&name, f), "cuFuncGetName",
              [&] { return "module=" + label_; });
        // Under lazy loading (the default) enumerated handles are not loaded yet; looking
        // each up by name loads it.
        out.push_back(function(name));
    }
    return out;
}

Function Module::function(const std::string& name) const {
    CUfunction f = nullptr;
    const CUresult r = driver().cuModuleGetFunction(&f, module_, name.c_str());
    if (r == CUDA_ERROR_NOT_FOUND)
        throw NotFoundError("module " + label_ + " has no entry point '" + name + "'");
    check(r, "cuModuleGetFunction", [&] { return "module=" + label_ + " function=" + name; });
    return {f, name, device_ordinal_, arch_, label_};
}

} // namespace kjit
