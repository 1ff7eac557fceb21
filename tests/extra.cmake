# orcu-torture quick matrix and stress runs.
include(${CMAKE_CURRENT_SOURCE_DIR}/torture.cmake)

# The public header must compile cleanly under clang too (the library and
# the tests are built with gcc): a program outside this tree may use either.
find_program(ORCU_CLANG clang)
if(ORCU_CLANG)
  add_test(NAME header_clang COMMAND ${ORCU_CLANG} -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror
    -fsyntax-only -I${PROJECT_SOURCE_DIR}/include ${PROJECT_SOURCE_DIR}/examples/demo.c)
  add_test(NAME header_clang_qsbr COMMAND ${ORCU_CLANG} -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror
    -DORCU_QSBR -fsyntax-only -I${PROJECT_SOURCE_DIR}/include ${PROJECT_SOURCE_DIR}/examples/demo.c)
  set_tests_properties(header_clang header_clang_qsbr PROPERTIES LABELS quick)
endif()

# The liburcu layers: urcu-compat.h programs and liborcu-urcu (rculfhash).
if(ORCU_HAVE_URCU)
  add_subdirectory(${CMAKE_CURRENT_SOURCE_DIR}/urcu ${CMAKE_CURRENT_BINARY_DIR}/urcu)
endif()

# make install: a temporary prefix, an outside project built against it
# with pkg-config and with find_package(orcu CONFIG), both run.
find_program(ORCU_BASH bash)
find_program(ORCU_PKG_CONFIG pkg-config)
if(ORCU_BASH AND ORCU_PKG_CONFIG)
  add_test(NAME install_consumer COMMAND ${ORCU_BASH}
    ${CMAKE_CURRENT_SOURCE_DIR}/install_consumer.sh ${PROJECT_BINARY_DIR}
    ${PROJECT_SOURCE_DIR} ${ORCU_HAVE_URCU} ${CMAKE_C_COMPILER} "${ORCU_SANITIZE}")
  math(EXPR _install_timeout "${ORCU_TEST_TIMEOUT} * ${ORCU_TEST_TIMEOUT_MULT}")
  set_tests_properties(install_consumer PROPERTIES LABELS quick
    TIMEOUT ${_install_timeout})
endif()

# orcu.h as C++17 (and with the liburcu compatibility header), -Werror.
find_program(ORCU_CXX NAMES c++ g++ clang++)
if(ORCU_CXX)
  foreach(v "" qsbr compat compat_standalone)
    set(_defs)
    if(v STREQUAL qsbr)
      set(_defs -DORCU_QSBR)
    elseif(v STREQUAL compat)
      set(_defs -DORCU_TEST_COMPAT)
    elseif(v STREQUAL compat_standalone)
      set(_defs -DORCU_TEST_COMPAT -DORCU_URCU_NO_HEADERS)
    endif()
    set(_name header_cxx)
    if(v)
      set(_name header_cxx_${v})
    endif()
    add_test(NAME ${_name} COMMAND ${ORCU_CXX} -std=c++17 -D_GNU_SOURCE -Wall -Wextra
      -Werror ${_defs} -fsyntax-only -I${PROJECT_SOURCE_DIR}/include
      ${CMAKE_CURRENT_SOURCE_DIR}/header_cxx.cc)
    set_tests_properties(${_name} PROPERTIES LABELS quick)
  endforeach()
endif()

# orcu.h on ILP32 (i686): clang can target it without 32-bit libc headers.
find_program(ORCU_CLANG clang)
if(ORCU_CLANG)
  add_test(NAME header_ilp32 COMMAND ${ORCU_CLANG} --target=i686-linux-gnu -ffreestanding
    -std=c11 -Wall -Wextra -Werror -fsyntax-only -I${PROJECT_SOURCE_DIR}/include
    ${CMAKE_CURRENT_SOURCE_DIR}/header_ilp32.c)
  set_tests_properties(header_ilp32 PROPERTIES LABELS quick)
endif()
