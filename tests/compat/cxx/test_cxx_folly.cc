// test_cxx_folly.cc - the tests of folly's Rcu.h (the reference
// implementation of P2545) that apply to <orcu/rcu.hpp>, ported from the
// ideas of folly/synchronization/test/RcuTest.cpp and written anew:
//   Basic, Guard, SlowReader, CopyGuard (retire inside a section),
//   Stress (rcu_retire with a poisoning lambda, or synchronize + delete,
//   against readers summing many pointers), Synchronize (many threads),
//   MovableReader (moved unique_locks), SafeFork, ThreadDeath (a retiring
//   thread exits), RcuObjBase, Tsan (a section then rcu_synchronize()
//   orders a write: ThreadSanitizer must see it), DeeplyNestedReaders,
//   DeadLock (a reader retires while another thread synchronizes).
// Where folly's rcu_synchronize() also runs retired deleters, P2545
// promises that only of rcu_barrier(), which these ports call.  Not
// ported: NewDomain* (orcu has one domain and P2545 gives rcu_domain no
// public constructor), SynchronizeInCall (folly's rcu_domain::call),
// ThreadLocalList (a folly internal).
#include <orcu/rcu.hpp>

#include "check_cxx.hpp"

#include <atomic>
#include <cstring>
#include <mutex>
#include <random>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

using orcu::rcu_barrier;
using orcu::rcu_default_domain;
using orcu::rcu_domain;
using orcu::rcu_retire;
using orcu::rcu_synchronize;

unsigned rnd()
{
	thread_local std::minstd_rand r(std::random_device{}());
	return (unsigned)r();
}

class des {
	std::atomic<bool> *d_;

public:
	explicit des(std::atomic<bool> *d) : d_(d) {}
	~des() { *d_ = true; }
};

void basic()
{
	rcu_retire(new int(2));
	rcu_barrier();
}

void guard()
{
	std::atomic<bool> del{false};
	auto *foo = new des(&del);
	{
		std::scoped_lock<rcu_domain> g(rcu_default_domain());
	}
	rcu_retire(foo);
	rcu_barrier();
	CHECK(del);
}

void slow_reader()
{
	std::atomic<bool> started{false}, done{false};
	std::thread t;
	{
		std::scoped_lock<rcu_domain> lock(rcu_default_domain());
		t = std::thread([&] {
			started = true;
			rcu_synchronize();
			done = true;
		});
		while (!started)
			std::this_thread::yield();
		CHECK(!done);   // cannot end while we read
	}
	t.join();
	CHECK(done);
}

std::unique_lock<rcu_domain> try_retire(des *obj)
{
	std::unique_lock<rcu_domain> g(rcu_default_domain());
	rcu_retire(obj);
	return g;
}

void copy_guard()
{
	std::atomic<bool> del{false};
	auto *foo = new des(&del);
	{
		auto res = try_retire(foo);
		CHECK(!del);
	}
	rcu_barrier();
	CHECK(del);
}

void delete_or_retire_oldint(int *oldint)
{
	if (rnd() % 2 == 0) {
		rcu_retire(oldint, [](int *obj) {
			*obj = (int)rnd() | 1;
			delete obj;
		});
	} else {
		rcu_synchronize();
		*oldint = (int)rnd() | 1;
		delete oldint;
	}
}

void stress(unsigned nthreads, int iters)
{
	constexpr unsigned sz = 1000;
	static std::atomic<int *> ints[sz];
	std::vector<std::thread> readers, updaters;
	std::atomic<bool> done{false};

	for (auto &i : ints)
		i.store(new int(0), std::memory_order_release);
	for (unsigned th = 0; th < nthreads; th++)
		readers.emplace_back([&] {
			for (int i = 0; i < iters / 100; i++) {
				std::scoped_lock<rcu_domain> lock(rcu_default_domain());
				int *ptrs[sz];
				int sum = 0;

				for (unsigned j = 0; j < sz; j++)
					ptrs[j] = ints[j].load(std::memory_order_acquire);
				for (unsigned j = 0; j < sz; j++)
					sum += *ptrs[j];
				CHECK(sum == 0);
			}
		});
	for (unsigned th = 0; th < nthreads; th++)
		updaters.emplace_back([&] {
			while (!done.load(std::memory_order_relaxed)) {
				int *oldint = ints[rnd() % sz].exchange(new int(0),
									std::memory_order_acq_rel);
				delete_or_retire_oldint(oldint);
			}
		});
	for (auto &t : readers)
		t.join();
	done = true;
	for (auto &t : updaters)
		t.join();
	rcu_synchronize();
	for (auto &i : ints)
		delete i.exchange(nullptr, std::memory_order_acq_rel);
	rcu_barrier();
}

