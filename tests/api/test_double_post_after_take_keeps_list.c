/*
 * test_double_post_after_take_keeps_list - an orcu_head posted again,
 * while still pending, after its leader took it off the thread's own
 * posting queue (the queue is drained, so the second orcu_call() does not
 * see it as the queue's newest).  The take that meets it again must not
 * clear its link, which is in the slot's list (or in the chain an invoker
 * is running): that cut the list behind it and lost every callback
 * there.  It reports one line, "orcu: orcu_call: callback head 0x...
 * posted twice while still pending (...); the second post is ignored",
 * leaves the second post out, and every other callback runs exactly
 * once; so does the head itself.  Each case runs in a forked child with
 * stderr captured, on slot 0 of two (ORCU_NOCB_STRIDE=2: a leader and a
 * follower per slot), with the full ORCU_CHECK_CALLS set off (debug
 * builds turn it on; it would answer at the second call):
 *  - behind: the head is held in the list by a read-side section;
 *    another thread's callbacks are taken behind it; the head is posted
 *    again; the section ends;
 *  - last: the same, with nothing behind the head (the list's last);
 *  - chain: the head and callbacks behind it were taken together and are
 *    in the follower's chain, held by the callback ahead of them; the
 *    head is posted again before it runs;
 *  - control: a callback that posts itself again from inside its run
 *    (legal: it is no longer pending) runs each time, no line.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <orcu.h>

#include "common_pipe.h"
#include "os.h"
#include "postcheck.h"
#include "nocb.h"
#include "slot.h"

#define NK 8
#define NSELF 100

static struct orcu_head head_h, gate, warm_a, warm_c, ks[NK];
static atomic_int ran_h, ran_gate, ran_warm, ran_k[NK];
static atomic_int gate_running, gate_release, gate_next_is_h;
static atomic_int c_cmd, c_done;     /* the helper thread's orders */

static void cb_h(struct orcu_head *h)
{
	(void)h;
	atomic_fetch_add(&ran_h, 1);
}

static void cb_warm(struct orcu_head *h)
{
	(void)h;
	atomic_fetch_add(&ran_warm, 1);
}

static void cb_k(struct orcu_head *h)
{
	atomic_fetch_add(&ran_k[h - ks], 1);
}

/* The callback ahead of head_h in the follower's chain: holds it there
 * until the test has posted head_h again (bounded). */
static void cb_gate(struct orcu_head *h)
{
	atomic_store(&gate_next_is_h, h->next == &head_h);
	atomic_store(&gate_running, 1);
	for (double end = check_now_s() + check_timeout_s(30);
	     !atomic_load(&gate_release) && check_now_s() < end; )
		sleep_ms(1);
	atomic_fetch_add(&ran_gate, 1);
}

enum { C_IDLE, C_WARM, C_POST_K, C_EXIT };

/* Posts from a second thread on slot 0, with a posting queue of its own
 * (claimed by its first post, kept while it lives). */
static void *helper(void *arg)
{
	(void)arg;
	CHECK_EQ(orcu_thread_bind_cpu(0), 0);
	for (;;) {
		int cmd;

		CHECK_WAIT_UNTIL((cmd = atomic_load(&c_cmd)) != C_IDLE, 60);
		if (cmd == C_EXIT)
			return NULL;
		if (cmd == C_WARM)
			orcu_call(&warm_c, cb_warm);
		else
			for (int i = 0; i < NK; i++)
				orcu_call(&ks[i], cb_k);
		atomic_store(&c_cmd, C_IDLE);
		atomic_fetch_add(&c_done, 1);
	}
}

static void helper_do(int cmd)
{
	int done = atomic_load(&c_done);

	atomic_store(&c_cmd, cmd);
	CHECK_WAIT_UNTIL(atomic_load(&c_done) != done, 30);
}

static struct orcu__slot *slot0;

/* The leader takes what was posted; one waiting for a GP (which our
 * read-side section holds) stays awake and rescans only when forced. */
static void wait_taken(void)
{
	for (double end = check_now_s() + check_timeout_s(30); orcu__slot_has_new(slot0); ) {
		CHECK(check_now_s() < end);
		orcu__nocb_wake_leader(slot0->st.leader, true);
		sleep_ms(1);
	}
}

/* Slot 0, with a posting queue of the helper's and then one of ours:
 * ours is first in the slot's list of queues, taken first. */
