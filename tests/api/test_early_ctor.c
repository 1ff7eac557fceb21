/*
 * test_early_ctor.c - callbacks posted before main are never lost (DESIGN
 * §5.1): constructors post orcu_call and orcu_call_lazy before the library
 * was ever configured or started - one with the highest constructor
 * priority, so it runs before most others.  main() then checks, after an
 * orcu_barrier(), that every one of them ran exactly once, and that none
 * ran on the constructor's own thread while it was posting (every slot is
 * offloaded by default: library threads invoke, after a grace period).
 */
#include <orcu.h>

#include "common_pipe.h"

#define EARLY 100

static struct orcu_head early[2][EARLY];
static atomic_int ran[2][EARLY];
static atomic_int in_ctor;
static pthread_t ctor_thread;
static atomic_int ran_in_ctor;

static void early_cb(struct orcu_head *h)
{
	int set = h >= early[1] && h < early[1] + EARLY;
	int idx = (int)(h - early[set]);

	if (atomic_load(&in_ctor) && pthread_equal(pthread_self(), ctor_thread))
		atomic_fetch_add(&ran_in_ctor, 1);
	atomic_fetch_add(&ran[set][idx], 1);
}

__attribute__((constructor(101))) static void very_early(void)
{
	ctor_thread = pthread_self();
	atomic_store(&in_ctor, 1);
	for (int i = 0; i < EARLY; i++)
		orcu_call(&early[0][i], early_cb);
	atomic_store(&in_ctor, 0);
}

__attribute__((constructor)) static void early_lazy(void)
{
	for (int i = 0; i < EARLY; i++) {
		if (i % 2)
			orcu_call_lazy(&early[1][i], early_cb);
		else
			orcu_call(&early[1][i], early_cb);
	}
}

int main(void)
{
	test_watchdog("test_early_ctor", 30);
	orcu_barrier();
	for (int s = 0; s < 2; s++)
		for (int i = 0; i < EARLY; i++)
			CHECK_EQ(atomic_load(&ran[s][i]), 1);
	CHECK_EQ(atomic_load(&ran_in_ctor), 0);

	/* Nothing left behind anywhere, and the engine keeps working. */
	struct orcu_stats st;
	orcu_get_stats(&st);
	CHECK_EQ(st.callbacks_pending, 0);
	CHECK(st.callbacks_invoked >= 2 * EARLY);
	orcu_synchronize();
	TEST_PASS("test_early_ctor");
}
