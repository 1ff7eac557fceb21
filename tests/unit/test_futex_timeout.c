/*
 * test_futex_timeout.c - a futex wait with a timeout under a second waits
 * that long (os.c, orcu__futex_wait()).  On a 32-bit build with a 64-bit
 * time_t (-D_TIME_BITS=64, as Debian builds armhf; make cross builds
 * armhf so) the old futex call read the first half of tv_sec as tv_nsec:
 * a 300 ms wait returned at once, and every timed sleep of the library
 * spun.  The word never changes, so only the timeout ends each wait.
 */
#include <errno.h>
#include <time.h>

#include "check.h"
#include "os.h"

int main(void)
{
	_Atomic uint32_t word = 0;

	test_watchdog("test_futex_timeout", 60);
	printf("time_t: %zu bytes, long: %zu bytes\n", sizeof(time_t), sizeof(long));
	for (int i = 0; i < 3; i++) {
		double t0 = check_now_s(), waited;
		int ret = orcu__futex_wait(&word, 0, 300 * 1000000LL);

		waited = check_now_s() - t0;
		printf("wait %d: %d after %.3f s (asked 0.300 s)\n", i, ret, waited);
		/* EINTR is a spurious wake (every sleeper loops); none here. */
		CHECK_EQ(ret, -ETIMEDOUT);
		CHECK(waited >= 0.25);
	}
	return 0;
}
