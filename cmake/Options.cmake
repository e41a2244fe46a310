# Build options and compiler flags for every ridge target.
option(RIDGE_BUILD_TESTS "Build the GoogleTest suite" ON)
option(RIDGE_BUILD_BENCH "Build the benchmark targets" ON)
option(RIDGE_BUILD_FUZZ "Build libFuzzer targets (needs clang)" OFF)
option(RIDGE_BUILD_PYTHON "Build the Python module `ridge` (python/) when pybind11 is found" ON)
# The `ridge` binary's allocator. Building an LLM's graph (300,000 nodes for an expert-heavy model, four graphs
# per `ridge serve`) is allocation-bound under glibc's malloc; jemalloc halves the wall time (bench/README.md,
# graph_build_speed.sh). Only the binary links it: the libraries, the tests and the Python module keep the system
# allocator, and sanitizer builds (which interpose malloc themselves) leave it out.
option(RIDGE_JEMALLOC "Link the ridge binary with jemalloc (Debian libjemalloc-dev)" ON)
if(CMAKE_CXX_FLAGS MATCHES "-fsanitize")
  set(RIDGE_JEMALLOC OFF)
endif()

set(CMAKE_CXX_STANDARD 20)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
set(CMAKE_CXX_EXTENSIONS ON)   # __int128 is a GNU extension; counts use it
set(CMAKE_EXPORT_COMPILE_COMMANDS ON)
if(NOT CMAKE_BUILD_TYPE)
  set(CMAKE_BUILD_TYPE Release CACHE STRING "Build type" FORCE)
endif()
# The binary ends up at build/ridge.
set(CMAKE_RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})

# Warning flags for ridge's own targets (not for dependencies).
# -Wno-restrict: GCC 12 reports false -Wrestrict positives inside libstdc++'s std::string (GCC bug 105651).
set(RIDGE_WARNINGS -Wall -Wextra -Wno-restrict)
function(ridge_target_defaults target)
  target_compile_options(${target} PRIVATE ${RIDGE_WARNINGS})
  target_include_directories(${target} PUBLIC ${PROJECT_SOURCE_DIR}/include PRIVATE ${PROJECT_SOURCE_DIR}/src)
endfunction()

# Front ends and tests (parsing arguments, formatting output, asserting) gain nothing from -O3 but compile ~30 %
# slower at it: on the 2-core CI machine that is about two minutes of a clean build. The stages that compute
# (graph to model, measure) keep the build type's flags. Release builds only; -O1 comes after CMake's -O3.
function(ridge_front_end_optimisation target)
  target_compile_options(${target} PRIVATE $<$<CONFIG:Release>:-O1>)
  ridge_unity_batches(${target})
endfunction()

# Unity batches: each batch of sources compiles as one translation unit, so the inline code of the header-only
# libraries every file includes (CLI11, nlohmann/json, GoogleTest, fmt) is generated once per batch instead of once
# per file. Files with a `#pragma GCC target` (the per-ISA machine kernels, kernels_<isa>.cpp) stay alone: the
# pragma would reach the files after them. Helpers in anonymous namespaces need distinct names within a target.
option(RIDGE_UNITY_BUILD "Compile each target's sources in unity batches (faster clean builds)" ON)
# 16 rather than 8: a clean build took 724 s instead of 860 s of CPU on the 2-core CI VM (2026-12-02).
set(RIDGE_UNITY_BATCH 16 CACHE STRING "Sources per unity batch")
function(ridge_unity_batches target)
  set_target_properties(${target} PROPERTIES UNITY_BUILD ${RIDGE_UNITY_BUILD} UNITY_BUILD_BATCH_SIZE ${RIDGE_UNITY_BATCH})
  get_target_property(sources ${target} SOURCES)
  foreach(source ${sources})
    if(source MATCHES "kernels_[a-z0-9]+\\.cpp$")
      set_source_files_properties(${source} TARGET_DIRECTORY ${target} PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
    endif()
  endforeach()
endfunction()

# Where the shared fixtures live (tests skip cleanly when the folder is absent).
set(RIDGE_SHARED_DIR "${PROJECT_SOURCE_DIR}/../shared" CACHE PATH "Path to the shared/ folder with fixtures")

# ridge_stage(NAME [DIR subdir] [EXCLUDE subdir] [DEPS...]): one static library per pipeline stage from every
# .cpp below the stage folder (or below DIR; without EXCLUDE's folder). A stage without sources defines no target
# (later stages check `if(TARGET ...)`). Everything is position-independent: the backends module links them.
set(CMAKE_POSITION_INDEPENDENT_CODE ON)
function(ridge_stage name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "DIR;EXCLUDE" "")
  set(root ${CMAKE_CURRENT_SOURCE_DIR})
  if(arg_DIR)
    set(root ${CMAKE_CURRENT_SOURCE_DIR}/${arg_DIR})
  endif()
  file(GLOB_RECURSE sources CONFIGURE_DEPENDS ${root}/*.cpp)
  if(arg_EXCLUDE)
    list(FILTER sources EXCLUDE REGEX "^${CMAKE_CURRENT_SOURCE_DIR}/${arg_EXCLUDE}/")
  endif()
  if(NOT sources)
    return()
  endif()
  add_library(${name} STATIC ${sources})
  ridge_target_defaults(${name})
  ridge_unity_batches(${name})
  foreach(dep ${arg_UNPARSED_ARGUMENTS})
    if(TARGET ${dep} OR dep MATCHES "::")
      target_link_libraries(${name} PUBLIC ${dep})
    endif()
  endforeach()
endfunction()
