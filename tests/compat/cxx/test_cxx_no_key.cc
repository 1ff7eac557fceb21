// test_cxx_no_key.cc - <orcu/rcu.hpp> in a process that used up its
// thread-specific data keys (PTHREAD_KEYS_MAX) before orcu made its own,
// so no thread gets a batch record.  rcu_retire() threw std::bad_alloc
// on every call there, with memory to spare, and printed nothing; it
// must retire each object (memory is not short), and retire() too, and
// rcu_barrier() then finds every one deleted exactly once.
#include <orcu/rcu.hpp>

#include "check_cxx.hpp"

#include <atomic>
#include <new>
#include <pthread.h>
#include <unistd.h>

namespace {

constexpr int kN = 1000;
std::atomic<int> deleted[2 * kN];

struct Obj : orcu::rcu_obj_base<Obj> {
	int id;
	explicit Obj(int i) : id(i) {}
	~Obj() { deleted[id]++; }
};

} // namespace

int main()
{
	pthread_key_t key;
	int keys = 0, thrown = 0;

	alarm(60);
	while (pthread_key_create(&key, nullptr) == 0)
		keys++;
	std::printf("took the %d keys left\n", keys);
	for (int i = 0; i < kN; i++) {
		try {
			orcu::rcu_retire(new Obj(i));
		} catch (const std::bad_alloc &) {
			thrown++;
		}
	}
	for (int i = kN; i < 2 * kN; i++)
		(new Obj(i))->retire();
	if (thrown)
		std::fprintf(stderr, "rcu_retire() threw std::bad_alloc %d times of %d\n", thrown, kN);
	CHECK(thrown == 0);
	orcu::rcu_barrier();
	for (int i = 0; i < 2 * kN; i++) {
		if (deleted[i].load() != 1)
			std::fprintf(stderr, "object %d deleted %d times\n", i, deleted[i].load());
		CHECK(deleted[i].load() == 1);
	}
	std::printf("PASS test_cxx_no_key (%d objects)\n", 2 * kN);
	return 0;
}
