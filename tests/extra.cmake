# orcu-torture quick matrix and stress runs.
include(${CMAKE_CURRENT_SOURCE_DIR}/torture.cmake OPTIONAL)

# test_fork forks a multi-threaded process and the child starts threads
# again (orcu's machinery restarts there): ThreadSanitizer refuses that by
# default.  Let it continue, so the fork path is still checked under tsan.
if(TARGET test_fork AND ORCU_SANITIZE MATCHES "thread")
  set_property(TEST test_fork APPEND PROPERTY ENVIRONMENT "TSAN_OPTIONS=die_after_fork=0")
endif()
