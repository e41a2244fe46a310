# Integration test against a real single-node Slurm (Debian slurm-wlm + munge), started and stopped by the test.
add_test(NAME slurm_sweep
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/scripts/slurm_test.sh $<TARGET_FILE:ridge>)
set_tests_properties(slurm_sweep PROPERTIES LABELS "slurm" TIMEOUT 300 SKIP_RETURN_CODE 77)
