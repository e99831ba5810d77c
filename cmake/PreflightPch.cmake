# Precompiled headers (PREFLIGHT_PCH, default OFF; the asan and tsan presets turn it on): the
# third-party headers most translation units include (nlohmann/json, spdlog/fmt, yaml-cpp, the
# standard library; GoogleTest/GoogleMock for tests) are compiled once per build directory into two
# precompiled headers, and every preflight library, program and test reuses one of them
# (REUSE_FROM) instead of parsing those headers again in each translation unit.
#
# preflight_enable_pch() is called once at the end of the top-level CMakeLists.txt; it walks every
# target defined so far, so new libraries and tests get a precompiled header without any edit here.
# Left out: targets with C or CUDA sources, shared libraries (-fPIC), and anything that does not link
# preflight_warnings (whose flags, sanitizers included, must match the precompiled header's).
#
# What is in them, and what is not (measured 28 Nov 2026, clang 14, the asan preset's flags, one
# translation unit at a time, CPU seconds):
#   - with json, spdlog/fmt, yaml-cpp, the standard headers and gtest/gmock, and clang's
#     -fpch-instantiate-templates (CMake's PCH_INSTANTIATE_TEMPLATES, on by default): judge_test
#     2.7 -> 0.9 s, config_test 4.7 -> 3.0, fabric_test 4.3 -> 2.5, report_json_test 6.8 -> 5.0,
#     agent_hub_test 9.4 -> 7.6; the unity sources of the libraries 20-30 % less (core's first
#     5.3 -> 3.6, outcome's first 9.7 -> 7.9);
#   - Boost.Asio and CLI11 are left out: with them in, every test compiled slower than with no
#     precompiled header at all (judge_test 2.7 -> 3.5 s, hostlist_test 2.5 -> 4.0): each translation
#     unit then emits Asio's and CLI11's non-template inline code, which most of them never include.
# The earlier measurement that kept this OFF (22 Nov 2026, GCC 12, Debug + ASan/UBSan, a header with
# Asio and CLI11: 561 CPU s with, 312 without, for preflight_core and its unit tests) was of that
# heavier header and GCC; GCC builds (the default preset, scripts/build.sh) keep it OFF.
#
# ccache: a compile that uses a precompiled header is cached only with
# sloppiness=pch_defines,time_macros (and, for clang, -Xclang -fno-pch-timestamp on the header);
# when the launcher is ccache we set that for preflight's compiles through the environment (ccache
# 4.7 has no "ccache key=value" form), so the user's ccache.conf is left alone. Without ccache
# nothing changes. The build works either way.
option(PREFLIGHT_PCH "Precompile the common third-party headers (clang sanitizer builds; see above)"
       OFF)

function(_preflight_collect_targets dir out)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(sub ${subdirs})
    _preflight_collect_targets(${sub} sub_targets)
    list(APPEND targets ${sub_targets})
  endforeach()
  set(${out} ${targets} PARENT_SCOPE)
endfunction()

# The headers most translation units include, heaviest first (not Asio, not CLI11: see above).
set(_pf_pch_headers
    <nlohmann/json.hpp> <spdlog/spdlog.h> <fmt/format.h> <yaml-cpp/yaml.h> <algorithm> <chrono>
    <filesystem> <fstream> <functional> <map> <memory> <optional> <set> <sstream> <string>
    <string_view> <thread> <vector>)

function(preflight_enable_pch)
  if(NOT PREFLIGHT_PCH)
    return()
  endif()
  # Only what every preflight target has (preflight_core's public libraries and
  # preflight_warnings): a compiler refuses or ignores a precompiled header built with a macro
  # its user lacks.
  set(deps nlohmann_json::nlohmann_json spdlog::spdlog yaml-cpp Threads::Threads preflight_warnings)
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
  if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    # No time stamp in clang's precompiled header: ccache can then cache its users.
    foreach(t preflight_pch preflight_test_pch)
      if(TARGET ${t})
        target_compile_options(${t} PRIVATE -Xclang -fno-pch-timestamp)
      endif()
    endforeach()
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
        "${CMAKE_COMMAND};-E;env;CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime;${launcher}")
    endif()
  endforeach()
endfunction()
