# Every external dependency is looked up here, once. All come from Debian bookworm packages
# (see scripts/install-deps.sh).
find_package(fmt REQUIRED)             # fmt::fmt
find_package(nlohmann_json REQUIRED)   # nlohmann_json::nlohmann_json
find_package(CLI11 REQUIRED)           # CLI11::CLI11
find_package(Threads REQUIRED)
find_package(Protobuf REQUIRED)        # protobuf::libprotobuf
find_package(ONNX REQUIRED)            # onnx, onnx_proto
# oneDNN: Debian's dnnl-config.cmake insists on OpenCL headers we do not need (CPU engine only), so the
# library is located directly and wrapped in the same target name the package would export.
find_path(DNNL_INCLUDE_DIR oneapi/dnnl/dnnl.hpp REQUIRED)
find_library(DNNL_LIBRARY dnnl REQUIRED)
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
