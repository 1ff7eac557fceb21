/*
 * event_loop.c - an event-loop server thread that is a qsbr reader and
 * blocks in epoll_wait() without holding grace periods.
 *
 * A qsbr thread is inside a read-side section whenever it is online, so
 * a loop that blocks online holds every grace period until its next
 * event (forever, on a quiet socket).  The loop goes offline around the
 * wait and online after it; everything it does between two waits reads
 * the published table for free (ORCU_QSBR: orcu_read_lock() compiles to
 * nothing).  orcu_thread_offline() and orcu_thread_online() leave errno
 * as they found it, so epoll_wait()'s errno is still there to read.
 *
 * The check: the updater replaces the table and calls orcu_synchronize()
 * while the loop thread is blocked in epoll_wait(): nothing is written to
 * the loop's descriptors until orcu_synchronize() has returned, and the
 * loop counts its wake-ups, so the grace period cannot have waited for
 * the loop to wake.  A watchdog fails the example with one line if the
 * grace period does not end within 60 seconds.
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
#include <sys/epoll.h>
#include <unistd.h>

struct table {
	struct orcu_head rcu;
	unsigned long version;
};

static struct table *live;             /* published with orcu_xchg_pointer */
static int request_fd[2], reply_fd[2]; /* pipes: updater -> loop -> updater */
static atomic_int loop_wakeups;        /* epoll_wait() returns, counted by the loop */
#define QUIT UINT64_C(1000)            /* a request value that ends the loop */

static void die(const char *what)
{
	fprintf(stderr, "event_loop: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* One event: answer each request with the version of the table it saw. */
static int serve(int fd)
{
	uint64_t req, answer;
	const struct table *t;

	if (read(fd, &req, sizeof(req)) != sizeof(req))
		die("read request");
	orcu_read_lock(); /* nothing here: the thread is online, so it reads */
	t = orcu_dereference(live);
	answer = t->version;
	orcu_read_unlock();
	if (write(reply_fd[1], &answer, sizeof(answer)) != sizeof(answer))
		die("write reply");
	return req >= QUIT;
}

static void *loop_main(void *arg)
{
	int ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = request_fd[0] }, got[8];
	int quit = 0;

	(void)arg;
	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, request_fd[0], &ev) < 0)
		die("epoll");
	if (orcu_register_thread_qsbr() != 0)
		die("orcu_register_thread_qsbr");
	while (!quit) {
		int n;

		/* Blocking: let grace periods go on without us. */
		orcu_thread_offline();
		n = epoll_wait(ep, got, 8, -1);
		orcu_thread_online();
		atomic_fetch_add(&loop_wakeups, 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			die("epoll_wait");
		for (int i = 0; i < n; i++)
			quit |= serve(got[i].data.fd);
		/* A loop that never blocks announces a quiescent state
		 * here instead, once per pass. */
	}
	orcu_thread_offline();
	orcu_unregister_thread();
	close(ep);
	return NULL;
}

static uint64_t ask(uint64_t req)
{
	uint64_t answer;

	if (write(request_fd[1], &req, sizeof(req)) != sizeof(req) ||
	    read(reply_fd[0], &answer, sizeof(answer)) != sizeof(answer))
		die("request");
	return answer;
}

static void grace_period_held(int sig)
{
	static const char msg[] = "event_loop: FAIL: orcu_synchronize() waited 60 s "
				  "for a loop thread blocked in epoll_wait()\n";

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
	pthread_t loop;
	int before;

	if (pipe2(request_fd, O_CLOEXEC) < 0 || pipe2(reply_fd, O_CLOEXEC) < 0)
		die("pipe2");
	orcu_assign_pointer(live, table_new(1));
	/* The watchdog's signal goes to this thread, never to the loop. */
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &alrm, &prev);
	if (pthread_create(&loop, NULL, loop_main, NULL) != 0)
		die("pthread_create");
	pthread_sigmask(SIG_SETMASK, &prev, NULL);
	signal(SIGALRM, grace_period_held);

	if (ask(1) != 1) {
		fprintf(stderr, "event_loop: FAIL: first answer is not version 1\n");
		return 1;
	}
	/* The loop has answered and nothing more is written: it is, or is
	 * about to be, blocked in epoll_wait() until the next request. */
	before = atomic_load(&loop_wakeups);
	old = orcu_xchg_pointer(&live, table_new(2));
	alarm(60);
	orcu_synchronize();
	alarm(0);
	if (atomic_load(&loop_wakeups) != before) {
		fprintf(stderr, "event_loop: FAIL: the loop woke during the grace period\n");
		return 1;
	}
	free(old); /* no reader can hold it: the grace period ended */
	printf("grace period ended while the loop thread was blocked in epoll_wait()\n");

	if (ask(2) != 2 || ask(QUIT) != 2) {
		fprintf(stderr, "event_loop: FAIL: the loop does not see version 2\n");
		return 1;
	}
	pthread_join(loop, NULL);
	free(orcu_xchg_pointer(&live, NULL));
	printf("event_loop: OK\n");
	return 0;
}
