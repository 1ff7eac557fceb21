/*
 * kdig_stub.c - Knot's kdig case: objects built against liburcu's headers
 * (here through orcu's shim, without _LGPL_SOURCE) in a program that links
 * no RCU library at all and stubs the functions it calls, as kdig's
 * src/utils/common/dummy.c does.  It links only if the shim's headers
 * compile rcu_* to calls of liburcu's names, never to orcu's internals.
 */
#include <stdio.h>
#include <urcu.h>

static int calls;

void urcu_memb_read_lock(void) { calls++; }
void urcu_memb_read_unlock(void) { calls++; }
void urcu_memb_synchronize_rcu(void) { calls++; }
void urcu_memb_register_thread(void) { calls++; }
void urcu_memb_unregister_thread(void) { calls++; }
void *rcu_dereference_sym(void *p) { calls++; return p; }

static int value = 42;
static int *ptr = &value;

int main(void)
{
	rcu_register_thread();
	rcu_read_lock();
	int v = *rcu_dereference(ptr);
	rcu_read_unlock();
	synchronize_rcu();
	rcu_unregister_thread();
	printf("kdig_stub: value %d, %d stub calls\n", v, calls);
	return v == 42 && calls == 6 ? 0 : 1;
}
