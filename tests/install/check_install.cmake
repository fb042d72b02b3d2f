# cmake --install graft into a scratch prefix, then configure, build and run
# a consumer that uses find_package(graft), and run the installed
# graft-inspect from outside the build tree (it must find libgraft by its
# relative run path, with no LD_LIBRARY_PATH).
set(prefix ${WORK_DIR}/prefix)
file(REMOVE_RECURSE ${WORK_DIR})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix} RESULT_VARIABLE rc OUTPUT_QUIET)
if(rc)
  message(FATAL_ERROR "cmake --install failed: ${rc}")
endif()
# CONSUMER_CXX and CONSUMER_FLAGS, when given, build the consumer with another
# compiler than graft's (clang 16, with and without -fopenmp).
set(compiler)
if(CONSUMER_CXX)
  set(compiler -DCMAKE_CXX_COMPILER=${CONSUMER_CXX} "-DCMAKE_CXX_FLAGS=${CONSUMER_FLAGS}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR}/build -DCMAKE_PREFIX_PATH=${prefix}
                        -DCMAKE_BUILD_TYPE=Release ${compiler} RESULT_VARIABLE rc OUTPUT_QUIET)
if(rc)
  message(FATAL_ERROR "configuring the consumer with find_package(graft) failed: ${rc}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR}/build RESULT_VARIABLE rc OUTPUT_VARIABLE build_out
                ERROR_VARIABLE build_out)
if(rc)
  message(FATAL_ERROR "building the consumer failed: ${rc}\n${build_out}")
endif()
execute_process(COMMAND ${WORK_DIR}/build/consumer RESULT_VARIABLE rc OUTPUT_VARIABLE out)
if(rc OR NOT out MATCHES "nodes=1 failures=0")
  message(FATAL_ERROR "the consumer ran wrong: ${rc} ${out}")
endif()
message(STATUS "consumer: ${out}")
if(EXISTS ${prefix}/bin/graft-inspect)
  execute_process(COMMAND env -u LD_LIBRARY_PATH ${prefix}/bin/graft-inspect --help WORKING_DIRECTORY ${WORK_DIR}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(rc OR NOT out MATCHES "usage: graft-inspect")
    message(FATAL_ERROR "the installed graft-inspect does not start: ${rc} ${out} ${err}")
  endif()
  message(STATUS "installed graft-inspect starts")
elseif(EXPECT_INSPECT)
  message(FATAL_ERROR "graft-inspect was not installed under ${prefix}/bin")
endif()
