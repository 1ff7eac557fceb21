// tsan_free.cc - a correct C++ program built with -fsanitize=thread:
// memb readers read the published objects' fields with plain loads while
// the main thread replaces them and hands the old ones to orcu_free(),
// orcu_retire(), rcu_obj_base::retire() and orcu::rcu_retire(), 100,000
// times each.  Deleters read the object with plain loads and set its
// plain flag, which the main thread reads after rcu_barrier().  Against
// the ordinary library (tests/compat/debugging.sh tsan_free) and built in
// the tree with the library (the sanitizer builds: test_cxx_tsan_free),
// ThreadSanitizer must report nothing; it prints "tsan_free: ok" when
// every check holds.
#include <orcu/rcu.hpp>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <pthread.h>

namespace {

constexpr int kReaders = 2;
constexpr long kPerCall = 100000;
constexpr long kObjects = 4 * kPerCall;

char deleted[kObjects + 4]; // plain: set by deleters, read after the barrier
std::atomic<long> bad{0};

struct CObj { // malloc'ed: orcu_free(), orcu_retire()
	long id, a, b; // b == -a, written before publication
};

struct Obj : orcu::rcu_obj_base<Obj> { // new'ed: retire(), rcu_retire()
	long id, a, b;
	~Obj()
	{
		if (a != -b)
			bad++;
		deleted[id]++;
	}
};

CObj *live_c;
Obj *live_cxx;
std::atomic<bool> stop{false};

void c_delete(void *p)
{
	CObj *o = static_cast<CObj *>(p);

	if (o->a != -o->b)
		bad++;
	deleted[o->id]++;
	std::free(o);
}

template <class T>
bool torn(T *o)
{
	return o && o->a != -o->b;
}

void *reader(void *)
{
	if (orcu_register_thread())
		return reinterpret_cast<void *>(1);
	while (!stop.load(std::memory_order_relaxed)) {
		orcu_read_lock();
		if (torn(orcu_dereference(live_c)) || torn(orcu_dereference(live_cxx)))
			bad++;
		orcu_read_unlock();
	}
	orcu_unregister_thread();
	return nullptr;
}

template <class T>
void fill(T *o, long id)
{
	o->id = id;
	o->a = id;
	o->b = -id;
}

CObj *new_c(long id)
{
	CObj *o = static_cast<CObj *>(std::malloc(sizeof(CObj)));

	if (!o)
		std::abort();
	fill(o, id);
	return o;
}

Obj *new_cxx(long id)
{
	Obj *o = new Obj;

	fill(o, id);
	return o;
}

} // namespace

int main()
{
	pthread_t r[kReaders];
	long id = 0;

	live_c = new_c(kObjects);
	live_cxx = new_cxx(kObjects + 1);
	for (auto &t : r)
		if (pthread_create(&t, nullptr, reader, nullptr))
			return 1;
	for (long i = 0; i < kPerCall; i++) {
		CObj *c = orcu_xchg_pointer(&live_c, new_c(id++));

		if (torn(c))
			bad++;
		deleted[c->id]++; // orcu_free() has no deleter: marked here
		orcu_free(c);
	}
	for (long i = 0; i < kPerCall; i++)
		orcu_retire(orcu_xchg_pointer(&live_c, new_c(id++)), c_delete);
	for (long i = 0; i < kPerCall; i++)
		orcu_xchg_pointer(&live_cxx, new_cxx(id++))->retire();
	for (long i = 0; i < kPerCall; i++)
		orcu::rcu_retire(orcu_xchg_pointer(&live_cxx, new_cxx(id++)));
	stop = true;
	for (auto &t : r)
		if (pthread_join(t, nullptr))
			return 1;
	orcu::rcu_barrier();
	long missing = 0;
	for (long i = 0; i < kObjects + 2; i++) // but the two still published
		if (i != live_c->id && i != live_cxx->id)
			missing += deleted[i] != 1;
	std::printf("%ld objects, %ld not deleted once, %ld torn\n", id, missing, bad.load());
	if (missing || bad.load())
		return 1;
	std::printf("tsan_free: ok\n");
	return 0;
}
