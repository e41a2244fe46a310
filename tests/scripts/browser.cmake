# Browser test: `ridge report` output opened in headless Chromium via chromedriver (tests/scripts/browser_check.mjs):
# no console errors, every section present, the table sorts, hover shows a layer's numbers, screenshot not blank.
# Exit code 77 (chromium or chromedriver missing) is reported as skipped.
find_program(RIDGE_NODE node)
if(RIDGE_NODE)
  add_test(NAME browser.report_resnet18
           COMMAND ${RIDGE_NODE} ${CMAKE_CURRENT_SOURCE_DIR}/scripts/browser_check.mjs
                   --ridge $<TARGET_FILE:ridge> --model resnet18 --out ${CMAKE_BINARY_DIR}/browser-check
                   --sections summary,layers,charts,prediction --min-rows 20 --min-charts 2
                   --screenshot ${CMAKE_BINARY_DIR}/browser-check/report.png)
  set_tests_properties(browser.report_resnet18 PROPERTIES LABELS "report;browser" SKIP_RETURN_CODE 77 TIMEOUT 120)
else()
  message(STATUS "node not found: browser test of the HTML report not registered")
endif()
