/*
 * test_thread_online.c - orcu_read_ongoing() in an ORCU_QSBR unit answers
 * as liburcu-qsbr does (true while the qsbr thread is online, false once
 * it is offline or unregistered), and orcu_thread_is_online() for every
 * kind of thread: unregistered, memb, qsbr online and offline.
 */
#define ORCU_QSBR
#include <orcu.h>

#include <pthread.h>

#include "check.h"

static void *memb_thread(void *arg)
{
	(void)arg;
	CHECK(!orcu_thread_is_online());          /* not registered */
	CHECK_EQ(orcu_register_thread(), 0);
	CHECK(orcu_thread_is_online());           /* memb: registered = online */
	orcu_thread_offline();                    /* a no-op for memb */
	CHECK(orcu_thread_is_online());
	orcu_unregister_thread();
	CHECK(!orcu_thread_is_online());
	return NULL;
}

int main(void)
{
	pthread_t t;

	CHECK(!orcu_read_ongoing());              /* unregistered */
	CHECK(!orcu_thread_is_online());
	CHECK_EQ(orcu_register_thread_qsbr(), 0);
	CHECK(orcu_read_ongoing());               /* online from registration */
	CHECK(orcu_thread_is_online());
	orcu_read_lock();
	CHECK(orcu_read_ongoing());
	orcu_read_unlock();
	orcu_quiescent_state();
	CHECK(orcu_read_ongoing());               /* still online after a QS */
	orcu_thread_offline();
	CHECK(!orcu_read_ongoing());
	CHECK(!orcu_thread_is_online());
	orcu_synchronize();                       /* offline caller: fine */
	CHECK(!orcu_read_ongoing());              /* and left offline */
	orcu_thread_online();
	CHECK(orcu_read_ongoing());
	orcu_synchronize();                       /* online caller: back online after */
	CHECK(orcu_read_ongoing());
	CHECK_EQ(pthread_create(&t, NULL, memb_thread, NULL), 0);
	CHECK_EQ(pthread_join(t, NULL), 0);
	orcu_unregister_thread();
	CHECK(!orcu_read_ongoing());
	CHECK(!orcu_thread_is_online());
	TEST_PASS("test_thread_online");
}
