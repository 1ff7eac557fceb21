// header_cxx.cc - orcu.h (and, with ORCU_TEST_COMPAT, orcu/urcu-compat.h)
// as a C++17 program sees them: compiled with -Wall -Wextra -Werror by
// CTest (header_cxx*), never run.
#ifdef ORCU_TEST_COMPAT
#include <orcu/urcu-compat.h>
#else
#include <orcu.h>
#endif

struct obj {
	orcu_head rcu;
	int v;
};

static obj *gp;

static void free_obj(orcu_head *h) { delete reinterpret_cast<obj *>(h); }

int main()
{
	if (orcu_register_thread() < 0)
		return 1;
	orcu_read_lock();
	obj *p = orcu_dereference(gp);
	int v = p ? p->v : 0;
	v += orcu_dereference_check(gp, true) == p;
	bool in = orcu_read_ongoing();
	orcu_read_unlock();
	obj *n = new obj();
	n->v = v + 1;
	obj *old = orcu_dereference_protected(gp, true);
	old = orcu_xchg_pointer(&gp, n);
	if (old)
		orcu_call(&old->rcu, free_obj);
	orcu_assign_pointer(gp, gp);
	unsigned long c = orcu_start_poll();
	orcu_cond_synchronize(c);
	orcu_barrier();
#ifdef ORCU_TEST_COMPAT
	rcu_read_lock();
	obj *q = rcu_dereference(gp);
	rcu_read_unlock();
	obj *was = rcu_cmpxchg_pointer(&gp, q, q);
	synchronize_rcu();
	(void)was;
#endif
	orcu_unregister_thread();
	return in && orcu_thread_is_online() ? 0 : 2;
}
