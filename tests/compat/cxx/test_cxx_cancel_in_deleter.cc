// test_cxx_cancel_in_deleter.cc - a pthread_cancel() never takes effect
// inside an orcu call, and the callbacks orcu runs on an application
// thread run with cancellation disabled (docs/API.md, "Cancellation").
// <orcu/rcu.hpp> lets a later rcu_retire() run the deleters of its
// thread's earlier batches; here a thread with a cancel pending does so
// (its batches' callback is held back behind one that waits), and each
// deleter reaches a cancellation point (a log line would).  The thread
// must be cancelled after rcu_retire() returns, with every object
// deleted exactly once and rcu_barrier() returning.
#include "held_batches.hpp"

#include <pthread.h>

namespace {

using held::kFill;
using held::make;

std::atomic<bool> first_done{false}, cancel_sent{false};
std::atomic<bool> retires_returned{false};

struct testcancel_delete {
	void operator()(held::Obj *p) const
	{
		held::count_delete(p);
		pthread_testcancel(); // as write() or nanosleep() would
	}
};

void *poster(void *)
{
	held::pin();
	orcu_call(&held::hold_head, held::hold);
	for (int i = 0; i < kFill; i++)
		orcu::rcu_retire(make(), testcancel_delete{});
	orcu::rcu_synchronize(); // the first batch's grace period is over
	first_done = true;
	while (!cancel_sent.load())
		; // no cancellation point here
	// Fills the second batch: the poster runs the first one's deleters.
	for (int i = 0; i < kFill; i++)
		orcu::rcu_retire(make(), testcancel_delete{});
	retires_returned = true;
	// The cancel takes effect here.  Not in pause(): ThreadSanitizer
	// misses the locks of thread-exit destructors run from inside a
	// blocking interceptor (google/sanitizers#646).
	for (;;)
		pthread_testcancel();
	return nullptr;
}

} // namespace

int main()
{
	pthread_t t;
	void *res;

	alarm(60);
	CHECK(pthread_create(&t, nullptr, poster, nullptr) == 0);
	while (!first_done.load())
		usleep(1000);
	CHECK(pthread_cancel(t) == 0);
	cancel_sent = true;
	CHECK(pthread_join(t, &res) == 0);
	CHECK(res == PTHREAD_CANCELED);
	CHECK(retires_returned.load());
	held::release_and_check("test_cxx_cancel_in_deleter", 2 * kFill);
	return 0;
}
