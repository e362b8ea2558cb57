# kjit_embed_kernels(<target> DIR <dir> [PREFIX <shown-prefix>])
# Creates an object library <target> that embeds the kernel tree under DIR and registers it
# with kjit::SourceSet::embedded(): every .cu, every header, and every file an #include names,
# whatever its extension (kjit-embed picks them from every file under DIR, by the rule of
# kjit::SourceSet::from_tree). Adding a file needs no CMake edit (CONFIGURE_DEPENDS); an edited
# file is re-embedded by the next build.
function(kjit_embed_kernels target)
  cmake_parse_arguments(ARG "" "DIR;PREFIX" "" ${ARGN})
  if(NOT ARG_DIR)
    message(FATAL_ERROR "kjit_embed_kernels(${target}): DIR is required")
  endif()
  get_filename_component(dir "${ARG_DIR}" ABSOLUTE)
  file(GLOB_RECURSE files CONFIGURE_DEPENDS "${dir}/*")
  list(SORT files)
  set(out "${CMAKE_CURRENT_BINARY_DIR}/${target}_embedded.cpp")
  set(prefix_args)
  if(ARG_PREFIX)
    set(prefix_args --prefix "${ARG_PREFIX}")
  endif()
  add_custom_command(
    OUTPUT "${out}"
    COMMAND kjit::embed --out "${out}" --dir "${dir}" ${prefix_args} ${files}
    DEPENDS kjit::embed ${files}
    COMMENT "Embedding kernel sources from ${dir}"
    VERBATIM)
  add_library(${target} OBJECT "${out}")
  target_link_libraries(${target} PUBLIC kjit::jit)
endfunction()
