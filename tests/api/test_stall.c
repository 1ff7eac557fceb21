/*
 * test_stall - stall warnings (DESIGN 6): a reader that sleeps inside its
 * read-side critical section while another thread waits in
 * orcu_synchronize() is named by a report once the GP is older than
 * ORCU_STALL_MS=200: tid, the name set with pthread_setname_np, flavor.
 *  1. default report: one line on stderr (captured into a file) naming
 *     the memb reader "stall-memb" with its tid and nesting 2;
 *  2. orcu_set_stall_handler(): the handler gets the same facts, stderr
 *     gets nothing; a qsbr reader that stops announcing is named as qsbr.
 * The reader is released as soon as the report is seen (no timing guess).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <orcu.h>

#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "check.h"

static atomic_int reader_tid, reader_in, reader_release, sync_done;
static int use_qsbr;

static void *stuck_reader(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), use_qsbr ? "stall-qsbr" : "stall-memb");
	if (use_qsbr) {
		CHECK_EQ(orcu_register_thread_qsbr(), 0);
	} else {
		CHECK_EQ(orcu_register_thread(), 0);
		orcu_read_lock();
		orcu_read_lock();
	}
	atomic_store(&reader_tid, (int)syscall(SYS_gettid));
	atomic_store(&reader_in, 1);
	while (!atomic_load(&reader_release)) {
		struct timespec ts = { 0, 1000000 };
		nanosleep(&ts, NULL);   /* inside the section / no QS announced */
	}
	if (!use_qsbr) {
		orcu_read_unlock();
		orcu_read_unlock();
	} else {
		orcu_quiescent_state();
	}
	orcu_unregister_thread();
	return NULL;
}

static void *syncer(void *arg)
{
	(void)arg;
	orcu_synchronize();
	atomic_store(&sync_done, 1);
	return NULL;
}

/* The handler variant's view of the first report. */
static pthread_mutex_t h_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int h_calls;
static struct orcu_stall_info h_info;
static void *h_arg_seen;

static void handler(const struct orcu_stall_info *info, void *arg)
{
	pthread_mutex_lock(&h_lock);
	if (atomic_load(&h_calls) == 0) {
		h_info = *info;
		h_arg_seen = arg;
	}
	atomic_fetch_add(&h_calls, 1);
	pthread_mutex_unlock(&h_lock);
}

static void stall_once(bool qsbr, bool (*reported)(void))
{
	pthread_t rt, st;

	use_qsbr = qsbr;
	atomic_store(&reader_in, 0);
	atomic_store(&reader_release, 0);
	atomic_store(&sync_done, 0);
	CHECK_EQ(pthread_create(&rt, NULL, stuck_reader, NULL), 0);
	CHECK_WAIT_UNTIL(atomic_load(&reader_in), 10);
	CHECK_EQ(pthread_create(&st, NULL, syncer, NULL), 0);
	CHECK_WAIT_UNTIL(reported(), 20);
	CHECK_EQ(atomic_load(&sync_done), 0);   /* still held by the reader */
	atomic_store(&reader_release, 1);
	pthread_join(rt, NULL);
	CHECK_WAIT_UNTIL(atomic_load(&sync_done), 20);
	pthread_join(st, NULL);
}

static char errbuf[16384];
static int errfd;
static const char *read_err(void)
{
	ssize_t n = pread(errfd, errbuf, sizeof(errbuf) - 1, 0);

	errbuf[n > 0 ? n : 0] = '\0';
	return errbuf;
}

static bool stderr_reported(void)
{
	return strstr(read_err(), "stall") && strchr(errbuf, '\n');
}

static bool handler_reported(void)
{
	return atomic_load(&h_calls) > 0;
}

int main(void)
{
	char path[64], want[96];
	struct orcu_stats stats;
	int saved_err, tid, lines = 0, named = 0;
	const char *err, *p;

	setenv("ORCU_STALL_MS", "200", 1);
	CHECK_EQ(orcu_init(NULL), 0);

	/* 1. The default report, on a captured stderr. */
	snprintf(path, sizeof(path), "/tmp/orcu-test-stall-%d.err", (int)getpid());
	errfd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	CHECK(errfd >= 0);
	unlink(path);
	saved_err = dup(2);
	CHECK(dup2(errfd, 2) == 2);
	stall_once(false, stderr_reported);
	dup2(saved_err, 2);
	err = read_err();
	tid = atomic_load(&reader_tid);
	fprintf(stderr, "captured: %s", err);
	snprintf(want, sizeof(want), "tid %d \"stall-memb\" memb nesting 2", tid);
	for (p = err; *p; p++)
		lines += *p == '\n';
	for (p = err; (p = strstr(p, want)); p++)
		named++;
	/* Every line is a stall report naming our reader; at least one.
	 * (A machine stalled past twice the threshold may repeat it.) */
	CHECK(lines >= 1);
	CHECK_EQ(named, lines);
	CHECK(strncmp(err, "orcu: stall:", 12) == 0);
	orcu_get_stats(&stats);
	CHECK_EQ(stats.stalls_reported, lines);

	/* 2. The handler, memb then qsbr; stderr stays silent. */
	orcu_set_stall_handler(handler, &h_calls);
	ftruncate(errfd, 0);
	CHECK(dup2(errfd, 2) == 2);
	stall_once(false, handler_reported);
	dup2(saved_err, 2);
	CHECK_EQ(strlen(read_err()), 0);
	pthread_mutex_lock(&h_lock);
	CHECK(h_arg_seen == &h_calls);
	CHECK(h_info.waited_ms >= 200);
	CHECK_EQ(h_info.nr_readers, 1);
	CHECK_EQ(h_info.readers[0].tid, atomic_load(&reader_tid));
	CHECK(strcmp(h_info.readers[0].name, "stall-memb") == 0);
	CHECK(strcmp(h_info.readers[0].flavor, "memb") == 0);
	CHECK_EQ(h_info.readers[0].nesting, 2);
	atomic_store(&h_calls, 0);
	pthread_mutex_unlock(&h_lock);

	stall_once(true, handler_reported);
	pthread_mutex_lock(&h_lock);
	CHECK_EQ(h_info.nr_readers, 1);
	CHECK_EQ(h_info.readers[0].tid, atomic_load(&reader_tid));
	CHECK(strcmp(h_info.readers[0].name, "stall-qsbr") == 0);
	CHECK(strcmp(h_info.readers[0].flavor, "qsbr") == 0);
	pthread_mutex_unlock(&h_lock);

	orcu_set_stall_handler(NULL, NULL);
	close(errfd);
	CHECK_EQ(orcu_shutdown(), 0);
	TEST_PASS("stall");
}
