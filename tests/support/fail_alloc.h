/*
 * fail_alloc.h - allocation failure on demand, for the tests that check
 * that a failed allocation degrades (DESIGN 6).  tests/support/fail_alloc.c
 * defines malloc, calloc, realloc, aligned_alloc, memalign and
 * posix_memalign over glibc's __libc_* entry points; a test that links it
 * has every allocation in the process go through them.  Only allocations
 * made by the thread that armed it, while armed, are counted and may fail
 * (ENOMEM), so the count is the same from one run to the next; the
 * library threads started meanwhile allocate normally.
 */
#ifndef ORCU_TEST_FAIL_ALLOC_H
#define ORCU_TEST_FAIL_ALLOC_H

#include <stdbool.h>

enum fail_alloc_mode {
	FAIL_NONE,      /* count only */
	FAIL_NTH,       /* the nth allocation fails, the others work */
	FAIL_FROM,      /* the nth and every later one fail */
};

/* False where the interposition is compiled out: under AddressSanitizer
 * or ThreadSanitizer, whose runtimes own malloc (their allocator and
 * glibc's must not meet in one free()). */
bool fail_alloc_supported(void);

/* On this thread: count allocations from 1, failing as mode says. */
void fail_alloc_arm(enum fail_alloc_mode mode, int n);

/* Stop counting; returns how many allocations this thread made while
 * armed, and *failed (if not NULL) how many of them failed. */
int fail_alloc_disarm(int *failed);

/* A test's sweep: child() runs in a forked child, arms with *mode and *nth
 * (set here before each fork) and, with FAIL_NONE, exits with how many
 * allocations it counted.  One counting run, then a child per n from 1 to
 * that count, failing the nth allocation, then the nth and every later
 * one; each must exit 0 within timeout_s.  Fails the test if the count is
 * below min or a case failed.  label names the counted call. */
void fail_alloc_sweep(int (*child)(void), enum fail_alloc_mode *mode, int *nth,
		      const char *label, int min, double timeout_s);

#endif
