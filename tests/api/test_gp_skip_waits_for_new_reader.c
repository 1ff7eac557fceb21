/*
 * test_gp_skip_waits_for_new_reader - registry.c point 5: a GP that read
 * "no reader registered" and has not yet swapped gp_seq must not end
 * without waiting for a reader that registers and enters a section before
 * the swap, once another updater has taken its snapshot after that.
 *
 * Found by an outside program: memb readers registering around every
 * section, two threads calling orcu_start_poll() once they saw a reader
 * inside a section: orcu_poll_state() said the GP was over while that
 * section still ran (2 runs of 3, 15 s each).  The count was read without
 * registry_lock and the swap made later.
 *
 * Here, deterministically: the updater thread, registered nowhere, calls
 * orcu_synchronize() with nobody registered and is held by a test hook
 * between its read of the count and its swap (ORCU__DELAY_GP_SKIP).  There
 * the hook has a reader register and enter a section, then takes a
 * cookie, orcu_get_state() (which asks for no GP).  Released, the updater
 * must not end a GP: it runs one that waits for the reader.  Checked
 * while the reader is still inside: the updater's orcu_synchronize() has
 * not returned and the cookie is not done; once the reader leaves, both
 * complete.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <orcu.h>

#include <stdatomic.h>

#include "check.h"
#include "delay.h"
#include "gp.h"

static __thread bool is_updater;
static atomic_int hook_ran, reader_go, reader_in, reader_leave, updater_done;
static atomic_ulong cookie;

static void *reader(void *arg)
{
	(void)arg;
	CHECK_WAIT_UNTIL(atomic_load(&reader_go), 60);
	CHECK_EQ(orcu_register_thread(), 0);
	orcu_read_lock();
	atomic_store(&reader_in, 1);
	CHECK_WAIT_UNTIL(atomic_load(&reader_leave), 60);
	orcu_read_unlock();
	orcu_unregister_thread();
	return NULL;
}

/* On the updater, between its read of "no reader" and its swap. */
static void hold_updater(enum orcu__delay_point p)
{
	if (p != ORCU__DELAY_GP_SKIP || !is_updater || atomic_load(&hook_ran))
		return;
	atomic_store(&reader_go, 1);
	CHECK_WAIT_UNTIL(atomic_load(&reader_in), 60);
	atomic_store(&cookie, orcu_get_state());
	atomic_store(&hook_ran, 1);
}

static void *updater(void *arg)
{
	(void)arg;
	is_updater = true;
	orcu_synchronize();
	atomic_store(&updater_done, 1);
	return NULL;
}

int main(void)
{
	pthread_t r, u;

	test_watchdog("test_gp_skip_waits_for_new_reader", 120);
	CHECK_EQ(orcu_init(NULL), 0);
	orcu_barrier();         /* threads started; nobody registered */
	orcu__delay_set_hook(hold_updater);
	CHECK(pthread_create(&r, NULL, reader, NULL) == 0);
	CHECK(pthread_create(&u, NULL, updater, NULL) == 0);
	CHECK_WAIT_UNTIL(atomic_load(&hook_ran), 60);
	/* Released: the updater swaps, or fails to and starts a GP that
	 * waits for the reader.  Either way gp_seq moves. */
	CHECK_WAIT_UNTIL(orcu__load_acquire(&orcu__gp_seq) != atomic_load(&cookie) - 2 ||
			 atomic_load(&updater_done), 60);
	printf("reader inside: synchronize %s, cookie %s\n",
	       atomic_load(&updater_done) ? "returned" : "waiting",
	       orcu_poll_state(atomic_load(&cookie)) ? "done" : "not done");
	CHECK(!atomic_load(&updater_done));
	CHECK(!orcu_poll_state(atomic_load(&cookie)));
	atomic_store(&reader_leave, 1);
	CHECK(pthread_join(u, NULL) == 0);
	CHECK(pthread_join(r, NULL) == 0);
	orcu__delay_set_hook(NULL);
	orcu_cond_synchronize(atomic_load(&cookie));
	CHECK(orcu_poll_state(atomic_load(&cookie)));
	TEST_PASS("test_gp_skip_waits_for_new_reader");
}
