# orcu as a distribution library: symbol versions, manual pages, the
# installed tools.  Included at the end of the top CMakeLists.txt, once
# every target exists.  docs/ABI.md says what each part promises.

# Symbol versions (abi/*.map): every exported orcu_* name carries a node.
# The liburcu shim (compat/urcu-shim) gets none: liburcu's own libraries
# have none, and a program built against the shim must keep running on
# the real liburcu.
foreach(pair "orcu|liborcu" "orcu-urcu|liborcu-urcu")
  string(REPLACE "|" ";" pair "${pair}")
  list(GET pair 0 lib)
  list(GET pair 1 map)
  if(TARGET ${lib})
    set(map ${PROJECT_SOURCE_DIR}/abi/${map}.map)
    target_link_options(${lib} PRIVATE "LINKER:--version-script=${map}")
    set_property(TARGET ${lib} APPEND PROPERTY LINK_DEPENDS ${map})
  endif()
endforeach()

# Manual pages, generated at build time from the headers' contract
# comments (scripts/gen-man.py), so a page cannot drift from its call:
# man3/<call>.3 for every documented call, man7/orcu.7 for the overview,
# and one page for <orcu/rcu.hpp> (man rcu_retire) from its opening comment.
find_package(Python3 COMPONENTS Interpreter)
if(Python3_FOUND)
  set(ORCU_MAN_HEADERS ${PROJECT_SOURCE_DIR}/include/orcu.h
    ${PROJECT_SOURCE_DIR}/include/orcu/debug.h ${PROJECT_SOURCE_DIR}/include/orcu/rcu.hpp)
  set(ORCU_MAN_DIR ${PROJECT_BINARY_DIR}/man)
  add_custom_command(OUTPUT ${ORCU_MAN_DIR}/stamp
    COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/scripts/gen-man.py
      --out ${ORCU_MAN_DIR} --version ${PROJECT_VERSION} ${ORCU_MAN_HEADERS}
    COMMAND ${CMAKE_COMMAND} -E touch ${ORCU_MAN_DIR}/stamp
    DEPENDS ${PROJECT_SOURCE_DIR}/scripts/gen-man.py ${ORCU_MAN_HEADERS}
    COMMENT "Manual pages from the headers")
  add_custom_target(orcu-man ALL DEPENDS ${ORCU_MAN_DIR}/stamp)
  install(DIRECTORY ${ORCU_MAN_DIR}/man3 ${ORCU_MAN_DIR}/man7
    DESTINATION ${CMAKE_INSTALL_MANDIR})
  # Every function liborcu.so exports has a page, and <orcu/rcu.hpp>'s names.
  add_test(NAME man_pages COMMAND ${Python3_EXECUTABLE}
    ${PROJECT_SOURCE_DIR}/scripts/gen-man.py --check-lib $<TARGET_FILE:orcu>
    --man-dir ${ORCU_MAN_DIR} ${ORCU_MAN_HEADERS})
  set_tests_properties(man_pages PROPERTIES LABELS quick)
else()
  message(STATUS "manual pages not built (python3 not found)")
endif()

# The validation tools, installed beside the library, with a page each
# made by help2man from their --help (so it cannot drift either).
find_program(ORCU_HELP2MAN help2man)
foreach(pair "orcu-torture|torture test of orcu's grace-period guarantee"
    "orcu-bench|orcu side by side with liburcu, ck_epoch and a rwlock")
  string(REPLACE "|" ";" pair "${pair}")
  list(GET pair 0 tool)
  list(GET pair 1 what)
  if(NOT TARGET ${tool})
    continue()
  endif()
  install(TARGETS ${tool} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  if(ORCU_HELP2MAN AND NOT CMAKE_CROSSCOMPILING)
    set(page ${PROJECT_BINARY_DIR}/man/man1/${tool}.1)
    add_custom_command(OUTPUT ${page}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${PROJECT_BINARY_DIR}/man/man1
      COMMAND ${ORCU_HELP2MAN} -N --no-discard-stderr --version-string=${PROJECT_VERSION}
        -n ${what} -o ${page} $<TARGET_FILE:${tool}>
      DEPENDS ${tool} VERBATIM)
    add_custom_target(${tool}-man ALL DEPENDS ${page})
    install(FILES ${page} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
  endif()
endforeach()
if(NOT ORCU_HELP2MAN)
  message(STATUS "orcu-torture(1), orcu-bench(1) not built (help2man not found)")
endif()
