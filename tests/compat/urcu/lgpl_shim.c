/*
 * lgpl_shim.c - a liburcu program with _LGPL_SOURCE built through orcu's
 * shim: its read side is orcu's inline one, and it must load only with
 * the shim's libraries (never on a real liburcu).
 */
#define _LGPL_SOURCE
#include <stdio.h>
#include <urcu.h>

static int value = 7;
static int *ptr = &value;

int main(void)
{
	rcu_register_thread();
	rcu_read_lock();
	int v = *rcu_dereference(ptr);
	int ongoing = rcu_read_ongoing();
	rcu_read_unlock();
	synchronize_rcu();
	rcu_unregister_thread();
	printf("lgpl_shim: value %d, read side ongoing %d\n", v, ongoing);
	return v == 7 && ongoing ? 0 : 1;
}
