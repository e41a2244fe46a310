# Browser test: `ridge report` output opened in headless Chromium via chromedriver (tests/scripts/browser_check.mjs):
# no console errors, every section present, the headline's numbers equal --json's and fit the first screen, one
# roofline per device, chart titles name the scenario, the table sorts, hover shows a layer's numbers, screenshot
# not blank.
# Exit code 77 (chromium or chromedriver missing) is reported as skipped.
find_program(RIDGE_NODE node)
if(RIDGE_NODE)
  add_test(NAME browser.report_resnet18
           COMMAND ${RIDGE_NODE} ${CMAKE_CURRENT_SOURCE_DIR}/scripts/browser_check.mjs
                   --ridge $<TARGET_FILE:ridge> --model resnet18 --out ${CMAKE_BINARY_DIR}/browser-check
                   --ridge-args "-d a100 -d h100 --train --precision amp-bf16 --sweep 1,2,4"
                   --sections headline,roofline,sweep,layers,summary,prediction --min-rows 20 --min-charts 8
                   --rooflines a100-sxm4-40gb,h100-sxm --titles resnet18,amp-bf16,training
                   --screenshot ${CMAKE_BINARY_DIR}/browser-check/report.png)
  set_tests_properties(browser.report_resnet18 PROPERTIES LABELS "report;browser" SKIP_RETURN_CODE 77 TIMEOUT 120)
  add_test(NAME browser.report_llm_serving
           COMMAND ${RIDGE_NODE} ${CMAKE_CURRENT_SOURCE_DIR}/scripts/browser_check.mjs
                   --ridge $<TARGET_FILE:ridge> --model llama-3-8b --out ${CMAKE_BINARY_DIR}/browser-check-serve
                   --ridge-args "--serve -d a100 -d h100 --batch 8 --prompt 512 --generate 64"
                   --sections headline,roofline --min-charts 3 --rooflines a100-sxm4-40gb,h100-sxm --titles llama-3-8b,serving
                   --screenshot ${CMAKE_BINARY_DIR}/browser-check-serve/report.png)
  set_tests_properties(browser.report_llm_serving PROPERTIES LABELS "report;browser" SKIP_RETURN_CODE 77 TIMEOUT 120)
  # Measured on this CPU: filled points on the CPU's own chart only, the measured run's numbers on the headline.
  add_test(NAME browser.report_measured
           COMMAND ${RIDGE_NODE} ${CMAKE_CURRENT_SOURCE_DIR}/scripts/browser_check.mjs
                   --ridge $<TARGET_FILE:ridge> --model mnist --out ${CMAKE_BINARY_DIR}/browser-check-measured
                   --ridge-args "-d a100 --measure --sweep 1,2"
                   --sections headline,roofline,measurements --rooflines a100-sxm4-40gb,cpu --titles mnist,fp32,inference)
  set_tests_properties(browser.report_measured PROPERTIES LABELS "report;browser" SKIP_RETURN_CODE 77 TIMEOUT 120)
else()
  message(STATUS "node not found: browser test of the HTML report not registered")
endif()
