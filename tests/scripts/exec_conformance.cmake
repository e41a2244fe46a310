# Executor conformance: every ONNX backend node test (generated at test time by Debian's python3-onnx) whose ops
# the oneDNN executor supports must reproduce its expected outputs through `ridge run` (rtol 1e-3, atol 1e-7).
# The script prints how many cases ran and passed.
add_test(NAME exec_conformance
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/exec_conformance.py $<TARGET_FILE:ridge>
                 ${CMAKE_BINARY_DIR}/exec_node_tests)
set_tests_properties(exec_conformance PROPERTIES LABELS "measure;conformance" TIMEOUT 600)
