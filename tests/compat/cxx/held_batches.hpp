// held_batches.hpp - what the deleter tests share: objects that count
// their deletions, a callback that holds its slot's later callbacks back
// (so that the poster, not a batch's callback, runs the batch's
// deleters), a pin to one CPU so that one slot takes them all, and the
// final check that each object was deleted exactly once.
#ifndef ORCU_TEST_HELD_BATCHES_HPP
#define ORCU_TEST_HELD_BATCHES_HPP

#include <orcu/rcu.hpp>

#include "check_cxx.hpp"

#include <atomic>
#include <cstdio>
#include <sched.h>
#include <unistd.h>

namespace held {

// A batch of pairs holds 253 objects (a page); kFill fills one.
constexpr int kFill = 253;
constexpr int kMax = 8 * kFill;

inline std::atomic<int> deleted[kMax];
inline std::atomic<int> next_id{0};
inline std::atomic<bool> release{false};

struct Obj {
	int id;
};

inline Obj *make()
{
	int id = next_id++;

	CHECK(id < kMax);
	return new Obj{id};
}

inline void count_delete(Obj *p)
{
	deleted[p->id]++;
	delete p;
}

// Posted first: the slot's later callbacks wait until `release`.
inline void hold(struct orcu_head *)
{
	while (!release.load())
		usleep(1000);
}
inline struct orcu_head hold_head;

// The calling thread stays on its first allowed CPU.
inline void pin()
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

// Releases the hold, waits for every callback, then checks that the
// `made` objects were each deleted once.
inline void release_and_check(const char *test, int made)
{
	release = true;
	orcu::rcu_barrier();
	int n = next_id.load();

	CHECK(n == made);
	for (int i = 0; i < n; i++) {
		if (deleted[i].load() != 1)
			std::fprintf(stderr, "object %d deleted %d times\n", i, deleted[i].load());
		CHECK(deleted[i].load() == 1);
	}
	std::printf("PASS %s (%d objects)\n", test, n);
}

} // namespace held

#endif
