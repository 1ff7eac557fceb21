/*
 * fail_alloc.c - the interposed allocator behind fail_alloc.h.  Linked
 * only into the tests that ask for it (tests/degraded/CMakeLists.txt),
 * never into the shared support library: every allocation of such a test
 * goes through here.  glibc exports its own allocator as __libc_malloc and friends, so
 * nothing here calls dlsym() (which allocates) and free() stays glibc's.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "fail_alloc.h"
#include "check.h"

#include <errno.h>
#include <malloc.h>
#include <stddef.h>
#include <stdint.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)

bool fail_alloc_supported(void)
{
	return false;
}

void fail_alloc_arm(enum fail_alloc_mode mode, int n)
{
	(void)mode;
	(void)n;
}

int fail_alloc_disarm(int *failed)
{
	if (failed)
		*failed = 0;
	return 0;
}

#else

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t size);
extern void *__libc_memalign(size_t align, size_t size);

/* The arming thread's state: no other thread reads it. */
static __thread struct {
	bool armed;
	enum fail_alloc_mode mode;
	int n, count, failed;
} fa;

bool fail_alloc_supported(void)
{
	return true;
}

void fail_alloc_arm(enum fail_alloc_mode mode, int n)
{
	fa.mode = mode;
	fa.n = n;
	fa.count = 0;
	fa.failed = 0;
	fa.armed = true;
}

int fail_alloc_disarm(int *failed)
{
	fa.armed = false;
	if (failed)
		*failed = fa.failed;
	return fa.count;
}

/* True if this allocation is to fail (then errno is ENOMEM). */
static bool fail_this(void)
{
	bool fail;

	if (!fa.armed)
		return false;
	fa.count++;
	fail = (fa.mode == FAIL_NTH && fa.count == fa.n) ||
	       (fa.mode == FAIL_FROM && fa.count >= fa.n);
	if (fail) {
		fa.failed++;
		errno = ENOMEM;
	}
	return fail;
}

void *malloc(size_t size)
{
	return fail_this() ? NULL : __libc_malloc(size);
}

void *calloc(size_t n, size_t size)
{
	return fail_this() ? NULL : __libc_calloc(n, size);
}

void *realloc(void *p, size_t size)
{
	return fail_this() ? NULL : __libc_realloc(p, size);
}

void *aligned_alloc(size_t align, size_t size)
{
	return fail_this() ? NULL : __libc_memalign(align, size);
}

void *memalign(size_t align, size_t size)
{
	return fail_this() ? NULL : __libc_memalign(align, size);
}

int posix_memalign(void **out, size_t align, size_t size)
{
	void *p;

	if (align < sizeof(void *) || (align & (align - 1)))
		return EINVAL;
	if (fail_this())
		return ENOMEM;
	p = __libc_memalign(align, size);
	if (!p)
		return ENOMEM;
	*out = p;
	return 0;
}

#endif

void fail_alloc_sweep(int (*child)(void), enum fail_alloc_mode *mode, int *nth,
		      const char *label, int min, double timeout_s)
{
	int total, st, failed = 0;

	*mode = FAIL_NONE;
	st = check_wait_child(check_fork_run(child), "counting run", 60);
	CHECK(WIFEXITED(st));
	total = WEXITSTATUS(st);
	printf("%s allocates %d times on its thread\n", label, total);
	CHECK(total >= min);
	for (int n = 1; n <= total; n++)
		for (enum fail_alloc_mode m = FAIL_NTH; m <= FAIL_FROM; m++) {
			char what[64];

			*mode = m;
			*nth = n;
			snprintf(what, sizeof(what), "%s %d failing",
				 m == FAIL_NTH ? "allocation" : "allocations from", n);
			failed += !check_child_passed(check_fork_run(child), what, timeout_s);
		}
	CHECK_EQ(failed, 0);
}
