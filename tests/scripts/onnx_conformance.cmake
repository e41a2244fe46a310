# ONNX conformance: the backend node tests generated at test time by Debian's python3-onnx, checked against
# ridge's inferred output shapes (both with ONNX's inference and with ridge's rules alone).
add_executable(onnx_conformance_check ${CMAKE_CURRENT_LIST_DIR}/onnx_conformance_check.cpp)
ridge_target_defaults(onnx_conformance_check)
target_link_libraries(onnx_conformance_check PRIVATE ridge_load ridge_backends_direct)
add_test(NAME onnx_conformance
         COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/onnx_conformance.sh $<TARGET_FILE:onnx_conformance_check>
                 ${CMAKE_BINARY_DIR}/onnx_node_tests)
set_tests_properties(onnx_conformance PROPERTIES LABELS "load;conformance" TIMEOUT 300)
