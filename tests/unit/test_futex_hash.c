/*
 * test_futex_hash.c - many library threads get a futex hash to match
 * (os.c, futex_hash_fit()).  Since Linux 6.17 a process hashes its private
 * futexes into a table the kernel sizes from min(threads, CPUs): 16
 * buckets on a 2-CPU machine, so 4100 offload threads shared ~260 per
 * bucket and every wake walked one.  In forked children, 64 online
 * virtual slots (1 GP thread + 8 leaders + 64 followers):
 *  - default: the table holds at least 4 buckets per library thread;
 *  - ORCU_FUTEX_HASH=0: orcu leaves it at what the kernel chose, which is
 *    never above 4 per CPU;
 *  - ORCU_FUTEX_HASH=2: one line naming the variable, and the default.
 * On a kernel without a private futex hash (before 6.16: the prctl fails)
 * there is nothing to size: the test says so and passes.
 */
#include <orcu.h>

#include <sys/prctl.h>

#include "common_pipe.h"

#ifndef PR_FUTEX_HASH
#define PR_FUTEX_HASH 78
#define PR_FUTEX_HASH_GET_SLOTS 2
#endif

static long hash_slots(void)
{
	return prctl(PR_FUTEX_HASH, PR_FUTEX_HASH_GET_SLOTS, 0, 0, 0);
}

struct hash_case {
	const char *value;   /* ORCU_FUTEX_HASH, NULL: unset */
	bool sized;          /* orcu sizes the table */
};

static int hash_child(void *arg)
{
	const struct hash_case *c = arg;
	long threads, slots, cpus = sysconf(_SC_NPROCESSORS_ONLN), auto_max = 16;

	if (c->value)
		setenv("ORCU_FUTEX_HASH", c->value, 1);
	setenv("ORCU_CPUS", "possible=64,online=0-63", 1);
	setenv("ORCU_NOCBS", "all", 1);
	orcu_barrier();                  /* starts the library's threads */
	CHECK_WAIT_UNTIL(orcu_debug_thread_count() == 73, 30);
	threads = orcu_debug_thread_count();
	slots = hash_slots();
	if (slots < 0)
		return 10;
	printf("ORCU_FUTEX_HASH=%s: %ld library threads, %ld futex hash slots\n",
	       c->value ? c->value : "(unset)", threads, slots);
	fflush(stdout);
	while (auto_max < 4 * cpus)
		auto_max *= 2;
	if (c->sized && slots < 4 * threads)
		return 2;
	if (!c->sized && slots > auto_max)
		return 3;
	return orcu_shutdown() == 0 ? 0 : 4;
}

int main(void)
{
	const struct hash_case cases[] = {
		{ NULL, true },
		{ "0", false },
		{ "2", true },
	};
	struct child_result r;

	test_watchdog("test_futex_hash", 120);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct hash_case *c = &cases[i];

		run_child(hash_child, (void *)c, 60, &r);
		printf("-> exit %d, %d line(s)%s%s", WIFEXITED(r.status) ? WEXITSTATUS(r.status) : -1,
		       r.lines, r.lines ? ": " : "\n", r.err);
		CHECK(WIFEXITED(r.status));
		if (WEXITSTATUS(r.status) == 10) {
			printf("kernel without a private futex hash: nothing to size\n");
			break;
		}
		CHECK_EQ(WEXITSTATUS(r.status), 0);
		if (c->value && strcmp(c->value, "2") == 0) {
			CHECK_EQ(r.lines, 1);
			CHECK(strstr(r.err, "ORCU_FUTEX_HASH") != NULL);
		} else {
			CHECK_EQ(r.lines, 0);
		}
	}
	TEST_PASS("test_futex_hash");
}
