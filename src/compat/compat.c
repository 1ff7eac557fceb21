/*
 * compat.c - small queries and helpers for the layers above the engine:
 * orcu_thread_is_online() and the out-of-line halves of the liburcu
 * compatibility header and of the shim's libraries (registration that
 * must not return an error, defer_rcu, and synchronize_rcu, which liburcu
 * allows in a callback).  Reads the calling thread's reader record; calls
 * public entry points (entry.c, call.c), os.c's orcu__die and orcu__misuse,
 * and for a synchronize from a callback the GP engine (gp.c, registry.c).
 */
#include "os.h"
#include "gp.h"
#include "registry.h"

#include <errno.h>
#include <string.h>

/* Declared where they are used, in include/orcu/urcu-compat.h. */
ORCU_API void orcu__compat_register(int qsbr, const char *call);
ORCU_API void orcu__compat_defer(void (*fct)(void *p), void *p);
ORCU_API void orcu__compat_synchronize(void);

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

/*
 * synchronize_rcu() under liburcu's names.  liburcu allows it in a
 * call_rcu callback (its worker is a registered thread outside any
 * section), so a program legal there must run here.  orcu_synchronize()
 * keeps orcu's rule (orcu.h: no wait from a callback) for orcu's own name.
 * From a callback this is orcu_synchronize() without the serving a waiter
 * does afterwards (serve.c rule b: it would invoke callbacks inside this
 * one): the GP is driven here or by its owner (gp.c point 3), neither of
 * which waits for the callback's thread, which is in no section (checked)
 * and, on a qsbr thread, offline while it waits.
 */
void orcu__compat_synchronize(void)
{
	struct orcu__reader *r = &orcu__reader;
	bool was_online;

	if (!r->in_callback) {
		orcu_synchronize();
		return;
	}
	if (orcu__load_relaxed(&r->ctr) & ORCU__NEST_MASK)
		orcu__misuse("synchronize_rcu", "called inside a read-side critical section (would deadlock)");
	was_online = orcu__qsbr_offline_for_wait();
	orcu__gp_drive(orcu__gp_snap(), false);
	if (was_online)
		orcu__qsbr_online();
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
		orcu__compat_synchronize();
		fct(p);
		return;
	}
	d->fct = fct;
	d->p = p;
	orcu_call(&d->head, run_deferred);
}
