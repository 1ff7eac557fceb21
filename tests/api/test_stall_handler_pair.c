/*
 * test_stall_handler_pair.c - a stall handler is always called with its
 * own argument, even while another thread changes the handler: the two
 * are set together and read together (os.c, a sequence count).  They
 * were two plain globals, and a report could call one handler with the
 * other's argument (hundreds of times in 5 s; ThreadSanitizer reported
 * the race).  A reader holds its sections 3 ms with ORCU_STALL_MS=1, so
 * grace periods keep reporting stalls while a thread flips between two
 * (handler, argument) pairs for 2 s.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <orcu.h>

#include "common_pipe.h"

static int tag_a, tag_b;
static atomic_int stop, calls, torn;

static void h_a(const struct orcu_stall_info *info, void *arg)
{
	(void)info;
	atomic_fetch_add(&calls, 1);
	if (arg != &tag_a)
		atomic_fetch_add(&torn, 1);
}

static void h_b(const struct orcu_stall_info *info, void *arg)
{
	(void)info;
	atomic_fetch_add(&calls, 1);
	if (arg != &tag_b)
		atomic_fetch_add(&torn, 1);
}

static void *flipper(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		orcu_set_stall_handler(h_a, &tag_a);
		orcu_set_stall_handler(h_b, &tag_b);
	}
	return NULL;
}

static void *holder(void *arg)
{
	(void)arg;
	CHECK_EQ(orcu_register_thread(), 0);
	while (!atomic_load(&stop)) {
		orcu_read_lock();
		sleep_ms(3);
		orcu_read_unlock();
	}
	orcu_unregister_thread();
	return NULL;
}

int main(void)
{
	pthread_t f, h;
	double end;

	test_watchdog("test_stall_handler_pair", 120);
	setenv("ORCU_STALL_MS", "1", 1);
	orcu_set_stall_handler(h_a, &tag_a);
	CHECK_EQ(pthread_create(&h, NULL, holder, NULL), 0);
	CHECK_EQ(pthread_create(&f, NULL, flipper, NULL), 0);
	end = check_now_s() + 2.0;
	while (check_now_s() < end || atomic_load(&calls) < 20)
		orcu_synchronize();
	atomic_store(&stop, 1);
	CHECK_EQ(pthread_join(f, NULL), 0);
	CHECK_EQ(pthread_join(h, NULL), 0);
	orcu_set_stall_handler(NULL, NULL);
	printf("%d stall reports while the handler changed, %d with the other handler's argument\n",
	       atomic_load(&calls), atomic_load(&torn));
	CHECK_EQ(atomic_load(&torn), 0);
	TEST_PASS("test_stall_handler_pair");
}
