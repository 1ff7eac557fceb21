// test_cxx_cancel_in_deleter.cc - a pthread_cancel() never takes effect
// inside an orcu call, and the callbacks orcu runs on an application
// thread run with cancellation disabled (docs/API.md, "Cancellation").
// <orcu/rcu.hpp> lets a later rcu_retire() run the deleters of its
// thread's earlier batches; here a thread with a cancel pending does so
// (its batches' callback is held back behind one that waits), and each
// deleter reaches a cancellation point (a log line would).  The thread
// must be cancelled after rcu_retire() returns, with every object
// deleted exactly once and rcu_barrier() returning.
#include <orcu/rcu.hpp>

#include "check_cxx.hpp"

#include <atomic>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

namespace {

// A batch of pairs holds 253 objects (a page); kFill fills one.
constexpr int kFill = 253;

std::atomic<int> deleted[2 * kFill];
std::atomic<int> next_id{0};
std::atomic<bool> release{false}, first_done{false}, cancel_sent{false};
std::atomic<bool> retires_returned{false};
int the_cpu;

struct Obj {
	int id;
};

struct testcancel_delete {
	void operator()(Obj *p) const
	{
		deleted[p->id]++;
		delete p;
		pthread_testcancel(); // as write() or nanosleep() would
	}
};

Obj *make()
{
	return new Obj{next_id++};
}

// Holds the slot's callbacks back until released, so that the poster,
// not the callback, runs the deleters of its first batch.
void hold(struct orcu_head *)
{
	while (!release.load())
		usleep(1000);
}
struct orcu_head hold_head;

// One CPU, so one slot takes the hold and the batches.
void pin()
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(the_cpu, &set);
	CHECK(sched_setaffinity(0, sizeof(set), &set) == 0);
}

void *poster(void *)
{
	pin();
	orcu_call(&hold_head, hold);
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
	cpu_set_t set;
	pthread_t t;
	void *res;

	CHECK(sched_getaffinity(0, sizeof(set), &set) == 0);
	for (the_cpu = 0; !CPU_ISSET(the_cpu, &set); the_cpu++)
		;
	alarm(60);
	CHECK(pthread_create(&t, nullptr, poster, nullptr) == 0);
	while (!first_done.load())
		usleep(1000);
	CHECK(pthread_cancel(t) == 0);
	cancel_sent = true;
	CHECK(pthread_join(t, &res) == 0);
	CHECK(res == PTHREAD_CANCELED);
	CHECK(retires_returned.load());
	release = true;
	orcu::rcu_barrier();
	int n = next_id.load();

	CHECK(n == 2 * kFill);
	for (int i = 0; i < n; i++) {
		if (deleted[i].load() != 1)
			std::fprintf(stderr, "object %d deleted %d times\n", i, deleted[i].load());
		CHECK(deleted[i].load() == 1);
	}
	std::printf("PASS test_cxx_cancel_in_deleter (%d objects)\n", n);
	return 0;
}
