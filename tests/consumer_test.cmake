# ctest aot_consumer_project (tests/unit/aot.cmake), run with cmake -P:
# installs this build into a fresh prefix, builds examples/consumer against
# it as a user would, runs it, then edits a .tk file the consumer's kernel
# imports and checks that the rebuild re-runs tkc and still passes.
foreach(v TK_BINARY_DIR TK_SOURCE_DIR WORK_DIR GENERATOR)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "consumer_test.cmake: -D${v}=... is required")
  endif()
endforeach()

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}")
  endif()
  set(out "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)
run(${CMAKE_COMMAND} --install ${TK_BINARY_DIR} --prefix ${prefix})
foreach(f lib/cmake/tk/tkConfig.cmake lib/cmake/tk/tkConfigVersion.cmake lib/cmake/tk/tkFunctions.cmake
          bin/tkc bin/tk-opt include/tk/aot.h share/tk/stdlib/math.tk)
  if(NOT EXISTS ${prefix}/${f})
    message(FATAL_ERROR "the install lacks ${f}")
  endif()
endforeach()

# Installed without debug info (cmake/Install.cmake, TK_INSTALL_DEBUG): the
# whole prefix at most 60 MB (with it, 525 MB).
file(GLOB_RECURSE installed LIST_DIRECTORIES false ${prefix}/*)
set(total 0)
foreach(f IN LISTS installed)
  file(SIZE ${f} bytes)
  math(EXPR total "${total} + ${bytes}")
endforeach()
message(STATUS "the install: ${total} bytes")
if(total GREATER 62914560)
  message(FATAL_ERROR "the install is ${total} bytes, over 60 MB: is debug info installed?")
endif()

# A copy of the project, so the edit below leaves the source tree alone.
file(COPY ${TK_SOURCE_DIR}/examples/consumer/ DESTINATION ${WORK_DIR}/src)
run(${CMAKE_COMMAND} -S ${WORK_DIR}/src -B ${WORK_DIR}/build -G ${GENERATOR} -DCMAKE_BUILD_TYPE=Release
    -DCMAKE_PREFIX_PATH=${prefix})
run(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
run(${WORK_DIR}/build/consumer)
message(STATUS "${out}")
if(NOT out MATCHES "\nok\n")
  message(FATAL_ERROR "the consumer did not pass:\n${out}")
endif()

# Nothing to do on a second build; an edit to an imported file re-runs tkc
# for the file importing it only.
run(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
if(out MATCHES "tkc: launchers")
  message(FATAL_ERROR "a second build re-ran tkc with nothing changed:\n${out}")
endif()
file(APPEND ${WORK_DIR}/src/kernels/activation.tk "\n// edited: the build must re-run tkc\n")
run(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
if(NOT out MATCHES "tkc: launchers for scaled_gelu.tk" OR out MATCHES "tkc: launchers for elementwise.tk")
  message(FATAL_ERROR "editing an import of scaled_gelu.tk should re-run tkc for it alone:\n${out}")
endif()
run(${WORK_DIR}/build/consumer)
if(NOT out MATCHES "\nok\n")
  message(FATAL_ERROR "the consumer did not pass after the rebuild:\n${out}")
endif()
message(STATUS "consumer project: installed, built, ran, rebuilt on an import's edit")
# The install (and the consumer's build) is kept only when a step failed.
file(REMOVE_RECURSE ${WORK_DIR})
