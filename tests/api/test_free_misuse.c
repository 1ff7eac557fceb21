/*
 * test_free_misuse.c - orcu_free() and orcu_retire() may wait for a grace
 * period (when no batch memory can be had), so each rejects, on every
 * call and not only when memory runs out, the contexts where that wait
 * would deadlock: a read-side section (memb, nested too) and a callback,
 * with one line naming the call, then abort.  A NULL deleter is rejected
 * the same way.  orcu_free_rcu(), which never blocks, is accepted in
 * both contexts and its object is freed by the next barrier.  Each case
 * runs in a forked child with stderr captured.
 */
#include <orcu.h>

#include "common_pipe.h"

static void child_setup(void)
{
	signal(SIGALRM, SIG_DFL);
	alarm((unsigned)check_timeout_s(20));
}

static int free_in_section(void *a)
{
	(void)a;
	child_setup();
	orcu_read_lock();
	orcu_read_lock();
	orcu_free(malloc(16));
	return 0;
}

static int retire_in_section(void *a)
{
	(void)a;
	child_setup();
	orcu_read_lock();
	orcu_retire(malloc(16), free);
	return 0;
}

static void cb_retires(struct orcu_head *h)
{
	orcu_retire(h, free);
}

static int retire_in_callback(void *a)
{
	(void)a;
	child_setup();
	orcu_call(malloc(sizeof(struct orcu_head)), cb_retires);
	orcu_barrier();
	return 0;
}

static void cb_frees(struct orcu_head *h)
{
	orcu_free(h);
}

static int free_in_callback(void *a)
{
	(void)a;
	child_setup();
	orcu_call(malloc(sizeof(struct orcu_head)), cb_frees);
	orcu_barrier();
	return 0;
}

static int retire_null_deleter(void *a)
{
	(void)a;
	child_setup();
	orcu_retire(malloc(16), NULL);
	return 0;
}

struct obj {
	long v;
	struct orcu_head head;
};

static void cb_free_rcu(struct orcu_head *h)
{
	struct obj *o = malloc(sizeof(*o));

	free(h);
	if (o)
		orcu_free_rcu(o, head);
}

static int free_rcu_anywhere(void *a)
{
	struct obj *o = malloc(sizeof(*o));
	struct orcu_stats st;

	(void)a;
	child_setup();
	if (!o)
		return 2;
	orcu_read_lock();
	orcu_free_rcu(o, head);
	orcu_read_unlock();
	orcu_call(malloc(sizeof(struct orcu_head)), cb_free_rcu);
	if (orcu_drain(-1) != 0)
		return 3;
	orcu_get_stats(&st);
	return st.callbacks_pending == 0 ? 0 : 4;
}

int main(void)
{
	struct child_result r;

	test_watchdog("test_free_misuse", 120);
	expect_child_abort("free in section", free_in_section, NULL, "orcu_free");
	expect_child_abort("retire in section", retire_in_section, NULL, "orcu_retire");
	expect_child_abort("retire in callback", retire_in_callback, NULL, "orcu_retire");
	expect_child_abort("free in callback", free_in_callback, NULL, "orcu_free");
	expect_child_abort("retire NULL deleter", retire_null_deleter, NULL, "orcu_retire");
	run_child(free_rcu_anywhere, NULL, 30, &r);
	if (!WIFEXITED(r.status) || WEXITSTATUS(r.status) != 0 || r.lines != 0) {
		fprintf(stderr, "free_rcu anywhere: status %#x, stderr:\n%s\n", r.status, r.err);
		exit(1);
	}
	printf("%-22s -> ok\n", "free_rcu anywhere");
	TEST_PASS("test_free_misuse");
}
