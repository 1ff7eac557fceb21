/*
 * asan.c - a user's program built with -fsanitize=address against the
 * ordinary (uninstrumented) installed liborcu (tests/compat/debugging.sh).
 * argv[1] names one case.  The bugs write to an orcu_head that is pending
 * (posted, its callback not yet invoked): AddressSanitizer reports the
 * write at the line marked BUG:<case>.  "clean" is their twin done right:
 * the head is reused only after its callback ran; it prints "asan: clean".
 */
#include <orcu.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct obj {
	int key;
	struct orcu_head rcu;
	int value;
};

static int ran;

static void count_cb(struct orcu_head *h)
{
	(void)h;
	__atomic_add_fetch(&ran, 1, __ATOMIC_RELAXED);
}

static void free_cb(struct orcu_head *h)
{
	free((char *)h - offsetof(struct obj, rcu));
}

int main(int argc, char **argv)
{
	struct obj *o = calloc(1, sizeof(*o));

	if (argc != 2 || !o)
		return 2;
	/* Hold the callbacks back so the bugs below surely meet them
	 * pending: the reader is in a section until the end. */
	orcu_read_lock();
	if (!strcmp(argv[1], "reuse")) {
		orcu_call(&o->rcu, count_cb);
		o->rcu.next = NULL;                 /* BUG:reuse */
	} else if (!strcmp(argv[1], "repost")) {
		orcu_call(&o->rcu, count_cb);
		orcu_call(&o->rcu, count_cb);       /* BUG:repost */
	} else if (!strcmp(argv[1], "clean")) {
		/* The object's other fields stay the program's. */
		orcu_call(&o->rcu, count_cb);
		o->value = 1;
		orcu_read_unlock();
		orcu_barrier();
		/* Invoked: the head is the program's again. */
		memset(&o->rcu, 0, sizeof(o->rcu));
		orcu_call(&o->rcu, free_cb);
		orcu_barrier();
		orcu_shutdown();
		printf("asan: clean (%d callback%s ran)\n", ran, ran == 1 ? "" : "s");
		return ran == 1 ? 0 : 1;
	} else {
		return 2;
	}
	orcu_read_unlock();
	printf("asan: %s was not reported\n", argv[1]);
	return 1;
}
