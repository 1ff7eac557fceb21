/*
 * test_tsan_flood.c - debugging/tsan_flood.c (100,000 orcu_call() posts at
 * a rate beside memb readers; every callback runs once, readers see whole
 * objects) built against the tree, so that `make test SANITIZE=thread`
 * runs it with the library instrumented too: ThreadSanitizer sees the
 * library's own orders there and fails the test on any report.
 * debugging.sh runs the same program, instrumented, on the ordinary
 * library, whose annotations (src/base/sanitize.h) are what it checks.
 */
#include "debugging/tsan_flood.c"
