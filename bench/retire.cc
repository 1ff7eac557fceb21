// retire.cc - the C++ posters of orcu-bench free: objects of 64 bytes
// retired through <orcu/rcu.hpp>, as a C++ user writes it.
#include <orcu/rcu.hpp>

#include <cstdlib>

namespace {

struct node : orcu::rcu_obj_base<node> {
	long payload[6];
};

struct plain {
	long payload[8];
};

static_assert(sizeof(node) == 64 && sizeof(plain) == 64);

} // namespace

extern "C" void cxx_retire_loop(int kind, long n)
{
	if (kind == 0) {
		for (long i = 0; i < n; i++)
			(new node)->retire();
	} else {
		for (long i = 0; i < n; i++)
			orcu::rcu_retire(new plain);
	}
}
