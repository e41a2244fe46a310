# pytest suite of the Python module (tests/python/test_*.py): one ctest per file, label "python", run against the
# module in build/python. Tests needing torch, torchvision or pandas skip when those are not installed; the file
# comparing with the CLI runs build/ridge ($RIDGE_BINARY).
if(RIDGE_BUILD_PYTHON AND TARGET ridge_python)
  execute_process(COMMAND ${Python_EXECUTABLE} -c "import pytest" RESULT_VARIABLE ridge_no_pytest
                  OUTPUT_QUIET ERROR_QUIET)
  if(ridge_no_pytest)
    message(STATUS "pytest not found for ${Python_EXECUTABLE}: Python tests not registered (Debian: python3-pytest)")
  else()
    file(GLOB RIDGE_PYTHON_TESTS CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/python/test_*.py)
    foreach(f ${RIDGE_PYTHON_TESTS})
      get_filename_component(name ${f} NAME_WE)
      add_test(NAME python.${name}
               COMMAND ${Python_EXECUTABLE} -m pytest -q -p no:cacheprovider -rs ${f})
      set_tests_properties(python.${name} PROPERTIES LABELS python TIMEOUT 600 ENVIRONMENT
        "PYTHONPATH=${CMAKE_BINARY_DIR}/python;RIDGE_BINARY=$<TARGET_FILE:ridge>;RIDGE_SHARED_DIR=${RIDGE_SHARED_DIR};PYTHONDONTWRITEBYTECODE=1")
    endforeach()
  endif()
endif()

# The notebook view (Result._repr_html_ / to_html) in headless Chromium: the summary and layer sections, a sortable
# layer table and the share chart render without console errors (tests/scripts/browser_check.mjs).
find_program(RIDGE_NODE node)
if(RIDGE_BUILD_PYTHON AND TARGET ridge_python AND RIDGE_NODE AND NOT ridge_no_pytest)
  set(out ${CMAKE_BINARY_DIR}/browser-check-python)
  add_test(NAME browser.python_notebook_html
           COMMAND sh -c "mkdir -p '${out}' && PYTHONPATH='${CMAKE_BINARY_DIR}/python' '${Python_EXECUTABLE}' -c \"import ridge; open('${out}/summary.html', 'w').write(ridge.summary('resnet18').to_html())\" && '${RIDGE_NODE}' '${CMAKE_CURRENT_SOURCE_DIR}/scripts/browser_check.mjs' --html '${out}/summary.html' --sections summary,layers --min-rows 20 --min-charts 1 --screenshot '${out}/summary.png'")
  set_tests_properties(browser.python_notebook_html PROPERTIES LABELS "python;browser" SKIP_RETURN_CODE 77 TIMEOUT 120)
endif()
