/*
 * compat.c - small queries and helpers for the layers above the engine:
 * orcu_thread_is_online() and the out-of-line halves of the liburcu
 * compatibility header (registration that must not return an error, and
 * defer_rcu).  Reads the calling thread's reader record; calls only public
 * entry points (entry.c, call.c) and os.c's orcu__die.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "os.h"

#include <errno.h>
#include <string.h>

/* Declared where they are used, in include/orcu/urcu-compat.h. */
ORCU_API void orcu__compat_register(int qsbr, const char *call);
ORCU_API void orcu__compat_defer(void (*fct)(void *p), void *p);

bool orcu_thread_is_online(void)
{
	struct orcu__reader *r = &orcu__reader;

	/* The owner is the only writer of kind and of a qsbr qs_seq's
	 * zero/non-zero state, so relaxed suffices for its own question. */
	if (r->kind == ORCU__KIND_QSBR)
		return orcu__load_relaxed(&r->qs_seq) != 0;
	return r->kind == ORCU__KIND_MEMB;
}

void orcu__compat_register(int qsbr, const char *call)
{
	int ret = qsbr ? orcu_register_thread_qsbr() : orcu_register_thread();

	/* liburcu's registration returns void: a program written for it has
	 * no way to handle a failure, so it stops here, loudly. */
	if (ret < 0)
		orcu__die("%s: could not register the thread: %s", call, strerror(-ret));
}

struct deferred {
	struct orcu_head head;
	void (*fct)(void *p);
	void *p;
};

static void run_deferred(struct orcu_head *h)
{
	struct deferred *d = (struct deferred *)h;

	d->fct(d->p);
	free(d);
}

void orcu__compat_defer(void (*fct)(void *p), void *p)
{
	struct deferred *d = malloc(sizeof(*d));

	if (!d) {
		/* No memory for the record: wait for the grace period here,
		 * as liburcu's defer_rcu does when its queue is full. */
		orcu_synchronize();
		fct(p);
		return;
	}
	d->fct = fct;
	d->p = p;
	orcu_call(&d->head, run_deferred);
}
