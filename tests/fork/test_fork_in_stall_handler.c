/*
 * test_fork_in_stall_handler.c - fork() from a stall handler.  The handler
 * runs on the thread that owns the grace-period machinery, in the middle
 * of a GP (gp_seq odd).  In the child that thread still owns it: when the
 * handler returns it finishes that GP.  Meanwhile no other thread of the
 * child may run a GP of its own (two owners would both write gp_seq and
 * flip the reader phase; gp_seq went backwards), and afterwards the child
 * must run later GPs normally.
 *
 * Two rounds, by who owns the GP that stalls:
 *  1. an application thread in orcu_synchronize();
 *  2. orcu's GP thread, running a GP for a callback.  In the child that
 *     thread finishes its GP and then ends: the child's GP thread starts
 *     on first use, and is the only one.
 * In each child the handler starts a thread that calls orcu_synchronize()
 * twice and gives it one second (scaled) to finish, which it must not do
 * before the handler returns; then gp_seq must only have moved forward.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <orcu.h>

#include "common_pipe.h"
#include "os.h"
#include "seq.h"
#include "gp.h"

static pid_t parent_pid;
static pthread_t main_thread;
static int round_no;                       /* 1: application owner, 2: orcu-gp */
static atomic_int fork_armed, round_done, child_status;
static atomic_int holding, release_holder;

/* In the child. */
static unsigned long seq_at_fork, other_seq[2];
static atomic_int other_done, other_early;
static struct orcu_head child_head;
static atomic_int child_ran;

static unsigned long gp_seq(void)
{
	return orcu__load_acquire(&orcu__gp_seq);
}

static void *holder_main(void *arg)
{
	(void)arg;
	CHECK_EQ(orcu_register_thread(), 0);
	orcu_read_lock();
	atomic_store(&holding, 1);
	CHECK_WAIT_UNTIL(atomic_load(&release_holder), 90);
	orcu_read_unlock();
	orcu_unregister_thread();
	return NULL;
}

static void child_cb(struct orcu_head *h)
{
	(void)h;
	atomic_fetch_add(&child_ran, 1);
}

/* Round 2's child ends here, on the thread the handler started. */
static void round2_child_finish(void)
{
	char names[4][32];

	orcu_call(&child_head, child_cb);
	orcu_barrier();
	CHILD_CHECK(20, atomic_load(&child_ran) == 1);
	/* The forking GP thread ended after its GP: one GP thread runs,
	 * the one the child started. */
	CHECK_WAIT_UNTIL(check_thread_names("orcu-gp", names, 4) == 1, 10);
	/* No orcu_shutdown() here: its joins would meet the ids of the
	 * parent's threads, which ThreadSanitizer still counts as running
	 * (the child's threads got their stacks). */
	printf("child: round 2: the forking GP thread finished its GP and ended, one "
	       "GP thread runs; GPs %lu -> %lu -> %lu\n", seq_at_fork, other_seq[0], other_seq[1]);
	fflush(stdout);
	_exit(0);
}

/* The child's other thread: two GPs, which must wait for the one the
 * forking thread still owns. */
static void *other_main(void *arg)
{
	(void)arg;
	/* Not the forking thread's name (orcu-gp in round 2). */
	pthread_setname_np(pthread_self(), "fork-other");
	for (int i = 0; i < 2; i++) {
		orcu_synchronize();
		other_seq[i] = gp_seq();
	}
	atomic_store(&other_done, 1);
	CHILD_CHECK(10, !orcu__seq_in_progress(other_seq[0]));
	CHILD_CHECK(11, orcu__seq_lt(seq_at_fork, other_seq[0]));
	CHILD_CHECK(12, orcu__seq_lt(other_seq[0], other_seq[1]));
	if (round_no == 2) {
		/* The owner's GP ended before our first one did. */
		CHILD_CHECK(13, !atomic_load(&other_early));
		round2_child_finish();
	}
	return NULL;
}

