/*
 * test_membarrier_fallback.c - ORCU_NO_MEMBARRIER=1 (set with setenv before
 * the first orcu call) forces the full-fence read side:
 *  - exactly one line on stderr says so, naming membarrier, at first use;
 *    a shutdown and restart does not repeat it;
 *  - orcu__has_membarrier is 0 (the readers fence);
 *  - the GP guarantee holds for memb and qsbr readers under the age
 *    oracle (common_pipe.h).
 */
#include <orcu.h>

#include "common_pipe.h"

/* Run fn with stderr redirected to a temporary file; return what it wrote. */
static void capture_stderr(void (*fn)(void), char *out, size_t len)
{
	FILE *tmp = tmpfile();
	int saved = dup(2);
	size_t n;

	CHECK(tmp && saved >= 0);
	fflush(stderr);
	CHECK(dup2(fileno(tmp), 2) >= 0);
	fn();
	fflush(stderr);
	CHECK(dup2(saved, 2) >= 0);
	close(saved);
	rewind(tmp);
	n = fread(out, 1, len - 1, tmp);
	out[n] = '\0';
	fclose(tmp);
}

static int count_lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

static void first_use(void)
{
	CHECK_EQ(orcu_register_thread(), 0);
	orcu_synchronize();
}

static void restart(void)
{
	CHECK_EQ(orcu_shutdown(), 0);
	orcu_synchronize();
}

int main(void)
{
	char err[4096];

	test_watchdog("test_membarrier_fallback", 60);
	CHECK_EQ(setenv("ORCU_NO_MEMBARRIER", "1", 1), 0);

	capture_stderr(first_use, err, sizeof(err));
	fputs(err, stderr);
	CHECK_EQ(count_lines(err), 1);
	CHECK(strstr(err, "orcu: ") == err);
	CHECK(strstr(err, "membarrier") != NULL);
	CHECK_EQ(atomic_load(&orcu__has_membarrier), 0);
	orcu_unregister_thread();

	capture_stderr(restart, err, sizeof(err));
	fputs(err, stderr);
	CHECK_EQ(count_lines(err), 0);
	CHECK_EQ(atomic_load(&orcu__has_membarrier), 0);

	struct pipe_cfg cfg = {
		.memb_readers = 3,
		.qsbr_readers = 1,
		.call_writers = 2,
		.sync_writers = 1,
		.exp_writers = 1,
	};
	pipe_run_checked("no membarrier", &cfg, 3.0);
	TEST_PASS("test_membarrier_fallback");
}
