/*
 * test_free_double_post_named.c - with ORCU_CHECK_CALLS=1, an object
 * handed to orcu_free(), orcu_retire() or orcu_free_rcu() again while
 * still pending is caught at the second call, with one line naming it,
 * then abort: not a "double free detected" from glibc later, on an orcu
 * thread, with nothing naming the call (orcu_free_rcu() went into the
 * batches, where the double-post set never saw its head).  Each case
 * runs in a forked child with stderr captured:
 *  - orcu_free_rcu() twice; orcu_call() on the head, then orcu_free_rcu();
 *    orcu_free(), then orcu_free_rcu() of the same object;
 *  - orcu_free() twice; orcu_retire() twice.
 * Control, under the same check: objects posted once each through the
 * three calls (addresses reused as malloc() hands them back) are all
 * freed by a barrier, with no line: the check loses nothing.
 */
#include <orcu.h>

#include "common_pipe.h"

#include <stdatomic.h>

struct obj {
	long v;
	struct orcu_head head;
};

static atomic_int deleted;

static void del(void *p)
{
	atomic_fetch_add(&deleted, 1);
	free(p);
}

static void cb(struct orcu_head *h)
{
	del((char *)h - offsetof(struct obj, head));
}

static void child_setup(void)
{
	setenv("ORCU_CHECK_CALLS", "1", 1);
	signal(SIGALRM, SIG_DFL);
	alarm((unsigned)check_timeout_s(20));
}

static struct obj *new_obj(void)
{
	struct obj *o = malloc(sizeof(*o));

	if (!o)
		exit(2);
	return o;
}

static int free_rcu_twice(void *a)
{
	struct obj *o = new_obj();

	(void)a;
	child_setup();
	orcu_read_lock();
	orcu_free_rcu(o, head);
	orcu_free_rcu(o, head);
	orcu_read_unlock();
	orcu_barrier();
	return 0;
}

static int call_then_free_rcu(void *a)
{
	struct obj *o = new_obj();

	(void)a;
	child_setup();
	orcu_read_lock(); /* the callback cannot run before the second call */
	orcu_call(&o->head, cb);
	orcu_free_rcu(o, head);
	orcu_read_unlock();
	orcu_barrier();
	return 0;
}

static int free_then_free_rcu(void *a)
{
	struct obj *o = new_obj();

	(void)a;
	child_setup();
	orcu_free(o);
	orcu_free_rcu(o, head);
	orcu_barrier();
	return 0;
}

static int free_twice(void *a)
{
	void *p = malloc(16);

	(void)a;
	child_setup();
	orcu_free(p);
	orcu_free(p);
	orcu_barrier();
	return 0;
}

static int retire_twice(void *a)
{
	void *p = malloc(16);

	(void)a;
	child_setup();
	orcu_retire(p, del);
	orcu_retire(p, del);
	orcu_barrier();
	return 0;
}

#define ROUNDS 3000

static int each_once(void *a)
{
	(void)a;
	child_setup();
	for (int i = 0; i < ROUNDS; i++) {
		struct obj *o = new_obj();

		switch (i % 4) {
		case 0:
			orcu_free(o);
			break;
		case 1:
			orcu_free_rcu(o, head);
			break;
		case 2:
			orcu_retire(o, del);
			break;
		default:
			orcu_call(&o->head, cb);
		}
		if (i % 500 == 499)
			orcu_barrier(); /* malloc() hands the addresses back */
	}
	orcu_barrier();
	return atomic_load(&deleted) == ROUNDS / 2 ? 0 : 3;
}

int main(void)
{
	struct child_result r;

	test_watchdog("test_free_double_post_named", 120);
	expect_child_abort("free_rcu twice", free_rcu_twice, NULL, "orcu_free_rcu");
	expect_child_abort("call then free_rcu", call_then_free_rcu, NULL, "orcu_free_rcu");
	expect_child_abort("free then free_rcu", free_then_free_rcu, NULL, "orcu_free_rcu");
	expect_child_abort("free twice", free_twice, NULL, "orcu_free");
	expect_child_abort("retire twice", retire_twice, NULL, "orcu_retire");
	run_child(each_once, NULL, 60, &r);
	if (!WIFEXITED(r.status) || WEXITSTATUS(r.status) != 0 || r.lines != 0) {
		fprintf(stderr, "each once: status %#x, stderr:\n%s\n", r.status, r.err);
		exit(1);
	}
	printf("%-22s -> ok\n", "each once");
	TEST_PASS("test_free_double_post_named");
}
