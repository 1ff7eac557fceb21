/*
 * lgpl_unused.c - xfsprogs' case: a unit built with _LGPL_SOURCE that
 * includes a liburcu flavour header (through a shared header of its
 * project) but calls nothing of it, in a program that links no RCU
 * library.  On liburcu it links; through orcu's shim it must too.
 * -DUSE_QSBR / -DUSE_BP pick the flavour.
 */
#define _LGPL_SOURCE
#include <stdio.h>
#if defined(USE_QSBR)
#include <urcu-qsbr.h>
#elif defined(USE_BP)
#include <urcu-bp.h>
#else
#include <urcu.h>
#endif

struct item {
	int key;
	struct rcu_head rcu;	/* the type is used, no call is made */
};

int main(void)
{
	struct item it = { .key = 42 };
	struct item *back = caa_container_of(&it.rcu, struct item, rcu);

	printf("lgpl_unused: key %d, no RCU library linked\n", CMM_LOAD_SHARED(back->key));
	return back->key == 42 ? 0 : 1;
}
