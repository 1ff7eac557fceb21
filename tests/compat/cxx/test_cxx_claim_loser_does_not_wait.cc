// test_cxx_claim_loser_does_not_wait.cc - a poster runs the deleters of
// a batch from its own ring, and that batch's callback comes while it is
// still at it (the first deleter waits).  The callback must not wait for
// the poster: a callback posted after it on the same slot runs meanwhile.
// But orcu_barrier() must not return before the poster has deleted every
// object of the batch.
#include "blocking_deleter.hpp"

namespace {

std::atomic<bool> later_ran{false}, barrier_done{false};
std::atomic<int> deleted_at_barrier{-1};
struct orcu_head later_head;

void later(struct orcu_head *) { later_ran = true; }

int count_deleted()
{
	int n = 0;

	for (int i = 0; i < held::next_id.load(); i++)
		n += held::deleted[i].load();
	return n;
}

void *barrier_thread(void *)
{
	orcu_barrier();
	deleted_at_barrier = count_deleted();
	barrier_done = true;
	return nullptr;
}

} // namespace

int main()
{
	pthread_t t, b;

	alarm(120);
	blocking::start(&t);
	orcu_call(&later_head, later); // same slot, behind A's callback
	held::release = true;
	for (int i = 0; i < 60000 && !later_ran.load(); i++)
		usleep(1000);
	if (!later_ran.load())
		std::fprintf(stderr, "a later callback waited for the poster's deleters\n");
	CHECK(later_ran.load());
	CHECK(pthread_create(&b, nullptr, barrier_thread, nullptr) == 0);
	// Whatever else it waits for, it must wait for the poster.
	usleep(200 * 1000);
	CHECK(!barrier_done.load());
	blocking::go = true;
	CHECK(pthread_join(b, nullptr) == 0);
	std::printf("barrier returned with %d of %d deleted\n", deleted_at_barrier.load(),
		    held::kFill);
	CHECK(deleted_at_barrier.load() >= held::kFill); // every object of A
	CHECK(pthread_join(t, nullptr) == 0);
	held::release_and_check("test_cxx_claim_loser_does_not_wait", 2 * held::kFill);
	return 0;
}
