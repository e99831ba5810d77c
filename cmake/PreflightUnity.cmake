# Unity builds of the libraries (PREFLIGHT_UNITY_BUILD, default OFF): each preflight_* library is
# compiled as a few "unity" translation units that #include up to PREFLIGHT_UNITY_BATCH_SIZE of its
# sources, so the heavy third-party headers (Boost.Asio, nlohmann/json, spdlog/fmt, yaml-cpp) are
# parsed once per batch instead of once per file. That is most of our compile time: CI (the asan,
# tsan and fuzz presets, scripts/package.sh with PREFLIGHT_PKG_UNOPTIMIZED=1) turns it on.
# OFF by default because a developer's edit then recompiles a whole batch instead of one file.
#
# Only the libraries: the test executables are one source each, and the programs' main.cpp and the
# GPU/MPI modules are single files too. Sources with their own compile definitions (build_info.cpp)
# are compiled alone by CMake.
#
# In a unity build, the anonymous namespaces and file-static names of one batch share a translation
# unit: helpers in different .cpp files of one library must have distinct names (or live in one
# place). A clash is a compile error ("redefinition of ..."), so the CI builds catch it.
#
# Precompiled headers (PREFLIGHT_PCH) work with it: CMake puts the precompiled header's include
# first in each unity source.
option(PREFLIGHT_UNITY_BUILD "Compile each library as a few unity translation units (CI)" OFF)
set(PREFLIGHT_UNITY_BATCH_SIZE 16 CACHE STRING "Sources per unity translation unit")

function(preflight_enable_unity)
  if(NOT PREFLIGHT_UNITY_BUILD)
    return()
  endif()
  _preflight_collect_targets(${PROJECT_SOURCE_DIR} targets)
  foreach(t ${targets})
    get_target_property(type ${t} TYPE)
    get_target_property(dir ${t} SOURCE_DIR)
    # The product libraries only, not the test or benchmark helpers.
    if(type STREQUAL "STATIC_LIBRARY" AND t MATCHES "^preflight_"
       AND NOT dir MATCHES "^${PROJECT_SOURCE_DIR}/(tests|bench|fuzz)(/|$)")
      set_target_properties(${t} PROPERTIES UNITY_BUILD ON
                            UNITY_BUILD_BATCH_SIZE ${PREFLIGHT_UNITY_BATCH_SIZE})
    endif()
  endforeach()
endfunction()
