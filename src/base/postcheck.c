/*
 * postcheck.c - double posts: a callback head posted again while still
 * pending, which would rewrite its link and cut the queue or the list it
 * is in.  Two answers, both here:
 *  - the full check of ORCU_CHECK_CALLS (on in ORCU_DEBUG builds): the set
 *    of heads posted and not yet invoked.  call.c adds a head at each post
 *    (and aborts on one already there), slot.c removes it before invoking
 *    it, lifecycle.c takes its lock around fork; free.c adds the objects
 *    of orcu_free() and orcu_retire() to the same set until they are
 *    deleted, and checks orcu_free_rcu()'s object and head in it (a
 *    double post there was a double free, later, on an orcu thread);
 *  - the signs the queues and lists show at no cost, reported in one line
 *    naming the call and the CPU slot: mpsc.c's push (the head is the
 *    newest queued) and take (the last node links somewhere) and
 *    cblist.c's enqueue and extract (a link where none should be) die
 *    (orcu__double_post_die()); call.c (a repost of its queue's newest
 *    head) and postq.c (of the last head a take listed, not yet started)
 *    find it before any link is written, leave the second post out and go
 *    on (orcu__double_post_report(), "the second post is ignored").
 *    A head re-posted after later callbacks is caught only by the set.
 * Calls config.c (ORCU_CHECK_CALLS) and os.c (the line).
 */
#include "os.h"
#include "config.h"
#include "postcheck.h"

#include <search.h>

/* The call that posted to where, a queue or list inside a slot record
 * (or a test's own), and the place it names. */
static const char *post_place(const void *where, char *place, size_t size_place)
{
	uintptr_t w = (uintptr_t)where, base = (uintptr_t)orcu__g.slots;
	size_t size = orcu__g.slot_bytes;
	const char *call = "orcu_call";

	snprintf(place, size_place, "a callback queue of no CPU slot");
	/* Slot 0 is not in the array (os.h): measured from its own record. */
	if (orcu__g.slot0 && w - (uintptr_t)orcu__g.slot0 < size)
		base = (uintptr_t)orcu__g.slot0;
	if (orcu__g.slots && w >= base && w < base + size * (size_t)orcu__g.nr_possible) {
		snprintf(place, size_place, "CPU slot %ld", (long)((w - base) / size));
		if ((w - base) % size == orcu__g.slot_lazyq_at)
			call = "orcu_call_lazy";
	}
	return call;
}

/* Found before it did harm (call.c, postq.c): the second post is left out. */
void orcu__double_post_report(const void *where, const struct orcu_head *h)
{
	char place[64];
	const char *call = post_place(where, place, sizeof(place));

	orcu__warn("%s: callback head %p posted twice while still pending "
		   "(function %p; detected on %s); the second post is ignored",
		   call, (const void *)h, (void *)(uintptr_t)h->func, place);
}

void orcu__double_post_die(const void *where, const struct orcu_head *h, bool at_call)
{
	char place[64];
	const char *call = post_place(where, place, sizeof(place));

	if (at_call)
		orcu__die("%s: callback head %p posted twice while still pending "
			  "(function %p; its first post is still queued on %s)",
			  call, (const void *)h, (void *)(uintptr_t)h->func, place);
	orcu__die("%s: callback head %p posted twice while still pending "
		  "(function %p; detected on %s); set ORCU_CHECK_CALLS=1 "
		  "to catch the second call itself",
		  call, (const void *)h, (void *)(uintptr_t)h->func, place);
}

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
		orcu__die("%s: callback head %p posted twice while still pending (function %p)",
			  call, (void *)h, (void *)(uintptr_t)h->func);
	}
	tsearch(h, &pending_set, cmp_ptr);
	pthread_mutex_unlock(&pending_lock);
}

void orcu__double_free_check(const void *p, const char *call, bool add)
{
	void **found;

	pthread_mutex_lock(&pending_lock);
	found = tfind(p, &pending_set, cmp_ptr);
	if (found) {
		pthread_mutex_unlock(&pending_lock);
		orcu__die("%s: %p handed over again while still pending (an earlier "
			  "orcu_free, orcu_retire, orcu_free_rcu or orcu_call of it has "
			  "not run yet)",
			  call, p);
	}
	if (add)
		tsearch(p, &pending_set, cmp_ptr);
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
