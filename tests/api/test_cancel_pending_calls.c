/*
 * test_cancel_pending_calls.c - a pthread_cancel() never takes effect
 * inside an orcu call (docs/API.md, "Cancellation").  In each case a
 * thread with a cancel pending (deferred, the default) makes one orcu
 * call that reaches what used to be a cancellation point:
 *  - the first call of the process, which reads sysfs under orcu__g.lock
 *    (orcu_init, orcu_register_thread, orcu_call, orcu_synchronize);
 *  - a first call whose configuration line is written under the lock
 *    (a bad ORCU_NOCB_STRIDE, with ORCU_CPUS given, so no sysfs read);
 *  - a call that starts the threads when they cannot be created: the
 *    "cannot create library thread" line, under the lock;
 *  - orcu_shutdown(), which joins the library's threads;
 *  - orcu_call() past ORCU_QMAX, which sleeps;
 *  - orcu_synchronize(), orcu_barrier() and orcu_drain() asleep on a
 *    reader (futex waits, no cancellation point: these held before too);
 *  - a misuse (orcu_synchronize() in a read-side section), which must
 *    abort with its line, not unwind the thread.
 * The thread must come back from the call (and be cancelled at its next
 * cancellation point after it); then other threads' calls must complete:
 * a post and a barrier, synchronize, shutdown.  Each case runs in a
 * forked child, bounded, so a wedged library fails the test, not hangs it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <orcu.h>
#include <orcu/debug.h>

#include "common_pipe.h"

static atomic_int fail_library_threads;

int pthread_create(pthread_t *t, const pthread_attr_t *attr,
		   void *(*fn)(void *), void *arg)
{
	if (atomic_load(&fail_library_threads) && check_library_thread(fn, arg))
		return EAGAIN;
	return check_real_pthread_create(t, attr, fn, arg);
}

static void nop_cb(struct orcu_head *h)
{
	(void)h;
}

static atomic_int counted;

static void count_cb(struct orcu_head *h)
{
	(void)h;
	atomic_fetch_add(&counted, 1);
}

/* ---- the calls a thread makes with a cancel pending ---- */

static void call_init(void)
{
	(void)orcu_init(NULL);
}

static void call_register(void)
{
	(void)orcu_register_thread();
}

static void call_call(void)
{
	static struct orcu_head h;

	orcu_call(&h, nop_cb);
}

static void call_synchronize(void)
{
	orcu_synchronize();
}

static void call_shutdown(void)
{
	(void)orcu_shutdown();
}

#define FLOOD 200     /* own-queue posts check the flood every 64 */
static void call_flood(void)
{
	static struct orcu_head h[FLOOD];

	CHECK_EQ(orcu_thread_bind_cpu(0), 0);
	for (int i = 0; i < FLOOD; i++)
		orcu_call(&h[i], count_cb);
}

static void call_barrier(void)
{
	static struct orcu_head h;

	orcu_call(&h, nop_cb);
	orcu_barrier();
}

static void call_drain(void)
{
	static struct orcu_head h;

	orcu_call(&h, nop_cb);
	CHECK_EQ(orcu_drain(-1), 0);
}

static void call_misuse(void)
{
	orcu_read_lock();
	orcu_synchronize();      /* aborts with its line */
}

/* ---- what the child's main thread prepares ---- */

static void prep_stride(void)
{
	setenv("ORCU_CPUS", "possible=4,online=0-3", 1);
	setenv("ORCU_NOCB_STRIDE", "abc", 1);
}

static void prep_no_threads(void)
{
	setenv("ORCU_CPUS", "possible=4,online=0-3", 1);
	CHECK(orcu_current_cpu() >= 0);          /* configured, no thread yet */
	atomic_store(&fail_library_threads, 1);
}

static void prep_configured(void)
{
	CHECK(orcu_current_cpu() >= 0);
}

static void prep_started(void)
{
	struct orcu_head h;

	setenv("ORCU_CPUS", "possible=4,online=0-3", 1);
	orcu_call(&h, nop_cb);
	orcu_barrier();
	CHECK(orcu_debug_thread_count() > 0);
}

/* A reader holds every grace period: while the flood is posted, or until
 * the thread with the cancel pending sleeps in its wait (or 10 s). */
static atomic_int reader_in, reader_release, release_when_caller_sleeps;
static atomic_int caller_tid;

static bool caller_sleeps(void)
{
	char path[64], buf[256], *state;
	size_t n;
	FILE *f;

	if (!atomic_load(&release_when_caller_sleeps) || !atomic_load(&caller_tid))
		return false;
	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", atomic_load(&caller_tid));
	if (!(f = fopen(path, "r")))
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	state = strrchr(buf, ')');
	return state && state[1] == ' ' && state[2] == 'S';
}

static void *holding_reader(void *arg)
{
	double end = check_now_s() + check_timeout_s(10);

	(void)arg;
	CHECK_EQ(orcu_register_thread(), 0);
	orcu_read_lock();
	atomic_store(&reader_in, 1);
	while (!atomic_load(&reader_release) && !caller_sleeps() && check_now_s() < end)
		sched_yield();
	orcu_read_unlock();
	orcu_unregister_thread();
	return NULL;
}

static pthread_t reader_thread;

static void prep_flood(void)
{
	setenv("ORCU_CPUS", "possible=2,online=0-1", 1);
	setenv("ORCU_QHIMARK", "2", 1);
	setenv("ORCU_QLOWMARK", "1", 1);
	setenv("ORCU_QMAX", "3", 1);
	CHECK_EQ(pthread_create(&reader_thread, NULL, holding_reader, NULL), 0);
	CHECK_WAIT_UNTIL(atomic_load(&reader_in), 30);
}

