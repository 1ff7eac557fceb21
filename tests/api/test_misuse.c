/*
 * test_misuse.c - every misuse that would deadlock or corrupt is caught:
 * each case runs in a forked child (the parent never touches orcu, so each
 * child starts from a fresh library) with stderr captured; the child must
 * die of SIGABRT having written exactly one line "orcu: <call>: ..." that
 * names the call.  Cases: synchronize (plain, expedited, conditional),
 * barrier and drain inside a read-side section; synchronize and barrier
 * inside a callback; read_unlock without lock (registered and not);
 * the same head posted twice while pending with ORCU_CHECK_CALLS=1;
 * shutdown inside a section (memb, and qsbr in shared code) and from a
 * stall handler.  And the non-fatal misuses: orcu_init after first use
 * returns -EBUSY; a callback registering its orcu thread as a qsbr
 * reader gets -EPERM (one line) and grace periods go on.
 */
#include <orcu.h>

#include "common_pipe.h"

/* Run in the child.  A misuse that is not caught would deadlock: the
 * alarm turns that into SIGALRM, which the parent reports. */
static void child_setup(void)
{
	signal(SIGALRM, SIG_DFL);
	alarm((unsigned)check_timeout_s(20));
}

static int sync_in_section(void *a)
{
	(void)a;
	child_setup();
	orcu_register_thread();
	orcu_read_lock();
	orcu_synchronize();
	return 0;
}

static int expedited_in_section(void *a)
{
	(void)a;
	child_setup();
	orcu_register_thread();
	orcu_read_lock();
	orcu_synchronize_expedited();
	return 0;
}

static int cond_sync_in_section(void *a)
{
	unsigned long c;

	(void)a;
	child_setup();
	orcu_register_thread();
	c = orcu_get_state();
	orcu_read_lock();
	orcu_read_lock();   /* nested still counts */
	orcu_cond_synchronize(c);
	return 0;
}

static int barrier_in_section(void *a)
{
	(void)a;
	child_setup();
	orcu_register_thread();
	orcu_read_lock();
	orcu_barrier();
	return 0;
}

static int drain_in_section(void *a)
{
	(void)a;
	child_setup();
	orcu_register_thread();
	orcu_read_lock();
	orcu_drain(1000);
	return 0;
}

static int shutdown_in_section(void *a)
{
	(void)a;
	child_setup();
	orcu_register_thread();
	orcu_read_lock();
	orcu_shutdown();
	return 0;
}

static void cb_sync(struct orcu_head *h)
{
	(void)h;
	orcu_synchronize();
}

static void cb_barrier(struct orcu_head *h)
{
	(void)h;
	orcu_barrier();
}

static struct orcu_head misuse_head;

static int sync_in_callback(void *a)
{
	(void)a;
	child_setup();
	orcu_call(&misuse_head, cb_sync);
	orcu_barrier();   /* the callback aborts the process meanwhile */
	return 0;
}

static int barrier_in_callback(void *a)
{
	(void)a;
	child_setup();
	orcu_call(&misuse_head, cb_barrier);
	orcu_synchronize();
	orcu_barrier();
	return 0;
}

static void cb_wait_backlog(struct orcu_head *h)
{
	(void)h;
	orcu_wait_backlog(-1);   /* waits for callbacks: aborts in one */
}

static int wait_backlog_in_callback(void *a)
{
	(void)a;
	child_setup();
	orcu_call(&misuse_head, cb_wait_backlog);
	orcu_barrier();
	return 0;
}

/* A registered thread that exits inside a section: the report names what
 * happened, not a call the program never made. */
static void *exit_in_section_thread(void *a)
{
	(void)a;
	orcu_register_thread();
	orcu_read_lock();
	return NULL;
}

static int exit_in_section(void *a)
{
	pthread_t t;

	(void)a;
	child_setup();
	pthread_create(&t, NULL, exit_in_section_thread, NULL);
	pthread_join(t, NULL);
	return 0;
}

static void stall_handler_syncs(const struct orcu_stall_info *info, void *arg)
{
	(void)info;
	(void)arg;
	orcu_synchronize();   /* would wait for the GP it reports: aborts */
}

static atomic_int reader_in;

static void *long_reader(void *a)
{
	(void)a;
	orcu_register_thread();
	orcu_read_lock();
	atomic_store(&reader_in, 1);
	sleep_ms(30000);      /* the parent's child aborts long before */
	orcu_read_unlock();
	return NULL;
}

static int sync_in_stall_handler(void *a)
{
	pthread_t t;

	(void)a;
	child_setup();
	setenv("ORCU_STALL_MS", "100", 1);
	orcu_set_stall_handler(stall_handler_syncs, NULL);
	pthread_create(&t, NULL, long_reader, NULL);
	CHECK_WAIT_UNTIL(atomic_load(&reader_in), 10);
	orcu_synchronize();
	return 0;
}

static void stall_handler_shuts_down(const struct orcu_stall_info *info, void *arg)
{
	(void)info;
	(void)arg;
	orcu_shutdown();      /* would join the thread running it: aborts */
}

static int shutdown_in_stall_handler(void *a)
{
	pthread_t t;

	(void)a;
	child_setup();
	setenv("ORCU_STALL_MS", "100", 1);
	orcu_set_stall_handler(stall_handler_shuts_down, NULL);
	pthread_create(&t, NULL, long_reader, NULL);
	CHECK_WAIT_UNTIL(atomic_load(&reader_in), 10);
	orcu_synchronize();
	return 0;
}

