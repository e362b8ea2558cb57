#pragma once

#include "runtime/launch.hpp"

#include <memory>
#include <string>
#include <vector>

namespace kjit {

class Context;

/// An owned, loaded CUBIN; it keeps the context it was loaded into alive (Context::share()).
class Module {
  public:
    /// Loads `image` (CUBIN or PTX) into `context`; `label` names it in errors.
    static Module load(const Context& context, const std::string& image, const std::string& label);
    Module(Module&& other) noexcept;
    Module& operator=(Module&& other) noexcept;
    Module(const Module&) = delete;
    Module& operator=(const Module&) = delete;
    ~Module();

    /// The entry point `name`; NotFoundError when the module has none of that name.
    [[nodiscard]] Function function(const std::string& name) const;
    /// Every entry point of the module.
    [[nodiscard]] std::vector<Function> functions() const;
    [[nodiscard]] CUmodule handle() const { return module_; }

  private:
    Module(CUmodule m, std::string label, int device_ordinal, std::string arch,
           std::shared_ptr<const void> context);
    CUmodule module_ = nullptr;
    std::string label_; ///< the variant its functions report
    int device_ordinal_ = 0;
    std::string arch_;
    std::shared_ptr<const void> context_; ///< released after the module is unloaded
};

} // namespace kjit
