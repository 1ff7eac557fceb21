// plugin_static_cxx.cc - the C++ half of plugin_static.c: a global whose
// destructor (run by __cxa_finalize() when the plugin is unloaded)
// retires an object with rcu_retire() and waits with rcu_barrier().
#include <orcu/rcu.hpp>

#include <atomic>

extern "C" int plugin_mode(void);
extern "C" std::atomic<long> *plugin_counter(void);

namespace {

constexpr int MODE_RETIRE = 2;

struct counted_delete {
	void operator()(int *p) const noexcept
	{
		delete p;
		plugin_counter()->fetch_add(1, std::memory_order_relaxed);
	}
};

struct registry {
	~registry()
	{
		if (plugin_mode() != MODE_RETIRE)
			return;
		orcu::rcu_retire(new int(1), counted_delete{});
		orcu::rcu_barrier();
	}
} the_registry;

} // namespace
