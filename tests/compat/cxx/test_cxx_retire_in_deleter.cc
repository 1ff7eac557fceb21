// test_cxx_retire_in_deleter.cc - <orcu/rcu.hpp> says retire is allowed
// in a deleter, and that a later rcu_retire() may run the deleters of
// its thread's earlier batches once their grace period has ended.  Here
// the two meet: the poster runs a batch's deleters itself (its callback
// is held back behind a callback that waits), and each of them retires
// one more object, enough to fill and post a batch from inside the
// deleters.  Every object must still be deleted exactly once, and
// rcu_barrier() must return.
#include "held_batches.hpp"

namespace {

using held::kFill;
using held::make;

struct plain_delete {
	void operator()(held::Obj *p) const { held::count_delete(p); }
};

// Retires one more object from inside the deleter (allowed: rcu.hpp).
struct retiring_delete {
	void operator()(held::Obj *p) const
	{
		held::count_delete(p);
		orcu::rcu_retire(make(), plain_delete{});
	}
};

} // namespace

int main()
{
	held::pin();
	alarm(60); // a lost batch hangs rcu_barrier()
	orcu_call(&held::hold_head, held::hold);
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
	held::release_and_check("test_cxx_retire_in_deleter", 6 * kFill);
	return 0;
}
