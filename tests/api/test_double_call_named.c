/*
 * test_double_call_named.c - the same orcu_head posted twice while it is
 * still pending is caught by default (no ORCU_CHECK_CALLS) where it is
 * cheap, with one line that names the call, instead of corrupting the
 * slot's callbacks silently or dying on an internal cblist assertion.
 * Each case runs in a forked child with stderr captured; it must write
 * exactly one line starting "orcu: <call>: callback head 0x" and saying
 * "posted twice while still pending":
 *  - orcu_call twice in a row inside a read-side section (the first post
 *    cannot have run): whether the second call sees it (its queue still
 *    holds the first) or a leader that took the first post meets it, the
 *    second post is left out, the line ends "the second post is
 *    ignored", and the child goes on: the callback runs once (debug
 *    builds, where ORCU_CHECK_CALLS is always on, abort at the second
 *    call instead);
 * and the others die of SIGABRT after their line:
 *  - orcu_call_lazy twice in a row (names orcu_call_lazy);
 *  - (orcu_call, then orcu_call again once the slot's leader has moved
 *    it onto the slot's list, is reported without an abort, the second
 *    post left out: test_double_post_after_take_keeps_list);
 *  - the same two detections, deterministic, on the data structures
 *    alone: a callback queue pushed the same head twice, and a callback
 *    list handed back its own last head (these run identically in debug
 *    builds, where the full ORCU_CHECK_CALLS set would otherwise answer
 *    first).
 * Control: re-posting after the first post ran is fine.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <orcu.h>

#include "common_pipe.h"
#include "os.h"
#include "cblist.h"
#include "mpsc.h"

static struct orcu_head twice;

static int ran_twice;

static void nop_cb(struct orcu_head *h)
{
	(void)h;
}

static void count_cb(struct orcu_head *h)
{
	(void)h;
	ran_twice++;
}

/* An uncaught double post may hang or loop: SIGALRM ends the child. */
static void child_setup(void)
{
	unsetenv("ORCU_CHECK_CALLS");
	signal(SIGALRM, SIG_DFL);
	alarm((unsigned)check_timeout_s(20));
}

/* The detection may come from a library thread: wait for the abort. */
static int wait_for_abort(void)
{
	for (;;)
		pause();
	return 0;
}

static int call_twice(void *a)
{
	bool lazy = a != NULL;

	child_setup();
	/* Lazy callbacks stay queued where they were posted until the
	 * timer: an hour, so the second post surely finds the first. */
	setenv("ORCU_LAZY_MS", "3600000", 1);
	CHECK_EQ(orcu_register_thread(), 0);
	/* Both posts on one slot: a thread moved to another CPU between
	 * them posts the second where nothing cheap can see the first (a
	 * case only ORCU_CHECK_CALLS catches): both would run, or the lazy
	 * child would wait for an abort that never comes. */
	CHECK_EQ(orcu_thread_bind_cpu(0), 0);
	orcu_read_lock();
	if (lazy) {
		orcu_call_lazy(&twice, nop_cb);
		orcu_call_lazy(&twice, nop_cb);
	} else {
		orcu_call(&twice, count_cb);
		orcu_call(&twice, count_cb);
	}
	orcu_read_unlock();
	if (!lazy) {
		orcu_barrier();
		return ran_twice == 1 ? 0 : 3;
	}
	orcu_reclaim_lazy();
	return wait_for_abort();
}

static int queue_twice(void *a)
{
	struct orcu__mpsc q;

	(void)a;
	child_setup();
	orcu__mpsc_init(&q);
	twice.func = nop_cb;
	orcu__mpsc_push(&q, &twice);
	orcu__mpsc_push(&q, &twice);
	return 0;
}

