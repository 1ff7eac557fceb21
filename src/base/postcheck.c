/*
 * postcheck.c - the double-post check of ORCU_CHECK_CALLS: the set of heads
 * posted and not yet invoked.  call.c adds a head at each post (and aborts
 * on one already there), slot.c removes it before invoking it, lifecycle.c
 * takes its lock around fork.  Calls config.c only (ORCU_CHECK_CALLS).
 */
#include "os.h"
#include "config.h"
#include "postcheck.h"

#include <search.h>

/* Double-post check: a set of pending heads.  Always on in ORCU_DEBUG
 * builds; elsewhere with ORCU_CHECK_CALLS=1 (it costs a lock per call). */

static pthread_mutex_t pending_lock = PTHREAD_MUTEX_INITIALIZER;
static void *pending_set;
/* -1 until first use; racing first users compute the same value. */
_Atomic int orcu__check_calls = -1;

static int cmp_ptr(const void *a, const void *b)
{
	return (a > b) - (a < b);
}

bool orcu__double_call_enabled(void)
{
	int on = orcu__load_relaxed(&orcu__check_calls);

	if (orcu__unlikely(on < 0)) {
#ifdef ORCU_DEBUG
		on = 1;
#else
		on = orcu__env_bool("ORCU_CHECK_CALLS", 0);
#endif
		orcu__store_relaxed(&orcu__check_calls, on);
	}
	return on;
}

void orcu__double_call_check(struct orcu_head *h, const char *call)
{
	void **found;

	pthread_mutex_lock(&pending_lock);
	found = tfind(h, &pending_set, cmp_ptr);
	if (found) {
		pthread_mutex_unlock(&pending_lock);
		/* Abort with the line: no cancel at its write. */
		pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
		fprintf(stderr, "orcu: %s: callback head %p posted twice while still pending (function %p)\n",
			call, (void *)h, (void *)(uintptr_t)h->func);
		abort();
	}
	tsearch(h, &pending_set, cmp_ptr);
	pthread_mutex_unlock(&pending_lock);
}

void orcu__double_call_forget(struct orcu_head *h)
{
	if (orcu__load_relaxed(&orcu__check_calls) <= 0)
		return;
	pthread_mutex_lock(&pending_lock);
	tdelete(h, &pending_set, cmp_ptr);
	pthread_mutex_unlock(&pending_lock);
}

/* fork (lifecycle): the double-post set's lock, taken last. */
void orcu__double_call_fork_prepare(void)
{
	pthread_mutex_lock(&pending_lock);
}

void orcu__double_call_fork_parent(void)
{
	pthread_mutex_unlock(&pending_lock);
}

void orcu__double_call_fork_child(void)
{
	pthread_mutex_unlock(&pending_lock);
}