/* In the child, on the forking thread, still inside the handler. */
static void child_in_handler(void)
{
	pthread_attr_t attr;
	pthread_t t;
	double until;

	seq_at_fork = gp_seq();
	CHILD_CHECK(2, orcu__seq_in_progress(seq_at_fork));
	CHILD_CHECK(3, orcu__tls.gp_owning);
	/* A stack size of its own: glibc would give it the stack (and the id)
	 * of a parent thread, which ThreadSanitizer still counts as running. */
	CHILD_CHECK(4, pthread_attr_init(&attr) == 0 &&
		       pthread_attr_setstacksize(&attr, (1 << 20) + (64 << 10)) == 0 &&
		       pthread_create(&t, &attr, other_main, NULL) == 0 &&
		       pthread_detach(t) == 0);
	until = check_now_s() + check_timeout_s(1.0);
	while (!atomic_load(&other_done) && check_now_s() < until)
		sleep_ms(1);
	if (atomic_load(&other_done)) {
		atomic_store(&other_early, 1);
		fprintf(stderr, "child: another thread ran GPs (gp_seq %lu -> %lu) while the "
			"forking thread still owned GP %lu\n", seq_at_fork, other_seq[1],
			seq_at_fork);
		_exit(5);
	}
	/* Back into the GP this thread owns. */
}

static void handler(const struct orcu_stall_info *info, void *arg)
{
	char name[32] = "";
	pid_t pid;

	(void)info;
	(void)arg;
	if (!atomic_exchange(&fork_armed, 0))
		return;
	pthread_getname_np(pthread_self(), name, sizeof(name));
	if (round_no == 1)
		CHECK(pthread_equal(pthread_self(), main_thread));
	else
		CHECK(strcmp(name, "orcu-gp") == 0);
	CHECK(orcu__tls.gp_owning);
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		child_in_handler();
		return;
	}
	atomic_store(&child_status, check_wait_child(pid, "fork child", 60));
	atomic_store(&release_holder, 1);
	atomic_store(&round_done, 1);
}

static void start_round(int n, pthread_t *h)
{
	round_no = n;
	atomic_store(&holding, 0);
	atomic_store(&release_holder, 0);
	atomic_store(&round_done, 0);
	atomic_store(&fork_armed, 1);
	CHECK_EQ(pthread_create(h, NULL, holder_main, NULL), 0);
	CHECK_WAIT_UNTIL(atomic_load(&holding), 30);
}

static void end_round(pthread_t h, const char *what)
{
	int st;

	CHECK_WAIT_UNTIL(atomic_load(&round_done), 60);
	CHECK_EQ(pthread_join(h, NULL), 0);
	st = atomic_load(&child_status);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "%s: child failed: %s %d\n", what,
			WIFEXITED(st) ? "exit status" : "signal",
			WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
		exit(1);
	}
	printf("%s: the child kept one GP owner\n", what);
}

static struct orcu_head parent_head;
static atomic_int parent_ran;

static void parent_cb(struct orcu_head *h)
{
	(void)h;
	atomic_fetch_add(&parent_ran, 1);
}

int main(void)
{
	pthread_t h;

	test_watchdog("test_fork_in_stall_handler", 120);
	setenv("ORCU_STALL_MS", "50", 1);
	parent_pid = getpid();
	main_thread = pthread_self();
	orcu_set_stall_handler(handler, NULL);

	/* Round 1: this thread runs the GP that stalls. */
	start_round(1, &h);
	orcu_synchronize();
	if (getpid() != parent_pid) {
		/* The child, after the handler returned: our GP ended, then
		 * the other thread's two. */
		unsigned long mine = gp_seq();

		CHILD_CHECK(30, !orcu__seq_in_progress(mine));
		CHILD_CHECK(31, orcu__seq_lt(seq_at_fork, mine));
		CHECK_WAIT_UNTIL(atomic_load(&other_done), 30);
		CHILD_CHECK(32, !orcu__seq_lt(gp_seq(), other_seq[1]));
		printf("child: round 1: the forking thread's GP ended first; GPs %lu -> %lu -> %lu -> %lu\n",
		       seq_at_fork, mine, other_seq[0], other_seq[1]);
		fflush(stdout);
		_exit(0);
	}
	end_round(h, "round 1 (application thread owns the GP)");

	/* Round 2: orcu's GP thread runs the GP a callback needs. */
	start_round(2, &h);
	orcu_call(&parent_head, parent_cb);
	end_round(h, "round 2 (orcu-gp owns the GP)");
	orcu_barrier();
	CHECK_EQ(atomic_load(&parent_ran), 1);
	CHECK_EQ(orcu_shutdown(), 0);
	TEST_PASS("test_fork_in_stall_handler");
}