static int list_twice(void *a)
{
	struct orcu__cblist cbl;
	struct orcu_head other = { NULL, nop_cb };

	(void)a;
	child_setup();
	orcu__cblist_init(&cbl);
	twice.func = nop_cb;
	twice.next = NULL;
	orcu__cblist_enqueue_chain(&cbl, &other, &other, 1);
	orcu__cblist_enqueue_chain(&cbl, &twice, &twice, 1);
	/* Posted again while it is the list's last head: its link is reset,
	 * and the leader hands it back. */
	twice.next = NULL;
	orcu__cblist_enqueue_chain(&cbl, &twice, &twice, 1);
	return 0;
}

static int repost_after_run(void *a)
{
	(void)a;
	child_setup();
	for (int i = 0; i < 3; i++) {
		orcu_call(&twice, nop_cb);
		orcu_barrier();
	}
	return 0;
}

/* Returns false (after saying why) if the child did not die as expected:
 * every case runs, so a run shows each one that fails. */
static bool expect_named_abort(const char *name, int (*fn)(void *), void *arg,
			       const char *call)
{
	struct child_result r;
	char want[128];

	run_child(fn, arg, 60, &r);
	snprintf(want, sizeof(want), "orcu: %s: callback head 0x", call);
	printf("%-26s -> %s", name, r.lines ? r.err : "(nothing)\n");
	if (!WIFSIGNALED(r.status) || WTERMSIG(r.status) != SIGABRT) {
		fprintf(stderr, "%s: child did not abort (status %#x: %s %d); stderr:\n%s\n",
			name, r.status, WIFSIGNALED(r.status) ? "signal" : "exit",
			WIFSIGNALED(r.status) ? WTERMSIG(r.status) : WEXITSTATUS(r.status),
			r.err);
		return false;
	}
	if (r.lines != 1 || strncmp(r.err, want, strlen(want)) != 0 ||
	    !strstr(r.err, "posted twice while still pending")) {
		fprintf(stderr, "%s: expected one line \"%s... posted twice while still "
			"pending ...\", got %d line(s):\n%s\n", name, want, r.lines, r.err);
		return false;
	}
	return true;
}

int main(void)
{
	struct child_result r;
	int failed = 0;

	test_watchdog("test_double_call_named", 240);
#ifdef ORCU_DEBUG
	/* Debug builds always keep ORCU_CHECK_CALLS's set of pending heads,
	 * whose check aborts at the second call. */
	failed += !expect_named_abort("orcu_call twice", call_twice, NULL, "orcu_call");
#else
	run_child(call_twice, NULL, 60, &r);
	printf("%-26s -> exit %d: %s", "orcu_call twice",
	       WIFEXITED(r.status) ? WEXITSTATUS(r.status) : -1, r.lines ? r.err : "(nothing)\n");
	CHECK(WIFEXITED(r.status));
	CHECK_EQ(WEXITSTATUS(r.status), 0);
	CHECK_EQ(r.lines, 1);
	CHECK(strncmp(r.err, "orcu: orcu_call: callback head 0x", 33) == 0);
	CHECK(strstr(r.err, "posted twice while still pending") != NULL);
	CHECK(strstr(r.err, "the second post is ignored") != NULL);
#endif
	failed += !expect_named_abort("orcu_call_lazy twice", call_twice, (void *)1,
				      "orcu_call_lazy");
	failed += !expect_named_abort("queue: same head twice", queue_twice, NULL, "orcu_call");
	failed += !expect_named_abort("list: last head again", list_twice, NULL, "orcu_call");
	CHECK_EQ(failed, 0);

	run_child(repost_after_run, NULL, 60, &r);
	printf("%-26s -> exit %d%s%s", "control: re-post after run",
	       WIFEXITED(r.status) ? WEXITSTATUS(r.status) : -1, r.lines ? ": " : "\n", r.err);
	CHECK(WIFEXITED(r.status));
	CHECK_EQ(WEXITSTATUS(r.status), 0);
	CHECK_EQ(r.lines, 0);
	TEST_PASS("test_double_call_named");
}
