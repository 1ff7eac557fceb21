// test_cxx_c_calls_run_no_deleter.cc - API.md: the deleters of
// orcu_retire() and <orcu/rcu.hpp> never run on the caller of a C call.
// rcu_retire() fills a batch whose callback is held back; after its grace
// period, orcu_free() and orcu_free_rcu() fill batches of their own, on
// the same thread, while that thread holds a mutex the deleters take: a
// deleter run there would find it held by its own thread.  Then a
// thread's exit (with such a batch on its ring) must not run them either.
// Every object is still deleted exactly once.
#include "held_batches.hpp"

#include <cerrno>
#include <pthread.h>

namespace {

using held::kFill;
using held::make;

pthread_mutex_t lock;
std::atomic<int> on_caller{0};
thread_local bool in_c_call;

struct locking_delete {
	void operator()(held::Obj *p) const
	{
		if (in_c_call)
			on_caller++;
		int e = pthread_mutex_lock(&lock);

		if (e == EDEADLK)
			on_caller++;
		else
			pthread_mutex_unlock(&lock);
		held::count_delete(p);
	}
};

struct node {
	struct orcu_head rcu;
	char pad[32];
};

// Many C calls, holding the lock: several free() batches fill and post.
void c_calls()
{
	in_c_call = true;
	pthread_mutex_lock(&lock);
	for (int i = 0; i < 8 * kFill; i++)
		orcu_free(malloc(16));
	for (int i = 0; i < 8 * kFill; i++) {
		node *n = static_cast<node *>(malloc(sizeof(node)));

		orcu_free_rcu(n, rcu);
	}
	pthread_mutex_unlock(&lock);
	in_c_call = false;
}

void *exiting_thread(void *)
{
	held::pin();
	for (int i = 0; i < kFill; i++)
		orcu::rcu_retire(make(), locking_delete{});
	orcu::rcu_synchronize(); // its grace period is over
	in_c_call = true;        // its exit is no retire either
	return nullptr;
}

} // namespace

int main()
{
	pthread_mutexattr_t a;
	pthread_t t;

	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK);
	pthread_mutex_init(&lock, &a);
	held::pin();
	alarm(60); // a lost batch hangs rcu_barrier()
	orcu_call(&held::hold_head, held::hold);
	for (int i = 0; i < kFill; i++)
		orcu::rcu_retire(make(), locking_delete{});
	orcu::rcu_synchronize(); // their grace period is over
	c_calls();
	CHECK(pthread_create(&t, nullptr, exiting_thread, nullptr) == 0);
	CHECK(pthread_join(t, nullptr) == 0);
	if (on_caller.load())
		std::fprintf(stderr, "%d deleters ran on the caller of a C call or an exit\n",
			     on_caller.load());
	CHECK(on_caller.load() == 0);
	held::release_and_check("test_cxx_c_calls_run_no_deleter", 2 * kFill);
	return 0;
}
