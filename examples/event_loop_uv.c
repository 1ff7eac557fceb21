/*
 * event_loop_uv.c - event_loop.c's server thread on a libuv loop: a qsbr
 * reader that goes offline in a uv_prepare_t (run right before the loop
 * polls for I/O) and online in a uv_check_t (run right after), so it
 * holds no grace period while uv_run() blocks, and runs every callback
 * of the loop online, reading the published table for free.
 *
 * The check, as in event_loop.c: the updater replaces the table and
 * calls orcu_synchronize() while the loop is blocked in its poll; nothing
 * wakes the loop until orcu_synchronize() has returned, and the check
 * handle counts the loop's wake-ups (a reply leaves from the prepare
 * handle, so the count read after it is the one before the next poll).  A watchdog fails the example with
 * one line if the grace period does not end within 60 seconds.  Built
 * when libuv's headers are installed (libuv1-dev).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#define ORCU_QSBR
#include <orcu.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

struct table {
	struct orcu_head rcu;
	unsigned long version;
};

static struct table *live; /* published with orcu_xchg_pointer */
static uv_loop_t loop;
static uv_prepare_t before_poll;
static uv_check_t after_poll;
static uv_async_t request;
static _Atomic uint64_t request_value; /* what the updater asks */
static int reply_fd[2];                /* loop -> updater */
static atomic_int loop_wakeups;        /* polls returned, counted by the check handle */
static pthread_mutex_t started_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t started_cond = PTHREAD_COND_INITIALIZER;
static int started;
static uint64_t reply;  /* the loop thread's: the answer not yet sent */
static int reply_ready; /* the loop thread's */
#define QUIT UINT64_C(1000)

static void die(const char *what)
{
	fprintf(stderr, "event_loop_uv: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void send_answer(void)
{
	if (write(reply_fd[1], &reply, sizeof(reply)) != sizeof(reply))
		die("write reply");
	reply_ready = 0;
}

/* The reply leaves here, once the thread is offline and about to poll:
 * the updater that reads it knows the loop is no longer online. */
static void go_offline(uv_prepare_t *h)
{
	(void)h;
	orcu_thread_offline();
	if (reply_ready)
		send_answer();
}

static void go_online(uv_check_t *h)
{
	(void)h;
	orcu_thread_online();
	atomic_fetch_add(&loop_wakeups, 1);
}

/* A request: answer with the version of the table this loop sees. */
static void serve(uv_async_t *h)
{
	(void)h;
	orcu_read_lock(); /* nothing here: the thread is online, so it reads */
	reply = orcu_dereference(live)->version;
	orcu_read_unlock();
	reply_ready = 1;
	if (atomic_load(&request_value) >= QUIT) {
		uv_close((uv_handle_t *)&before_poll, NULL);
		uv_close((uv_handle_t *)&after_poll, NULL);
		uv_close((uv_handle_t *)&request, NULL);
		send_answer();
	}
}

static void *loop_main(void *arg)
{
	(void)arg;
	if (orcu_register_thread_qsbr() != 0)
		die("orcu_register_thread_qsbr");
	if (uv_loop_init(&loop) || uv_prepare_init(&loop, &before_poll) ||
	    uv_check_init(&loop, &after_poll) || uv_async_init(&loop, &request, serve))
		die("uv init");
	uv_prepare_start(&before_poll, go_offline);
	uv_check_start(&after_poll, go_online);
	/* Only the request handle keeps the loop alive. */
	uv_unref((uv_handle_t *)&before_poll);
	uv_unref((uv_handle_t *)&after_poll);
	pthread_mutex_lock(&started_lock);
	started = 1;
	pthread_cond_signal(&started_cond);
	pthread_mutex_unlock(&started_lock);
	uv_run(&loop, UV_RUN_DEFAULT);
	uv_loop_close(&loop);
	orcu_thread_offline();
	orcu_unregister_thread();
	return NULL;
}

static uint64_t ask(uint64_t req)
{
	uint64_t answer;

	atomic_store(&request_value, req);
	if (uv_async_send(&request) != 0 || read(reply_fd[0], &answer, sizeof(answer)) != sizeof(answer))
		die("request");
	return answer;
}

static void grace_period_held(int sig)
{
	static const char msg[] = "event_loop_uv: FAIL: orcu_synchronize() waited 60 s "
				  "for a loop thread blocked in uv_run()\n";

	(void)sig;
	if (write(2, msg, sizeof(msg) - 1) < 0)
		_exit(2);
	_exit(1);
}

static struct table *table_new(unsigned long version)
{
	struct table *t = calloc(1, sizeof(*t));

	if (!t)
		die("calloc");
	t->version = version;
	return t;
}

int main(void)
{
	struct table *old;
	sigset_t alrm, prev;
	pthread_t thr;
	int before;

	if (pipe2(reply_fd, O_CLOEXEC) < 0)
		die("pipe2");
	orcu_assign_pointer(live, table_new(1));
	/* The watchdog's signal goes to this thread, never to the loop. */
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &alrm, &prev);
	if (pthread_create(&thr, NULL, loop_main, NULL) != 0)
		die("pthread_create");
	pthread_sigmask(SIG_SETMASK, &prev, NULL);
	signal(SIGALRM, grace_period_held);
	pthread_mutex_lock(&started_lock);
	while (!started)
		pthread_cond_wait(&started_cond, &started_lock);
	pthread_mutex_unlock(&started_lock);

	if (ask(1) != 1) {
		fprintf(stderr, "event_loop_uv: FAIL: first answer is not version 1\n");
		return 1;
	}
	/* Answered from the prepare handle, and nothing more is sent: the
	 * loop is offline and blocked, or about to block, in its poll until
	 * the next request. */
	before = atomic_load(&loop_wakeups);
	old = orcu_xchg_pointer(&live, table_new(2));
	alarm(60);
	orcu_synchronize();
	alarm(0);
	if (atomic_load(&loop_wakeups) != before) {
		fprintf(stderr, "event_loop_uv: FAIL: the loop woke during the grace period\n");
		return 1;
	}
	free(old); /* no reader can hold it: the grace period ended */
	printf("grace period ended while the libuv loop thread was blocked in its poll\n");

	if (ask(2) != 2 || ask(QUIT) != 2) {
		fprintf(stderr, "event_loop_uv: FAIL: the loop does not see version 2\n");
		return 1;
	}
	pthread_join(thr, NULL);
	free(orcu_xchg_pointer(&live, NULL));
	printf("event_loop_uv: OK\n");
	return 0;
}
