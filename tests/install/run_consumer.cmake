# Installs the already-built axe into a scratch prefix, then configures, builds and runs a tiny
# consumer project that uses find_package(axe) and links axe::axe.
file(REMOVE_RECURSE ${WORK_DIR})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${AXE_BINARY_DIR} --prefix ${WORK_DIR}/prefix
  RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "install failed: ${rc}")
endif()
# The consumer builds with axe's compiler and sanitizer flags (AXE_SANITIZE): a sanitized static
# axe::axe only links into a program built with the same sanitizers.
set(flags "")
if(AXE_CXX_COMPILER)
  list(APPEND flags -DCMAKE_CXX_COMPILER=${AXE_CXX_COMPILER})
endif()
if(AXE_SANITIZE_FLAGS)
  string(REPLACE ";" " " sanitize "${AXE_SANITIZE_FLAGS}")
  list(APPEND flags "-DCMAKE_CXX_FLAGS=$ENV{CXXFLAGS} ${sanitize}" "-DCMAKE_EXE_LINKER_FLAGS=${sanitize}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -S ${AXE_SOURCE_DIR}/tests/install/consumer
  -B ${WORK_DIR}/build -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix ${flags} RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "configuring the consumer failed: ${rc}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR}/build RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "building the consumer failed: ${rc}")
endif()
execute_process(COMMAND ${WORK_DIR}/build/consumer RESULT_VARIABLE rc OUTPUT_VARIABLE out)
message(STATUS "consumer printed: ${out}")
if(rc)
  message(FATAL_ERROR "the consumer failed: ${rc}")
endif()