static void prep_waits(void)
{
	setenv("ORCU_CPUS", "possible=2,online=0-1", 1);
	atomic_store(&release_when_caller_sleeps, 1);
	CHECK_EQ(pthread_create(&reader_thread, NULL, holding_reader, NULL), 0);
	CHECK_WAIT_UNTIL(atomic_load(&reader_in), 30);
}

static void after_waits(void)
{
	CHECK_EQ(pthread_join(reader_thread, NULL), 0);
}

static void after_flood(void)
{
	struct orcu_stats st;

	orcu_get_stats(&st);
	CHECK(st.poster_waits > 0);               /* it did sleep */
	atomic_store(&reader_release, 1);
	CHECK_EQ(pthread_join(reader_thread, NULL), 0);
}

struct cancel_case {
	const char *name;
	void (*prep)(void);        /* on the child's main thread, or NULL */
	void (*call)(void);        /* on the thread with a cancel pending */
	void (*after)(void);       /* once it is joined, or NULL */
	bool aborts;               /* the call must abort with one line */
	const char *line;          /* text that line holds */
};

static const struct cancel_case cases[] = {
	{ "first call: orcu_init", NULL, call_init, NULL, false, NULL },
	{ "first call: orcu_register_thread", NULL, call_register, NULL, false, NULL },
	{ "first call: orcu_call", NULL, call_call, NULL, false, NULL },
	{ "first call: orcu_synchronize", NULL, call_synchronize, NULL, false, NULL },
	{ "first call with a bad ORCU_NOCB_STRIDE", prep_stride, call_synchronize, NULL,
	  false, "ORCU_NOCB_STRIDE" },
	{ "threads that cannot be created", prep_no_threads, call_register, NULL,
	  false, "cannot create library thread" },
	{ "orcu_shutdown joining threads", prep_started, call_shutdown, NULL, false, NULL },
	{ "orcu_call past ORCU_QMAX", prep_flood, call_flood, after_flood, false, NULL },
	{ "orcu_synchronize waiting for a reader", prep_waits, call_synchronize,
	  after_waits, false, NULL },
	{ "orcu_barrier waiting for a reader", prep_waits, call_barrier, after_waits,
	  false, NULL },
	{ "orcu_drain waiting for a reader", prep_waits, call_drain, after_waits,
	  false, NULL },
	{ "misuse: orcu_synchronize in a section", prep_configured, call_misuse, NULL, true,
	  "orcu_synchronize" },
};

static atomic_int returned;

static void *cancelled_caller(void *arg)
{
	const struct cancel_case *c = arg;

	atomic_store(&caller_tid, gettid());
	/* Deferred: pending until the thread's next cancellation point. */
	pthread_cancel(pthread_self());
	c->call();
	atomic_store(&returned, 1);
	pthread_testcancel();
	return NULL;                /* not reached */
}

static void *other_thread(void *arg)
{
	(void)arg;
	CHECK_EQ(orcu_register_thread(), 0);
	orcu_read_lock();
	orcu_read_unlock();
	orcu_synchronize();
	orcu_unregister_thread();
	return NULL;
}

static int case_child(void *arg)
{
	const struct cancel_case *c = arg;
	static struct orcu_head h;
	pthread_t t;
	void *res;

	if (c->prep)
		c->prep();
	CHECK_EQ(pthread_create(&t, NULL, cancelled_caller, (void *)c), 0);
	CHECK_EQ(pthread_join(t, &res), 0);
	/* Said now, checked last: the calls below show whether the
	 * library survived it (a wedge makes the child time out). */
	if (!atomic_load(&returned))
		fprintf(stderr, "cancelled inside the call; ");
	if (res != PTHREAD_CANCELED)
		fprintf(stderr, "cancel lost; ");
	atomic_store(&fail_library_threads, 0);
	if (c->after)
		c->after();
	/* Everyone else goes on. */
	CHECK_EQ(pthread_create(&t, NULL, other_thread, NULL), 0);
	CHECK_EQ(pthread_join(t, NULL), 0);
	orcu_call(&h, count_cb);
	orcu_barrier();
	orcu_synchronize();
	if (orcu_shutdown() != 0)
		return 4;
	if (atomic_load(&counted) != (c->call == call_flood ? FLOOD + 1 : 1))
		return 5;
	fprintf(stderr, "the others' calls completed\n");
	return !atomic_load(&returned) ? 2 : res != PTHREAD_CANCELED ? 3 : 0;
}

int main(void)
{
	int failed = 0;

	test_watchdog("test_cancel_pending_calls", 300);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct cancel_case *c = &cases[i];
		struct child_result r;
		bool ok;

		run_child(case_child, (void *)c, 20, &r);
		if (c->aborts)
			ok = WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGABRT &&
			     r.lines == 1 && strncmp(r.err, "orcu: ", 6) == 0;
		else
			ok = WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0;
		if (c->line && !strstr(r.err, c->line))
			ok = false;
		printf("%-42s %s (%s %d): %s%s", c->name, ok ? "ok" : "FAILED",
		       WIFEXITED(r.status) ? "exit" : "signal",
		       WIFEXITED(r.status) ? WEXITSTATUS(r.status) : WTERMSIG(r.status),
		       r.err, r.err[0] && r.err[strlen(r.err) - 1] == '\n' ? "" : "\n");
		failed += !ok;
	}
	CHECK_EQ(failed, 0);
	TEST_PASS("test_cancel_pending_calls");
}
