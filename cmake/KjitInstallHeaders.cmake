# Run by `cmake --install` after the headers are copied: inside the repository kjit's headers
# include each other from the repo root ("jit/compiler.hpp"); installed, they live under
# include/kjit/ and must name each other <kjit/...>-rooted, so that a consumer needs only
# include/ on its path and a consumer's own jit/ or runtime/ headers are never picked instead.
# KJIT_INCLUDE_ROOT: the installed include/kjit directory.
file(GLOB_RECURSE headers "${KJIT_INCLUDE_ROOT}/*.hpp")
if(NOT headers)
  message(FATAL_ERROR "kjit: no installed headers under ${KJIT_INCLUDE_ROOT} to rewrite")
endif()
foreach(header IN LISTS headers)
  file(READ "${header}" text)
  string(REGEX REPLACE "#include \"(core|jit|lint|runtime|kernels|tuning)/"
    "#include \"kjit/\\1/" rewritten "${text}")
  if(NOT rewritten STREQUAL text)
    file(WRITE "${header}" "${rewritten}")
  endif()
endforeach()
