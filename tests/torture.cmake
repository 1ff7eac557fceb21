# torture.cmake - CTest entries that run tools/orcu-torture (included from
# tests/CMakeLists.txt).  Label quick: a covering matrix of short runs, each
# (reader flavor, ORCU_NOCBS) pair once and every flavor with hotplug on and
# off, one 4096-slot topology, and the busted flavor, which must be caught.
# Label stress: longer runs with everything on.  Seeds are random and
# printed first, so a failing run can be replayed with --seed.
math(EXPR _torture_timeout "${ORCU_TEST_TIMEOUT} * ${ORCU_TEST_TIMEOUT_MULT}")
set(_torture_cpus "possible=16,online=0-3")   # slot 15 never comes online
set(_torture_mixed "0,2,5-7")                  # offloaded: some online, some hotplugged

function(orcu_torture name label)
  add_test(NAME torture_${name} COMMAND orcu-torture ${ARGN})
  set_tests_properties(torture_${name} PROPERTIES LABELS ${label}
    TIMEOUT ${_torture_timeout}
    ENVIRONMENT "ORCU_TEST_TIMEOUT_MULT=${ORCU_TEST_TIMEOUT_MULT}")
endfunction()

set(_q --duration 6 --fake-writers 2)
set(_memb --readers 3 --qsbr-readers 0)
set(_qsbr --readers 0 --qsbr-readers 3)
set(_mixd --readers 2 --qsbr-readers 2)

orcu_torture(memb_all quick ${_q} ${_memb} --cpus ${_torture_cpus} --nocbs all
  --barrier-torture)
orcu_torture(memb_none_hotplug quick ${_q} ${_memb} --cpus ${_torture_cpus}
  --nocbs none --hotplug --toggle-offload)
orcu_torture(memb_mixed_hotplug_delays quick ${_q} ${_memb} --cpus ${_torture_cpus}
  --nocbs ${_torture_mixed} --hotplug --barrier-torture --delays 200)
orcu_torture(qsbr_none quick ${_q} ${_qsbr} --cpus ${_torture_cpus} --nocbs none
  --barrier-torture)
orcu_torture(qsbr_mixed_hotplug quick ${_q} ${_qsbr} --cpus ${_torture_cpus}
  --nocbs ${_torture_mixed} --hotplug --toggle-offload)
orcu_torture(qsbr_all_flood quick ${_q} ${_qsbr} --cpus ${_torture_cpus} --nocbs all
  --flood)
orcu_torture(mixed_none_flood quick ${_q} ${_mixd} --cpus ${_torture_cpus}
  --nocbs none --flood --barrier-torture)
# qsbr readers, inline slots, a flood, the writer's lazy posts and forks
# at random moments, all at once.  Normal builds only: ThreadSanitizer does
# not support starting threads in a child of a multi-threaded process, and
# under AddressSanitizer a fork child hung once at its first thread start
# (gcc 12's runtime does not lock its allocator around fork(); see
# fork/CMakeLists.txt) in two CI runs; the fork regression tests still run
# there.
if(NOT ORCU_SANITIZE)
  orcu_torture(qsbr_none_flood_lazy_fork quick ${_q} --readers 1 --qsbr-readers 3
    --cpus ${_torture_cpus} --nocbs none --flood --fork --barrier-torture)
endif()
orcu_torture(mixed_mixed_hotplug quick ${_q} ${_mixd} --cpus ${_torture_cpus}
  --nocbs ${_torture_mixed} --hotplug --toggle-offload --barrier-torture)
orcu_torture(mixed_all_4096_hotplug quick ${_q} ${_mixd}
  --cpus possible=4096,online=0-7 --nocbs all --hotplug --toggle-offload
  --barrier-torture)

# The oracle must catch grace periods that do not wait: exit status 1, a
# reader-detected error and FAILURE as the last line (checked by the script).
add_test(NAME torture_busted COMMAND bash ${PROJECT_SOURCE_DIR}/tools/torture.sh
  --expect-failure $<TARGET_FILE:orcu-torture> --busted --duration 3
  ${_mixd} --cpus ${_torture_cpus})
set_tests_properties(torture_busted PROPERTIES LABELS quick
  TIMEOUT ${_torture_timeout}
  ENVIRONMENT "ORCU_TEST_TIMEOUT_MULT=${ORCU_TEST_TIMEOUT_MULT}")

# Stress: minutes, everything at once.
orcu_torture(stress_everything stress --duration 60 --fake-writers 2 ${_mixd}
  --cpus ${_torture_cpus} --nocbs ${_torture_mixed} --hotplug --toggle-offload
  --barrier-torture --flood --delays 100)
orcu_torture(stress_4096_flat stress --duration 60 --fake-writers 2 ${_mixd}
  --cpus possible=4096,online=0-15 --stride 1 --nocbs all --hotplug
  --toggle-offload --barrier-torture)
