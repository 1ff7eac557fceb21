/*
 * test_auto_unregister.c - a registered thread that exits without calling
 * orcu_unregister_thread() is unregistered automatically.  The probe is a
 * grace period that would hang otherwise (bounded by CHECK_WAIT_UNTIL and
 * the watchdog):
 *  - a qsbr thread exits while online, without a quiescent state since
 *    the last GP began: if its record stayed, no later GP could end;
 *  - a qsbr thread exits while a GP is already waiting for it: the waiting
 *    orcu_synchronize (in another thread) must complete;
 *  - a memb thread leaves its section and exits while a GP waits for it;
 *  - many short-lived threads of both kinds come and go while a writer
 *    runs GPs back to back (registration races with the reader scan).
 */
#include <orcu.h>

#include "common_pipe.h"

static atomic_int sync_done;

static void *syncer(void *arg)
{
	(void)arg;
	orcu_synchronize();
	atomic_store(&sync_done, 1);
	return NULL;
}

/* Synchronize in a helper thread and wait for it, bounded. */
static void bounded_synchronize(const char *why)
{
	pthread_t t;

	atomic_store(&sync_done, 0);
	CHECK_EQ(pthread_create(&t, NULL, syncer, NULL), 0);
	double deadline = check_now_s() + check_timeout_s(10);
	while (!atomic_load(&sync_done)) {
		if (check_now_s() > deadline) {
			fprintf(stderr, "orcu_synchronize did not complete: %s\n", why);
			exit(1);
		}
		sleep_ms(1);
	}
	CHECK_EQ(pthread_join(t, NULL), 0);
}

static void *qsbr_exit_online(void *arg)
{
	(void)arg;
	CHECK_EQ(orcu_register_thread_qsbr(), 0);
	orcu_quiescent_state();
	/* Exit online, registered, announcing nothing more. */
	return NULL;
}

static void *memb_exit(void *arg)
{
	(void)arg;
	CHECK_EQ(orcu_register_thread(), 0);
	orcu_read_lock();
	orcu_read_unlock();
	return NULL;
}

/* Phase 2/3: a reader the GP is waiting on, then exits. */
static atomic_int holder_state;   /* 1 holding, 2 told to go */

static void *holder(void *arg)
{
	int memb = (int)(uintptr_t)arg;

	if (memb) {
		CHECK_EQ(orcu_register_thread(), 0);
		orcu_read_lock();
	} else {
		CHECK_EQ(orcu_register_thread_qsbr(), 0);
	}
	atomic_store(&holder_state, 1);
	while (atomic_load(&holder_state) != 2)
		sleep_ms(1);
	if (memb)
		orcu_read_unlock();
	/* qsbr: exits online; memb: exits outside its section. */
	return NULL;
}

static void gp_waits_then_reader_exits(int memb)
{
	pthread_t h, s;

	atomic_store(&holder_state, 0);
	atomic_store(&sync_done, 0);
	CHECK_EQ(pthread_create(&h, NULL, holder, (void *)(uintptr_t)memb), 0);
	CHECK_WAIT_UNTIL(atomic_load(&holder_state) == 1, 10);
	CHECK_EQ(pthread_create(&s, NULL, syncer, NULL), 0);
	sleep_ms(200);
	/* The reader holds it: the GP must not have ended. */
	CHECK_EQ(atomic_load(&sync_done), 0);
	atomic_store(&holder_state, 2);
	CHECK_EQ(pthread_join(h, NULL), 0);
	CHECK_WAIT_UNTIL(atomic_load(&sync_done) == 1, 10);
	CHECK_EQ(pthread_join(s, NULL), 0);
}

static atomic_int churn_stop;

static void *churn_writer(void *arg)
{
	long n = 0;

	(void)arg;
	while (!atomic_load(&churn_stop)) {
		orcu_synchronize();
		n++;
	}
	return (void *)(uintptr_t)n;
}

int main(void)
{
	pthread_t t;

	test_watchdog("test_auto_unregister", 60);
	orcu_synchronize();

	/* 1: qsbr thread exits online. */
	CHECK_EQ(pthread_create(&t, NULL, qsbr_exit_online, NULL), 0);
	CHECK_EQ(pthread_join(t, NULL), 0);
	bounded_synchronize("a qsbr thread that exited online is still registered");

	CHECK_EQ(pthread_create(&t, NULL, memb_exit, NULL), 0);
	CHECK_EQ(pthread_join(t, NULL), 0);
	bounded_synchronize("after a memb thread exited");

	/* 2, 3: the GP is already waiting when the reader exits. */
	gp_waits_then_reader_exits(0);
	gp_waits_then_reader_exits(1);

	/* 4: churn. */
	pthread_t w;
	CHECK_EQ(pthread_create(&w, NULL, churn_writer, NULL), 0);
	for (int round = 0; round < 100; round++) {
		pthread_t th[8];

		for (int i = 0; i < 8; i++)
			CHECK_EQ(pthread_create(&th[i], NULL,
						i % 2 ? memb_exit : qsbr_exit_online, NULL), 0);
		for (int i = 0; i < 8; i++)
			CHECK_EQ(pthread_join(th[i], NULL), 0);
	}
	atomic_store(&churn_stop, 1);
	void *gps;
	CHECK_EQ(pthread_join(w, &gps), 0);
	printf("churn: %lu grace periods while 800 threads came and went\n",
	       (unsigned long)(uintptr_t)gps);
	CHECK((uintptr_t)gps > 0);
	bounded_synchronize("after the churn");
	TEST_PASS("test_auto_unregister");
}
