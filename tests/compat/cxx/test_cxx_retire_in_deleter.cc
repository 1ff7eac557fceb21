// test_cxx_retire_in_deleter.cc - <orcu/rcu.hpp> says retire is allowed
// in a deleter, and that a later rcu_retire() may run the deleters of
// its thread's earlier batches once their grace period has ended.  Here
// the two meet: the poster runs a batch's deleters itself (its callback
// is held back behind a callback that waits), and each of them retires
// one more object, enough to fill and post a batch from inside the
// deleters.  Every object must still be deleted exactly once, and
// rcu_barrier() must return.
#include <orcu/rcu.hpp>

#include "check_cxx.hpp"

#include <atomic>
#include <sched.h>
#include <unistd.h>

namespace {

// A batch of pairs holds 253 objects (a page); kFill fills one.
constexpr int kFill = 253;
constexpr int kMax = 8 * kFill;

std::atomic<int> deleted[kMax];
std::atomic<int> next_id{0};
std::atomic<bool> release{false};

struct Obj {
	int id;
};

Obj *make()
{
	int id = next_id++;

	CHECK(id < kMax);
	return new Obj{id};
}

struct plain_delete {
	void operator()(Obj *p) const
	{
		deleted[p->id]++;
		delete p;
	}
};

// Retires one more object from inside the deleter (allowed: rcu.hpp).
struct retiring_delete {
	void operator()(Obj *p) const
	{
		deleted[p->id]++;
		delete p;
		orcu::rcu_retire(make(), plain_delete{});
	}
};

// Holds the slot's callbacks back until released, so that the poster,
// not the callback, runs the deleters of its batches.
void hold(struct orcu_head *)
{
	while (!release.load())
		usleep(1000);
}
struct orcu_head hold_head;

// Stay on one CPU, so one slot takes the hold and the batches.
void pin()
{
	cpu_set_t set;

	CHECK(sched_getaffinity(0, sizeof(set), &set) == 0);
	for (int c = 0; c < CPU_SETSIZE; c++) {
		if (CPU_ISSET(c, &set)) {
			CPU_ZERO(&set);
			CPU_SET(c, &set);
			CHECK(sched_setaffinity(0, sizeof(set), &set) == 0);
			return;
		}
	}
}

} // namespace

int main()
{
	pin();
	alarm(60); // a lost batch hangs rcu_barrier()
	orcu_call(&hold_head, hold);
	// Batch A: each deleter retires one more object.
	for (int i = 0; i < kFill; i++)
		orcu::rcu_retire(make(), retiring_delete{});
	orcu::rcu_synchronize(); // A's grace period is over
	// Batch B fills: its poster runs A's deleters, which fill batch C.
	for (int i = 0; i < kFill; i++)
		orcu::rcu_retire(make(), plain_delete{});
	// More batches, on whatever pages the ring gave back.
	for (int i = 0; i < 3 * kFill; i++)
		orcu::rcu_retire(make(), plain_delete{});
	release = true;
	orcu::rcu_barrier();
	int n = next_id.load();

	CHECK(n == 6 * kFill);
	for (int i = 0; i < n; i++) {
		if (deleted[i].load() != 1)
			std::fprintf(stderr, "object %d deleted %d times\n", i, deleted[i].load());
		CHECK(deleted[i].load() == 1);
	}
	std::printf("PASS test_cxx_retire_in_deleter (%d objects)\n", n);
	return 0;
}