static pthread_t child_setup(void)
{
	pthread_t c;

	signal(SIGALRM, SIG_DFL);
	alarm((unsigned)check_timeout_s(60));
	unsetenv("ORCU_CHECK_CALLS");
	orcu__store_relaxed(&orcu__check_calls, 0);
	setenv("ORCU_CPUS", "possible=2,online=0-1", 1);
	setenv("ORCU_NOCB_STRIDE", "2", 1);
	CHECK_EQ(orcu_register_thread(), 0);
	CHECK_EQ(orcu_thread_bind_cpu(0), 0);
	slot0 = orcu__slot_of(0);
	CHECK_EQ(pthread_create(&c, NULL, helper, NULL), 0);
	helper_do(C_WARM);
	orcu_call(&warm_a, cb_warm);
	orcu_barrier();
	CHECK_EQ(atomic_load(&ran_warm), 2);
	return c;
}

static int child_finish(pthread_t c, bool with_k)
{
	orcu_barrier();
	CHECK_EQ(atomic_load(&ran_h), 1);
	for (int i = 0; with_k && i < NK; i++)
		CHECK_EQ(atomic_load(&ran_k[i]), 1);
	CHECK_EQ(orcu_slot_pending(0), 0);
	atomic_store(&c_cmd, C_EXIT);
	pthread_join(c, NULL);
	return 0;
}

static int case_in_list(void *arg)
{
	bool with_k = arg != NULL;
	pthread_t c = child_setup();

	orcu_read_lock();                /* no GP ends: head_h stays listed */
	orcu_call(&head_h, cb_h);
	wait_taken();
	if (with_k) {
		helper_do(C_POST_K);
		wait_taken();
	}
	orcu_call(&head_h, cb_h);        /* the second post, while pending */
	wait_taken();
	orcu_read_unlock();
	return child_finish(c, with_k);
}

static int case_in_chain(void *arg)
{
	pthread_t c = child_setup();

	(void)arg;
	/* One take: gate, head_h (ours), then the helper's ks, one chain. */
	orcu__slot_lock(slot0);
	orcu_call(&gate, cb_gate);
	orcu_call(&head_h, cb_h);
	helper_do(C_POST_K);
	orcu__slot_unlock(slot0);
	CHECK_WAIT_UNTIL(atomic_load(&gate_running), 30);
	CHECK(atomic_load(&gate_next_is_h));
	orcu_call(&head_h, cb_h);        /* taken, not started yet */
	wait_taken();
	atomic_store(&gate_release, 1);
	CHECK_EQ(child_finish(c, true), 0);
	CHECK_EQ(atomic_load(&ran_gate), 1);
	return 0;
}

static atomic_int self_runs;

static void cb_self(struct orcu_head *h)
{
	if (atomic_fetch_add(&self_runs, 1) + 1 < NSELF)
		orcu_call(h, cb_self);
}

static int case_self_repost(void *arg)
{
	pthread_t c = child_setup();

	(void)arg;
	orcu_call(&head_h, cb_self);
	CHECK_WAIT_UNTIL(atomic_load(&self_runs) == NSELF, 60);
	orcu_barrier();
	CHECK_EQ(atomic_load(&self_runs), NSELF);
	CHECK_EQ(orcu_slot_pending(0), 0);
	atomic_store(&c_cmd, C_EXIT);
	pthread_join(c, NULL);
	return 0;
}

/* The child ran to its end (exit 0) and wrote `lines` lines, each the
 * one report. */
static bool expect(const char *name, int (*fn)(void *), void *arg, int lines)
{
	struct child_result r;
	const char *want = "orcu: orcu_call: callback head 0x";
	bool ok;

	run_child(fn, arg, 90, &r);
	printf("%-8s -> %s%s", name,
	       WIFEXITED(r.status) ? "exit " : "signal ",
	       WIFEXITED(r.status) ? (WEXITSTATUS(r.status) ? "!= 0" : "0") : "");
	if (WIFSIGNALED(r.status))
		printf("%d", WTERMSIG(r.status));
	printf("; stderr: %s", r.lines ? r.err : "(nothing)\n");
	ok = WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0 && r.lines == lines;
	if (ok && lines)
		ok = strncmp(r.err, want, strlen(want)) == 0 &&
		     strstr(r.err, "posted twice while still pending") &&
		     strstr(r.err, "detected on CPU slot 0") &&
		     strstr(r.err, "the second post is ignored");
	if (!ok)
		fprintf(stderr, "%s: expected exit 0 and %d report line(s)\n", name, lines);
	return ok;
}

int main(void)
{
	int failed = 0;

	test_watchdog("test_double_post_after_take_keeps_list", 400);
	failed += !expect("behind", case_in_list, (void *)1, 1);
	failed += !expect("last", case_in_list, NULL, 1);
	failed += !expect("chain", case_in_chain, NULL, 1);
	failed += !expect("control", case_self_repost, NULL, 0);
	CHECK_EQ(failed, 0);
	TEST_PASS("test_double_post_after_take_keeps_list");
}
