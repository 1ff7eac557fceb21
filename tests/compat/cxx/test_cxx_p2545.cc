// test_cxx_p2545.cc - the examples of P2545 ("Read-Copy Update", the
// C++26 <rcu>), written for <orcu/rcu.hpp>: a reader under
// std::scoped_lock on rcu_default_domain(); updaters that replace the
// published object and reclaim the old one with rcu_synchronize() and
// delete, with rcu_retire() (default and custom deleters), and with
// rcu_obj_base::retire(); rcu_barrier() before the deleters' code or
// data go away.  Readers check that no object they hold was deleted
// (its destructor poisons it); at the end every retired object has been
// deleted exactly once.
#include <orcu/rcu.hpp>

#include "check_cxx.hpp"

#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

namespace {

std::atomic<long> live{0}, made{0};
constexpr long kMagic = 0x5032353435L;

struct Data {
	long v = kMagic;
	Data() { live++, made++; }
	~Data() { v = 0, live--; }
};

struct Data2 : orcu::rcu_obj_base<Data2> {
	long v = kMagic;
	Data2() { live++, made++; }
	~Data2() { v = 0, live--; }
};

// A deleter with state (P2545: "D shall be ... move constructible").
struct counting_delete {
	std::atomic<long> *count;
	void operator()(Data *p) const
	{
		(*count)++;
		delete p;
	}
};

std::atomic<Data *> data_{nullptr};
std::atomic<Data2 *> data2_{nullptr};
std::atomic<bool> stop{false};

// "void reader_func() { std::scoped_lock l(std::rcu_default_domain()); ...}"
void reader_func()
{
	while (!stop.load()) {
		std::scoped_lock l(orcu::rcu_default_domain());
		Data *p = data_.load(std::memory_order_acquire);
		Data2 *q = data2_.load(std::memory_order_acquire);

		CHECK(p->v == kMagic);
		CHECK(q->v == kMagic);
		std::this_thread::yield();
		CHECK(p->v == kMagic);
		CHECK(q->v == kMagic);
	}
}

// "Data* olddata = data_.exchange(newdata); std::rcu_synchronize(); delete olddata;"
void updater_synchronize()
{
	Data *old = data_.exchange(new Data);
	orcu::rcu_synchronize();
	delete old;
}

// "std::rcu_retire(olddata);"
void updater_retire()
{
	orcu::rcu_retire(data_.exchange(new Data));
}

// "olddata->retire();" through rcu_obj_base
void updater_obj_base()
{
	data2_.exchange(new Data2)->retire();
}

std::atomic<long> custom_deletes{0};

// rcu_retire with a deleter that has state
void updater_retire_custom()
{
	orcu::rcu_retire(data_.exchange(new Data), counting_delete{&custom_deletes});
}

// rcu_obj_base with a deleter that has state.
struct Obj;
struct ObjDeleter {
	std::atomic<long> *n;
	void operator()(Obj *p) const;
};
struct Obj : orcu::rcu_obj_base<Obj, ObjDeleter> {};
void ObjDeleter::operator()(Obj *p) const
{
	(*n)++;
	delete p;
}

} // namespace

int main()
{
	data_ = new Data;
	data2_ = new Data2;
	std::vector<std::thread> readers;

	for (int i = 0; i < 3; i++)
		readers.emplace_back(reader_func);
	for (int round = 0; round < 20000; round++) {
		switch (round % 4) {
		case 0:
			if (round % 400 == 0)
				updater_synchronize();
			else
				updater_retire();
			break;
		case 1:
			updater_retire();
			break;
		case 2:
			updater_obj_base();
			break;
		default:
			updater_retire_custom();
			break;
		}
	}
	stop = true;
	for (auto &t : readers)
		t.join();
	// "rcu_barrier() ... before the deleters go away": every deleter ran.
	orcu::rcu_barrier();
	CHECK(live.load() == 2);
	CHECK(custom_deletes.load() == 5000);
	delete data_.load();
	delete data2_.load();
	CHECK(live.load() == 0);

	// An rcu_obj_base with a stateful deleter, and try_lock.
	std::atomic<long> base_deletes{0};
	{
		std::unique_lock l(orcu::rcu_default_domain(), std::try_to_lock);
		CHECK(l.owns_lock());
		(new Obj)->retire(ObjDeleter{&base_deletes});
		CHECK(base_deletes.load() == 0);   // we still read
	}
	orcu::rcu_barrier();
	CHECK(base_deletes.load() == 1);
	std::printf("PASS test_cxx_p2545 (%ld objects)\n", made.load());
	return 0;
}
