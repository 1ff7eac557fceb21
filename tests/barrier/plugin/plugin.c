/*
 * plugin.c - the shared object of test_module_unload (DESIGN 5.6): it posts
 * callbacks whose function and bookkeeping live in this object's own code
 * and data.  After dlclose() that code is gone, so a callback invoked late
 * jumps into unmapped memory and the test crashes.  Built twice:
 * resolving orcu_* from the executable, and linked to liborcu.so for
 * test_unload_in_exit.
 */
#include <orcu.h>

#include <stdatomic.h>
#include <stdlib.h>

/* Found by dlsym() in test_module_unload.c. */
long plugin_post(long n, int lazy_every, _Atomic long *counter);
long plugin_invoked(void);
void plugin_fini(void);

struct plugin_obj {
	struct orcu_head head;
	_Atomic long *counter;       /* owned by the test, outlives us */
	int id;
};

static _Atomic long plugin_local_invoked;   /* in this object's data */

static void plugin_free_cb(struct orcu_head *h)
{
	struct plugin_obj *o = (struct plugin_obj *)h;

	atomic_fetch_add_explicit(&plugin_local_invoked, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(o->counter, 1, memory_order_relaxed);
	free(o);
}

/* Post n callbacks (every lazy_every-th one lazy, 0: none); returns posted. */
__attribute__((visibility("default")))
long plugin_post(long n, int lazy_every, _Atomic long *counter)
{
	long posted = 0;

	for (long i = 0; i < n; i++) {
		struct plugin_obj *o = malloc(sizeof(*o));

		if (!o)
			break;
		o->counter = counter;
		o->id = (int)i;
		if (lazy_every > 0 && i % lazy_every == 0)
			orcu_call_lazy(&o->head, plugin_free_cb);
		else
			orcu_call(&o->head, plugin_free_cb);
		posted++;
	}
	return posted;
}

__attribute__((visibility("default")))
long plugin_invoked(void)
{
	return atomic_load_explicit(&plugin_local_invoked, memory_order_relaxed);
}

/* The module's exit path: what a well-behaved plugin does before unload. */
__attribute__((visibility("default")))
void plugin_fini(void)
{
	orcu_barrier();
}
