/*
 * plugin_static.c - the plugin of test_unload_static_plugin: it links
 * liborcu.a, so orcu's code (and its unload step) is part of this
 * object.  It posts callbacks into its own code, and its destructor does
 * the cleanup a plugin does before it is unloaded, one way per mode:
 * orcu_barrier(), orcu_free(), or (plugin_static_cxx.cc, a C++ global's
 * destructor) rcu_retire() then rcu_barrier().
 */
#include <orcu.h>

#include <stdatomic.h>
#include <stdlib.h>

enum { MODE_BARRIER, MODE_FREE, MODE_RETIRE };

/* Found by dlsym() in test_unload_static_plugin.c. */
long plugin_post(long n, int mode, _Atomic long *counter);

/* For plugin_static_cxx.cc. */
int plugin_mode(void);
_Atomic long *plugin_counter(void);

static int mode;
static _Atomic long *counter;   /* owned by the host, outlives us */

static void counted_cb(struct orcu_head *h)
{
	atomic_fetch_add_explicit(counter, 1, memory_order_relaxed);
	free(h);
}

__attribute__((visibility("default")))
long plugin_post(long n, int m, _Atomic long *c)
{
	mode = m;
	counter = c;
	for (long i = 0; i < n; i++)
		orcu_call(malloc(sizeof(struct orcu_head)), counted_cb);
	return n;
}

int plugin_mode(void)
{
	return mode;
}

_Atomic long *plugin_counter(void)
{
	return counter;
}

/* The plugin's own destructor: its cleanup before the unload. */
__attribute__((destructor)) static void plugin_exit(void)
{
	if (mode == MODE_BARRIER)
		orcu_barrier();
	else if (mode == MODE_FREE)
		for (int i = 0; i < 1000; i++)
			orcu_free(malloc(64));
}
