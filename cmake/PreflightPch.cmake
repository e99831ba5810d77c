# Precompiled headers (PREFLIGHT_PCH, default OFF): the heavy third-party headers (Boost.Asio,
# nlohmann/json, spdlog/fmt, yaml-cpp, CLI11; GoogleTest/GoogleMock for tests) are compiled once per
# build directory into two precompiled headers, and every preflight library, program and test reuses
# one of them (REUSE_FROM) instead of parsing those headers again in each translation unit.
#
# preflight_enable_pch() is called once at the end of the top-level CMakeLists.txt; it walks every
# target defined so far, so new libraries and tests get a precompiled header without any edit here.
# Left out: targets with C or CUDA sources, shared libraries (-fPIC), and anything that does not link
# preflight_warnings (whose flags, sanitizers included, must match the precompiled header's).
#
# ccache: a compile that uses a precompiled header is cached only with
# sloppiness=pch_defines,time_macros; when the launcher is ccache we set that for preflight's compiles
# through the environment (ccache 4.7 has no "ccache key=value" form), so the user's ccache.conf is
# left alone. Without ccache nothing changes. The build works either way.
#
# Why OFF: measured on 22 Nov 2026 (GCC 12, Debug + ASan/UBSan, CCACHE_DISABLE=1, clean build of
# preflight_core and its 15 unit tests), the build took 561 CPU s with the precompiled headers and
# 312 CPU s without: the library header alone is 300 MB, and loading it costs more than most of our
# translation units take to compile. Turn it on only after measuring the whole build again.
option(PREFLIGHT_PCH "Precompile heavy third-party headers (measured slower here: see below)" OFF)

function(_preflight_collect_targets dir out)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(sub ${subdirs})
    _preflight_collect_targets(${sub} sub_targets)
    list(APPEND targets ${sub_targets})
  endforeach()
  set(${out} ${targets} PARENT_SCOPE)
endfunction()

# The headers most translation units include (counted over the tree), heaviest first.
set(_pf_pch_headers
    <boost/asio.hpp> <nlohmann/json.hpp> <spdlog/spdlog.h> <fmt/format.h> <yaml-cpp/yaml.h>
    <CLI/CLI.hpp> <algorithm> <chrono> <filesystem> <fstream> <functional> <map> <memory>
    <optional> <set> <sstream> <string> <string_view> <thread> <vector>)

function(preflight_enable_pch)
  if(NOT PREFLIGHT_PCH)
    return()
  endif()
  # Only what every preflight target has (preflight_core's public libraries and
  # preflight_warnings): GCC ignores a precompiled header built with a macro its user lacks.
  # Boost and CLI11 are found on the default include path; Boost::headers would add
  # BOOST_ALL_NO_LIB (auto-linking is MSVC-only), so every target gets that macro instead.
  set(deps nlohmann_json::nlohmann_json spdlog::spdlog yaml-cpp Threads::Threads preflight_warnings)
  target_compile_definitions(preflight_warnings INTERFACE BOOST_ALL_NO_LIB)
  file(WRITE ${PROJECT_BINARY_DIR}/preflight_pch.cpp "// Builds the shared precompiled header.\n")

  add_library(preflight_pch STATIC ${PROJECT_BINARY_DIR}/preflight_pch.cpp)
  target_link_libraries(preflight_pch PRIVATE ${deps})
  target_precompile_headers(preflight_pch PRIVATE ${_pf_pch_headers})
  set(have_test_pch FALSE)
  if(TARGET GTest::gtest)
    add_library(preflight_test_pch STATIC ${PROJECT_BINARY_DIR}/preflight_pch.cpp)
    target_link_libraries(preflight_test_pch PRIVATE ${deps} GTest::gtest GTest::gmock)
    target_precompile_headers(preflight_test_pch PRIVATE ${_pf_pch_headers} <gtest/gtest.h>
                              <gmock/gmock.h>)
    set(have_test_pch TRUE)
  endif()

  _preflight_collect_targets(${PROJECT_SOURCE_DIR} targets)
  foreach(t ${targets})
    if(t MATCHES "^preflight(_test)?_pch$")
      continue()
    endif()
    get_target_property(type ${t} TYPE)
    if(NOT type STREQUAL "EXECUTABLE" AND NOT type STREQUAL "STATIC_LIBRARY")
      continue()
    endif()
    get_target_property(libs ${t} LINK_LIBRARIES)
    if(NOT "preflight_warnings" IN_LIST libs)
      continue()
    endif()
    get_target_property(sources ${t} SOURCES)
    set(plain_cxx TRUE)
    foreach(s ${sources})
      if(s MATCHES "\\.(c|cu)$")
        set(plain_cxx FALSE)
      endif()
    endforeach()
    if(NOT plain_cxx)
      continue()
    endif()
    if(have_test_pch AND ("GTest::gtest_main" IN_LIST libs OR "GTest::gtest" IN_LIST libs))
      target_precompile_headers(${t} REUSE_FROM preflight_test_pch)
    else()
      target_precompile_headers(${t} REUSE_FROM preflight_pch)
    endif()
  endforeach()

  # Targets copy CMAKE_CXX_COMPILER_LAUNCHER when they are created, so the ccache setting goes on
  # each target (the precompiled-header targets included).
  foreach(t ${targets} preflight_pch preflight_test_pch)
    if(NOT TARGET ${t})
      continue()
    endif()
    get_target_property(launcher ${t} CXX_COMPILER_LAUNCHER)
    if(launcher AND launcher MATCHES "ccache" AND NOT launcher MATCHES "CCACHE_SLOPPINESS")
      set_target_properties(${t} PROPERTIES CXX_COMPILER_LAUNCHER
        "${CMAKE_COMMAND};-E;env;CCACHE_SLOPPINESS=pch_defines,time_macros;${launcher}")
    endif()
  endforeach()
endfunction()