void synchronize_many(unsigned nthreads)
{
	std::vector<std::thread> threads;

	for (unsigned th = 0; th < nthreads; th++)
		threads.emplace_back([] {
			for (int i = 0; i < 10; i++)
				rcu_synchronize();
		});
	for (auto &t : threads)
		t.join();
}

void movable_reader()
{
	{
		std::unique_lock<rcu_domain> g(rcu_default_domain());
		std::unique_lock<rcu_domain> f(std::move(g));
	}
	rcu_synchronize();
	{
		std::unique_lock<rcu_domain> g(rcu_default_domain(), std::defer_lock);
		std::unique_lock<rcu_domain> f(rcu_default_domain());
		g = std::move(f);
	}
	rcu_synchronize();
}

void safe_fork()
{
	rcu_default_domain().lock();
	rcu_default_domain().unlock();
	std::fflush(stdout);
	pid_t pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		rcu_synchronize();
		rcu_retire(new int(1));
		rcu_barrier();
		_exit(0);
	}
	rcu_synchronize();
	int status = -1;
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

void thread_death()
{
	std::atomic<bool> del{false};
	std::thread t([&] { rcu_retire(new des(&del)); });
	t.join();
	rcu_barrier();
	CHECK(del);
}

void obj_base()
{
	std::atomic<bool> retired{false};
	struct base_test : orcu::rcu_obj_base<base_test> {
		std::atomic<bool> *ret_;
		explicit base_test(std::atomic<bool> *ret) : ret_(ret) {}
		~base_test() { *ret_ = true; }
	};
	(new base_test(&retired))->retire();
	rcu_barrier();
	CHECK(retired);
}

// A plain int written in a section, then after rcu_synchronize() on
// another thread: the grace period orders the two writes (ThreadSanitizer
// reports a race if it does not see that order).
void tsan()
{
	int data = 0;
	std::atomic<bool> in_section{false};
	std::thread t1([&] {
		rcu_default_domain().lock();
		in_section = true;
		data = 1;
		rcu_default_domain().unlock();
	});
	std::thread t2([&] {
		while (!in_section)
			std::this_thread::yield();
		rcu_synchronize();
		data = 2;
	});
	t1.join();
	t2.join();
	CHECK(data == 2);
}

void deeply_nested_readers(unsigned nthreads)
{
	std::vector<std::thread> readers;
	std::atomic<int *> int_ptr{new int(0)};
	std::atomic<bool> done{false};

	for (unsigned th = 0; th < nthreads; th++)
		readers.emplace_back([&] {
			std::vector<std::unique_lock<rcu_domain>> held;

			for (unsigned i = 0; i < 8192; i++) {
				held.emplace_back(rcu_default_domain());
				CHECK(*int_ptr.load(std::memory_order_acquire) == 0);
			}
		});
	std::thread updater([&] {
		while (!done)
			delete_or_retire_oldint(int_ptr.exchange(new int(0), std::memory_order_acq_rel));
	});
	for (auto &t : readers)
		t.join();
	done = true;
	updater.join();
	rcu_synchronize();
	delete int_ptr.exchange(nullptr, std::memory_order_acq_rel);
	rcu_barrier();
}

// A reader that retires while another thread synchronizes: rcu_retire
// must not wait for the grace period that waits for its caller.
void dead_lock()
{
	std::atomic<int> ready{0};
	char *to_retire = new char[50];
	std::thread t1([&] {
		std::scoped_lock<rcu_domain> guard(rcu_default_domain());
		ready++;
		while (ready < 2)
			std::this_thread::yield();
		std::strcpy(to_retire, "retired inside a section");
		rcu_retire(to_retire, std::default_delete<char[]>());
	});
	std::thread t2([&] {
		ready++;
		while (ready < 2)
			std::this_thread::yield();
		rcu_synchronize();
	});
	t1.join();
	t2.join();
	rcu_barrier();
}

} // namespace

int main()
{
	basic();
	guard();
	slow_reader();
	copy_guard();
	stress(4, 20000);
	synchronize_many(8);
	movable_reader();
	safe_fork();
	thread_death();
	obj_base();
	tsan();
	deeply_nested_readers(4);
	dead_lock();
	std::printf("PASS test_cxx_folly\n");
	return 0;
}
