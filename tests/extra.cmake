# orcu-torture quick matrix and stress runs.
include(${CMAKE_CURRENT_SOURCE_DIR}/torture.cmake OPTIONAL)

# test_fork forks a multi-threaded process and the child starts threads
# again (orcu's machinery restarts there): ThreadSanitizer refuses that by
# default.  Let it continue, so the fork path is still checked under tsan.
# test_fork_child_barrier_offline_offloaded's children do the same.
if(ORCU_SANITIZE MATCHES "thread")
  foreach(t test_fork test_fork_child_barrier_offline_offloaded)
    if(TARGET ${t})
      set_property(TEST ${t} APPEND PROPERTY ENVIRONMENT "TSAN_OPTIONS=die_after_fork=0")
    endif()
  endforeach()
endif()

# AddressSanitizer (gcc 12's runtime) does not lock its allocator around
# fork(): a child forked while a parent thread is inside free() inherits
# the quarantine's batch lock held, and every thread the child starts
# hangs in the runtime (AsanThread::Init -> free -> Quarantine::Put), not
# in orcu.  Without the quarantine that lock is never taken.
if(TARGET test_fork_child_barrier_offline_offloaded AND ORCU_SANITIZE MATCHES "address")
  set_property(TEST test_fork_child_barrier_offline_offloaded APPEND PROPERTY
    ENVIRONMENT "ASAN_OPTIONS=quarantine_size_mb=0")
endif()

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
