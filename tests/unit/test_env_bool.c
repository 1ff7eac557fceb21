/*
 * test_env_bool.c - orcu__env_bool(), the reader of the boolean ORCU_*
 * variables: "0" and "1" are taken; unset gives the default silently; any
 * other text gives the default and one line naming the variable and the
 * text, and for ORCU_CHECK_CALLS and ORCU_NO_MEMBARRIER only once per
 * process, however often the library reads them (configuration reads
 * both once, their users again).  Each case is a forked child.
 */
#include <orcu.h>

#include "common_pipe.h"
#include "config.h"

struct bool_case {
	const char *name, *value;   /* value NULL: unset */
	int def, want, reads, lines;
};

static int bool_child(void *arg)
{
	const struct bool_case *c = arg;

	if (c->value)
		setenv(c->name, c->value, 1);
	else
		unsetenv(c->name);
	for (int i = 0; i < c->reads; i++)
		if (orcu__env_bool(c->name, c->def) != c->want)
			return 2;
	return 0;
}

int main(void)
{
	const struct bool_case cases[] = {
		{ "ORCU_CHECK_CALLS", NULL, 0, 0, 3, 0 },
		{ "ORCU_CHECK_CALLS", "1", 0, 1, 3, 0 },
		{ "ORCU_CHECK_CALLS", "0", 1, 0, 3, 0 },
		{ "ORCU_CHECK_CALLS", "yes", 0, 0, 3, 1 },
		{ "ORCU_NO_MEMBARRIER", "true", 0, 0, 3, 1 },
		{ "ORCU_NO_MEMBARRIER", "", 0, 0, 3, 1 },
		{ "ORCU_TEST_SOME_FLAG", "2", 1, 1, 1, 1 },
	};

	test_watchdog("test_env_bool", 60);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct bool_case *c = &cases[i];
		struct child_result r;

		run_child(bool_child, (void *)c, 30, &r);
		printf("%s=%s read %d times -> exit %d, %d line(s)%s%s", c->name,
		       c->value ? c->value : "(unset)", c->reads,
		       WIFEXITED(r.status) ? WEXITSTATUS(r.status) : -1, r.lines,
		       r.lines ? ": " : "\n", r.err);
		CHECK(WIFEXITED(r.status));
		CHECK_EQ(WEXITSTATUS(r.status), 0);
		CHECK_EQ(r.lines, c->lines);
		if (c->lines) {
			char want[96];

			snprintf(want, sizeof(want), "orcu: %s=\"%s\" ignored: expected 0 or 1",
				 c->name, c->value);
			CHECK(strncmp(r.err, want, strlen(want)) == 0);
		}
	}
	TEST_PASS("test_env_bool");
}
