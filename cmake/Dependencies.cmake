# Every external dependency is looked up here, once. All come from Debian bookworm packages
# (see scripts/install-deps.sh).
find_package(fmt REQUIRED)             # fmt::fmt
find_package(nlohmann_json REQUIRED)   # nlohmann_json::nlohmann_json
find_package(CLI11 REQUIRED)           # CLI11::CLI11
find_package(Threads REQUIRED)
find_package(Protobuf REQUIRED)        # protobuf::libprotobuf
find_package(ONNX REQUIRED)            # onnx, onnx_proto
find_package(NLopt REQUIRED)           # NLopt::nlopt (C API, libnlopt-dev): derivative-free fits
# oneDNN: Debian's dnnl-config.cmake insists on OpenCL headers we do not need (CPU engine only), so the
# library is located directly and wrapped in the same target name the package would export.
find_path(DNNL_INCLUDE_DIR oneapi/dnnl/dnnl.hpp REQUIRED)
find_library(DNNL_LIBRARY dnnl REQUIRED)
if(RIDGE_JEMALLOC)
  find_library(JEMALLOC_LIBRARY jemalloc REQUIRED)   # libjemalloc-dev; -DRIDGE_JEMALLOC=OFF builds without it
endif()
add_library(DNNL::dnnl UNKNOWN IMPORTED)
set_target_properties(DNNL::dnnl PROPERTIES IMPORTED_LOCATION ${DNNL_LIBRARY}
                      INTERFACE_INCLUDE_DIRECTORIES ${DNNL_INCLUDE_DIR})
find_package(PNG)                      # PNG::PNG, optional: PNG charts
if(RIDGE_BUILD_TESTS)
  find_package(GTest REQUIRED)         # GTest::gtest_main
endif()
if(RIDGE_BUILD_BENCH)
  find_package(benchmark REQUIRED)     # benchmark::benchmark
endif()
if(RIDGE_BUILD_PYTHON)
  # Python module: Debian's pybind11-dev and python3-dev. Debian's /usr/bin/python3 (which has python3-torch) is
  # preferred over another python3 on PATH; pip passes its own interpreter as Python_EXECUTABLE.
  if(NOT Python_EXECUTABLE AND EXISTS /usr/bin/python3)
    set(Python_EXECUTABLE /usr/bin/python3)
  endif()
  find_package(Python COMPONENTS Interpreter Development.Module)
  set(PYBIND11_FINDPYTHON ON)
  find_package(pybind11 CONFIG QUIET)      # pybind11::module, pybind11_add_module()
  if(NOT pybind11_FOUND OR NOT Python_FOUND)
    message(STATUS "pybind11 or the Python headers not found: the Python module is not built")
    set(RIDGE_BUILD_PYTHON OFF)
  endif()
endif()
