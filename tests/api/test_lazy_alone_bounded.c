/*
 * test_lazy_alone_bounded - issue: a lazy callback could be stranded: the
 * leader's last check before sleeping looked only at the normal queue, and
 * the first lazy post woke the leader only if it already slept, so a lazy
 * callback posted while the leader was still finishing a pass waited for
 * an unrelated post.  Bound: with nobody else posting, every lazy callback
 * is invoked within ORCU_LAZY_MS plus a GP (10 s of slack here for a
 * loaded machine).  To post inside that window, each callback posts the
 * next one itself: it runs on the follower the leader has just woken,
 * while the leader goes on scanning the other 63 slots of its group.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <orcu.h>

#include <stdatomic.h>

#include "check.h"

#define ROUNDS 200

static struct orcu_head head;
static atomic_int invoked;

static void cb(struct orcu_head *h)
{
	if (atomic_fetch_add(&invoked, 1) + 1 < ROUNDS)
		orcu_call_lazy(h, cb);
}

int main(void)
{
	setenv("ORCU_CPUS", "possible=64,online=0-63", 1);
	setenv("ORCU_NOCB_STRIDE", "64", 1);
	setenv("ORCU_LAZY_MS", "2", 1);
	unsetenv("ORCU_NOCBS");
	CHECK_EQ(orcu_init(NULL), 0);
	CHECK_EQ(orcu_thread_bind_cpu(0), 0);
	orcu_call_lazy(&head, cb);
	for (int i = 1; i <= ROUNDS; i++)
		CHECK_WAIT_UNTIL(atomic_load(&invoked) >= i, 10);
	CHECK_EQ(orcu_shutdown(), 0);
	TEST_PASS("lazy_alone_bounded");
}
