#pragma once

#include "jit/compile_options.hpp"
#include "jit/sources.hpp"

#include <string>
#include <vector>

namespace kjit {

/// The CUDA toolkit include directories a compile searches by default: CCCL's (`<cub/...>`,
/// `<cuda/std/...>`, under include/cccl since CUDA 13) and the toolkit's own (`<cuda_bf16.h>`,
/// `<cuda_fp16.h>`), found beside the NVRTC library this process runs (its lib directory's
/// ../include), else under /usr/local/cuda. Only directories that hold `cuda_fp16.h` (or, for
/// CCCL, `cub/`) count; empty when none is found. Found once per process.
const std::vector<std::string>& default_toolkit_include_dirs();

/// The toolkit include directories a compile of `kernel` (a file of `sources`) searches:
/// options.toolkit_include_dirs when given; else, under options.toolkit_headers, the default
/// ones when a file the kernel can read (itself and SourceSet::includable) includes a name that
/// `sources` lacks and a default directory holds (`<cuda_bf16.h>`, `<cub/...>`); else none, so
/// a kernel that needs no toolkit header compiles, and is keyed, as without them.
std::vector<std::string> toolkit_dirs_for(const CompileOptions& options, const SourceSet& sources,
                                          const SourceFile& kernel);

/// The same search from one library directory ("/usr/local/cuda/lib64"), for tests.
std::vector<std::string> toolkit_include_dirs_beside(const std::string& lib_dir);

} // namespace kjit