/* A qsbr thread in a section of shared (not ORCU_QSBR) code. */
static int shutdown_in_qsbr_section(void *a)
{
	(void)a;
	child_setup();
	orcu_register_thread_qsbr();
	orcu_read_lock();
	orcu_shutdown();
	return 0;
}

static atomic_int qsbr_in_cb_ret = 1;

static void cb_register_qsbr(struct orcu_head *h)
{
	(void)h;
	atomic_store(&qsbr_in_cb_ret, orcu_register_thread_qsbr());
}

/* A callback on an offload thread registers that thread as qsbr: refused
 * (-EPERM, one line), and grace periods go on. */
static int qsbr_register_in_callback(void *a)
{
	(void)a;
	child_setup();
	setenv("ORCU_NOCBS", "all", 1);
	orcu_call(&misuse_head, cb_register_qsbr);
	orcu_barrier();
	orcu_synchronize();
	orcu_synchronize();
	return atomic_load(&qsbr_in_cb_ret) == -EPERM ? 0 : 2;
}

static int unlock_without_lock(void *a)
{
	(void)a;
	child_setup();
	orcu_register_thread();
	orcu_read_lock();
	orcu_read_unlock();
	orcu_read_unlock();
	return 0;
}

static int unlock_unregistered(void *a)
{
	(void)a;
	child_setup();
	orcu_synchronize();
	orcu_read_unlock();
	return 0;
}

static void nop_cb(struct orcu_head *h)
{
	(void)h;
}

static int double_call(void *a)
{
	(void)a;
	child_setup();
	setenv("ORCU_CHECK_CALLS", "1", 1);
	orcu_register_thread();
	/* Inside a section no GP can end: the first post is surely pending. */
	orcu_read_lock();
	orcu_call(&misuse_head, nop_cb);
	orcu_call(&misuse_head, nop_cb);
	return 0;
}

/* Control: the same sequence used correctly does not abort. */
static int double_call_ok(void *a)
{
	(void)a;
	child_setup();
	setenv("ORCU_CHECK_CALLS", "1", 1);
	orcu_register_thread();
	orcu_call(&misuse_head, nop_cb);
	orcu_barrier();
	orcu_call(&misuse_head, nop_cb);   /* reposting after it ran: fine */
	orcu_barrier();
	orcu_read_lock();
	orcu_read_unlock();
	orcu_synchronize();
	return 0;
}

static int init_after_use(void *a)
{
	(void)a;
	child_setup();
	orcu_synchronize();
	if (orcu_init(NULL) != -EBUSY)
		return 2;
	struct orcu_config cfg = { .nocb_stride = 1 };
	if (orcu_init(&cfg) != -EBUSY)
		return 3;
	orcu_synchronize();   /* still works */
	return 0;
}

static void expect_ok(const char *name, int (*fn)(void *), int max_lines)
{
	struct child_result r;

	run_child(fn, NULL, 30, &r);
	if (!WIFEXITED(r.status) || WEXITSTATUS(r.status) != 0 || r.lines > max_lines) {
		fprintf(stderr, "%s: expected a clean exit, got status %#x, stderr:\n%s\n",
			name, r.status, r.err);
		exit(1);
	}
	printf("%-22s -> ok%s%s", name, r.lines ? ", said: " : "\n", r.err);
}

int main(void)
{
	test_watchdog("test_misuse", 120);

	expect_child_abort("sync in section", sync_in_section, NULL, "orcu_synchronize");
	expect_child_abort("expedited in section", expedited_in_section, NULL, "orcu_synchronize_expedited");
	expect_child_abort("cond_sync in section", cond_sync_in_section, NULL, "orcu_cond_synchronize");
	expect_child_abort("barrier in section", barrier_in_section, NULL, "orcu_barrier");
	expect_child_abort("drain in section", drain_in_section, NULL, "orcu_drain");
	expect_child_abort("shutdown in section", shutdown_in_section, NULL, "orcu_shutdown");
	expect_child_abort("sync in callback", sync_in_callback, NULL, "orcu_synchronize");
	expect_child_abort("barrier in callback", barrier_in_callback, NULL, "orcu_barrier");
	expect_child_abort("wait_backlog in cb", wait_backlog_in_callback, NULL, "orcu_wait_backlog");
	expect_child_abort("exit in section", exit_in_section, NULL, "thread exit");
	expect_child_abort("sync in stall handler", sync_in_stall_handler, NULL, "orcu_synchronize");
	expect_child_abort("shutdown in stall hdlr", shutdown_in_stall_handler, NULL, "orcu_shutdown");
	expect_child_abort("shutdown in qsbr sect", shutdown_in_qsbr_section, NULL, "orcu_shutdown");
	expect_child_abort("unlock without lock", unlock_without_lock, NULL, "orcu_read_unlock");
	expect_child_abort("unlock unregistered", unlock_unregistered, NULL, "orcu_read_unlock");
	expect_child_abort("double orcu_call", double_call, NULL, "orcu_call");
	expect_ok("double_call control", double_call_ok, 0);
	expect_ok("qsbr reg in callback", qsbr_register_in_callback, 1);
	/* orcu_init after first use: -EBUSY (two warnings), not an abort. */
	expect_ok("init after use", init_after_use, 2);
	TEST_PASS("test_misuse");
}
