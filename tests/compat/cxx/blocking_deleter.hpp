// blocking_deleter.hpp - what the tests of a poster caught inside its
// own batch's deleters share: a thread that fills a batch, lets its grace
// period end and fills the next, so that it runs the first batch's
// deleters itself (its callback held back, held_batches.hpp), where the
// first deleter waits until the test lets it go.
#ifndef ORCU_TEST_BLOCKING_DELETER_HPP
#define ORCU_TEST_BLOCKING_DELETER_HPP

#include "held_batches.hpp"

namespace blocking {

inline std::atomic<bool> first_taken{false}, in_deleter{false}, go{false};

struct delete_blocking_first {
	void operator()(held::Obj *p) const
	{
		if (!first_taken.exchange(true)) {
			in_deleter = true;
			while (!go.load())
				usleep(1000);
		}
		held::count_delete(p);
	}
};

// The poster: batch A, its grace period, then batch B, whose post runs
// A's deleters here (the first waits for `go`).
inline void *poster(void *)
{
	held::pin();
	for (int i = 0; i < held::kFill; i++)
		orcu::rcu_retire(held::make(), delete_blocking_first{});
	orcu::rcu_synchronize();
	for (int i = 0; i < held::kFill; i++)
		orcu::rcu_retire(held::make(), delete_blocking_first{});
	return nullptr;
}

// Holds the slot, starts the poster and returns once it waits in A's
// first deleter.
inline void start(pthread_t *t)
{
	held::pin();
	orcu_call(&held::hold_head, held::hold);
	CHECK(pthread_create(t, nullptr, poster, nullptr) == 0);
	for (int i = 0; i < 60000 && !in_deleter.load(); i++)
		usleep(1000);
	CHECK(in_deleter.load());
}

} // namespace blocking

#endif
