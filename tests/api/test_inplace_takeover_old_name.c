/*
 * test_inplace_takeover_old_name - ORCU_INPLACE_TAKEOVER_MS is the bound
 * after which the GP thread takes what an in-place slot's application
 * threads left; its old name, ORCU_INLINE_TAKEOVER_MS, still works, with
 * exactly one line saying it is deprecated.  The new name wins when both
 * are set, and says nothing.
 */
#include <orcu.h>

#include "common_pipe.h"
#include "os.h"

static int with_env(void *arg)
{
	const char *vars = arg;

	if (strchr(vars, 'o'))
		setenv("ORCU_INLINE_TAKEOVER_MS", "1234", 1);
	if (strchr(vars, 'n'))
		setenv("ORCU_INPLACE_TAKEOVER_MS", "4321", 1);
	setenv("ORCU_NOCBS", "none", 1);
	if (orcu_init(NULL) != 0)
		return 2;
	printf("%ld\n", orcu__g.inline_takeover_ms);
	return (int)(orcu__g.inline_takeover_ms % 100);
}

int main(void)
{
	struct child_result r;

	test_watchdog("test_inplace_takeover_old_name", 120);
	run_child(with_env, "o", 30, &r);
	printf("old name: exit %d, said: %s", WEXITSTATUS(r.status), r.err);
	CHECK(WIFEXITED(r.status));
	CHECK_EQ(WEXITSTATUS(r.status), 1234 % 100);
	CHECK_EQ(r.lines, 1);
	CHECK(strstr(r.err, "ORCU_INLINE_TAKEOVER_MS is deprecated") != NULL);

	run_child(with_env, "on", 30, &r);
	CHECK(WIFEXITED(r.status));
	CHECK_EQ(WEXITSTATUS(r.status), 4321 % 100);
	CHECK_EQ(r.lines, 0);

	run_child(with_env, "n", 30, &r);
	CHECK(WIFEXITED(r.status));
	CHECK_EQ(WEXITSTATUS(r.status), 4321 % 100);
	CHECK_EQ(r.lines, 0);
	TEST_PASS("test_inplace_takeover_old_name");
}
