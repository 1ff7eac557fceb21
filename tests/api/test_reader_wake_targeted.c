/*
 * test_reader_wake_targeted.c - a memb reader leaving a section wakes a
 * waiting grace period only if the GP waits for that section.  One thread
 * holds a section begun before the GP; another reads flat out, entering
 * and leaving sections of the GP's own phase, which the GP does not wait
 * for.  Each of those unlocks used to take the GP's wake flag and wake it,
 * and the GP armed the flag again with another membarrier(): one arming
 * per unlock (thousands while the section was held).  Now the GP arms
 * once or twice per wait, the busy reader's unlocks leave it asleep, and
 * the held section's end wakes it: no sleep slice runs out.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <orcu.h>

#include "common_pipe.h"
#include "os.h"

static atomic_int stop, in_section, gp_done;
static atomic_long busy_sections;

static void *busy_reader(void *arg)
{
	(void)arg;
	CHECK_EQ(orcu_register_thread(), 0);
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		orcu_read_lock();
		orcu_read_unlock();
		atomic_fetch_add_explicit(&busy_sections, 1, memory_order_relaxed);
	}
	orcu_unregister_thread();
	return NULL;
}

static void *holder(void *arg)
{
	(void)arg;
	CHECK_EQ(orcu_register_thread(), 0);
	orcu_read_lock();
	atomic_store(&in_section, 1);
	CHECK_WAIT_UNTIL(atomic_load(&stop), 60);
	orcu_read_unlock();
	orcu_unregister_thread();
	return NULL;
}

static void *syncer(void *arg)
{
	(void)arg;
	orcu_synchronize();
	atomic_store(&gp_done, 1);
	return NULL;
}

int main(void)
{
	pthread_t b, h, g;
	uint64_t arms0, arms1, slices0;
	long busy0;

	test_watchdog("test_reader_wake_targeted", 120);
	CHECK_EQ(pthread_create(&h, NULL, holder, NULL), 0);
	CHECK_WAIT_UNTIL(atomic_load(&in_section), 30);
	CHECK_EQ(pthread_create(&b, NULL, busy_reader, NULL), 0);
	CHECK_EQ(pthread_create(&g, NULL, syncer, NULL), 0);
	/* The GP waits for the holder, armed. */
	CHECK_WAIT_UNTIL(orcu__load_relaxed(&orcu__gp_wait) == 1, 30);
	arms0 = orcu__load_relaxed(&orcu__cnt.gp_wait_arms);
	slices0 = orcu__load_relaxed(&orcu__cnt.gp_wait_missed);
	busy0 = atomic_load(&busy_sections);
	CHECK_WAIT_UNTIL(atomic_load(&busy_sections) > busy0 + 100000, 30);
	arms1 = orcu__load_relaxed(&orcu__cnt.gp_wait_arms);
	CHECK_EQ(atomic_load(&gp_done), 0);
	atomic_store(&stop, 1);                 /* the holder leaves its section */
	CHECK_EQ(pthread_join(g, NULL), 0);
	CHECK_EQ(pthread_join(h, NULL), 0);
	CHECK_EQ(pthread_join(b, NULL), 0);
	printf("%ld sections of the GP's own phase while it waited: %llu armings; "
	       "%llu lost wake-ups\n", atomic_load(&busy_sections) - busy0,
	       (unsigned long long)(arms1 - arms0),
	       (unsigned long long)(orcu__load_relaxed(&orcu__cnt.gp_wait_missed) - slices0));
	CHECK_LE(arms1 - arms0, 2);
	CHECK_EQ(orcu__load_relaxed(&orcu__cnt.gp_wait_missed) - slices0, 0);
	TEST_PASS("test_reader_wake_targeted");
}
