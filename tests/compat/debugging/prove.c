/*
 * prove.c - a user's program with the read-side checks of <orcu.h>
 * (built with -DORCU_PROVE, and without it, against an installed orcu by
 * tests/compat/debugging.sh).  argv[1] names one case: the bugs
 * (lines marked BUG:<case>) each print one line naming this file and that
 * line, then abort; the legal forms (case "legal") print nothing.
 */
#include <orcu.h>

#include <pthread.h>
#include <stdio.h>
#include <string.h>

struct cfg {
	int value;
};

static struct cfg one = { 1 };
static struct cfg *live = &one;
static pthread_mutex_t update_lock = PTHREAD_MUTEX_INITIALIZER;
static int locked;              /* update_lock is held: the lockdep of this program */

static int legal(void)
{
	int sum = 0, want = 4;

#ifndef ORCU_QSBR
	/* memb, inside a section: both forms (an ORCU_QSBR unit promises
	 * its sections run on qsbr threads only). */
	if (orcu_register_thread())
		return -1;
	orcu_read_lock();
	sum += orcu_dereference(live)->value;
	sum += orcu_dereference_check(live, 0)->value;
	orcu_read_unlock();
	orcu_unregister_thread();
	want += 2;
#endif
	/* The updater, outside any section, holding its lock. */
	pthread_mutex_lock(&update_lock);
	locked = 1;
	sum += orcu_dereference_check(live, locked)->value;
	sum += orcu_dereference_protected(live, locked)->value;
	locked = 0;
	pthread_mutex_unlock(&update_lock);
	/* An online qsbr thread is inside a section without a lock. */
	if (orcu_register_thread_qsbr())
		return -1;
	sum += orcu_dereference(live)->value;
	orcu_read_lock();
	sum += orcu_dereference(live)->value;
	orcu_read_unlock();
	orcu_unregister_thread();
	return sum == want ? 0 : -1;
}

static int bug(const char *c)
{
	int v = 0;

	if (!strcmp(c, "unregistered")) {
		v = orcu_dereference(live)->value;                     /* BUG:unregistered */
	} else if (!strcmp(c, "outside")) {
		orcu_register_thread();
		orcu_read_lock();
		orcu_read_unlock();
		v = orcu_dereference(live)->value;                     /* BUG:outside */
	} else if (!strcmp(c, "check")) {
		orcu_register_thread();
		v = orcu_dereference_check(live, locked)->value;       /* BUG:check */
	} else if (!strcmp(c, "protected")) {
		orcu_register_thread();
		orcu_read_lock();
		v = orcu_dereference_protected(live, locked)->value;   /* BUG:protected */
		orcu_read_unlock();
	} else if (!strcmp(c, "offline")) {
		orcu_register_thread_qsbr();
		orcu_thread_offline();
		v = orcu_dereference(live)->value;                     /* BUG:offline */
	} else {
		fprintf(stderr, "prove: unknown case %s\n", c);
		return 2;
	}
	/* Without ORCU_PROVE each bug above runs on, unchecked. */
	printf("prove: %s ran unchecked (%d)\n", c, v);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: prove legal|unregistered|outside|check|protected|offline\n");
		return 2;
	}
	if (!strcmp(argv[1], "legal"))
		return legal() ? 1 : 0;
	return bug(argv[1]);
}
