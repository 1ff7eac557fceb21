// orcu/rcu.hpp - the C++26 <rcu> interface (P2545) on orcu, header only,
// C++20 and later, in namespace orcu: rcu_obj_base, rcu_domain,
// rcu_default_domain(), rcu_synchronize(), rcu_barrier(), rcu_retire().
// Link with liborcu as for <orcu.h> (pkg-config orcu, CMake orcu::orcu).
//
// Semantics are P2545's:
//  - rcu_domain is the one domain orcu has; not copyable, not movable, no
//    public constructor.  lock()/unlock() are orcu_read_lock/unlock
//    (nestable; a thread that never called orcu is registered as a memb
//    reader by its first lock), try_lock() always succeeds, so
//    std::scoped_lock and std::unique_lock work on it.
//  - rcu_obj_base<T, D>::retire(d, dom): d(static_cast<T *>(this)) after
//    the readers of the object are done; never throws, never blocks,
//    allocates nothing it could fail to get (the deleter lives in the
//    object); allowed in a read-side section and in a deleter.
//  - rcu_retire(p, d, dom): the same for any object, headless; throws
//    std::bad_alloc (nothing is then retired) only when memory is short
//    (neither a batch page nor a few bytes for a callback of its own);
//    never blocks.
//  - rcu_synchronize(): orcu_synchronize(); rcu_barrier(): orcu_barrier()
//    (every deleter scheduled before it has run).  Neither in a read-side
//    section nor in a deleter (one line, abort).
// Deleters run as orcu callbacks (on an orcu thread, no library lock
// held) or, as P2545 allows ("may invoke scheduled evaluations"), on the
// thread of a later retire() or rcu_retire() once their grace period has
// ended: like P2545's note says, a deleter must not take a lock held
// across a retire.  Either way they run as in a callback (a barrier or
// synchronize in one aborts with one line) and must not throw.
#ifndef ORCU_RCU_HPP
#define ORCU_RCU_HPP

#if !defined(__cplusplus) || __cplusplus < 202002L
#error "<orcu/rcu.hpp> needs C++20 or later"
#endif

#include <orcu.h>

#include <cstddef>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>

namespace orcu {

class rcu_domain;
rcu_domain &rcu_default_domain() noexcept;

class rcu_domain {
public:
	rcu_domain(const rcu_domain &) = delete;
	rcu_domain &operator=(const rcu_domain &) = delete;

	void lock() noexcept { orcu_read_lock(); }
	bool try_lock() noexcept
	{
		orcu_read_lock();
		return true;
	}
	void unlock() noexcept { orcu_read_unlock(); }

private:
	rcu_domain() = default;
	friend rcu_domain &rcu_default_domain() noexcept;
};

inline rcu_domain &rcu_default_domain() noexcept
{
	static rcu_domain d;
	return d;
}

inline void rcu_synchronize(rcu_domain & = rcu_default_domain()) noexcept
{
	orcu_synchronize();
}

inline void rcu_barrier(rcu_domain & = rcu_default_domain()) noexcept
{
	orcu_barrier();
}

namespace detail {

// A deleter that is empty and default-constructible is not stored: the
// batch holds the pointer and a function that makes one.
template <class D>
inline constexpr bool stateless_v = (std::is_empty_v<D> && std::is_default_constructible_v<D>);

template <class T, class D>
void delete_stateless(void *p) noexcept
{
	D d;
	d(static_cast<T *>(p));
}

template <class T, class D>
struct retire_node {
	T *p;
	[[no_unique_address]] D d;

	static void run(void *n) noexcept
	{
		retire_node *self = static_cast<retire_node *>(n);
		D d = std::move(self->d);
		T *p = self->p;

		delete self;
		d(p);
	}
};

// Where rcu_obj_base keeps its deleter until retire() runs it: nothing
// for a stateless one, else a buffer constructed by retire() (so D need
// not be default-constructible or assignable).
template <class D, bool = stateless_v<D>>
struct deleter_store {
	alignas(D) unsigned char buf[sizeof(D)];

	void put(D &&d) noexcept { ::new (static_cast<void *>(buf)) D(std::move(d)); }
	D take() noexcept
	{
		D *p = std::launder(reinterpret_cast<D *>(buf));
		D d(std::move(*p));

		p->~D();
		return d;
	}
};

template <class D>
struct deleter_store<D, true> {
	void put(D &&) noexcept {}
	D take() noexcept { return D(); }
};

// The head of rcu_obj_base, as a base class so a callback can get from
// the head back to the object without offsetof.
struct head_holder {
	struct orcu_head head {};
};

} // namespace detail

template <class T, class D = std::default_delete<T>>
class rcu_obj_base : private detail::head_holder {
public:
	void retire(D d = D(), rcu_domain & = rcu_default_domain()) noexcept
	{
		deleter_.put(std::move(d));
		// Batched with the other objects this thread retired; with no
		// batch memory, this object's own head (never blocks).
		if (orcu__retire_nb(static_cast<void *>(this), &run) != 0)
			orcu_call(&this->head, &run_head);
	}

protected:
	rcu_obj_base() = default;
	rcu_obj_base(const rcu_obj_base &) = default;
	rcu_obj_base(rcu_obj_base &&) = default;
	rcu_obj_base &operator=(const rcu_obj_base &) = default;
	rcu_obj_base &operator=(rcu_obj_base &&) = default;
	~rcu_obj_base() = default;

private:
	static void run(void *base) noexcept
	{
		rcu_obj_base *b = static_cast<rcu_obj_base *>(base);
		D d = b->deleter_.take();

		d(static_cast<T *>(b));
	}
	static void run_head(struct orcu_head *h) noexcept
	{
		detail::head_holder *hh = reinterpret_cast<detail::head_holder *>(h);

		run(static_cast<rcu_obj_base *>(hh));
	}

	[[no_unique_address]] detail::deleter_store<D> deleter_;
};

template <class T, class D = std::default_delete<T>>
void rcu_retire(T *p, D d = D(), rcu_domain & = rcu_default_domain())
{
	if (!p)
		return;
	if constexpr (detail::stateless_v<D>) {
		(void)d;
		if (orcu__retire_nb(const_cast<void *>(static_cast<const void *>(p)),
				    &detail::delete_stateless<T, D>) != 0)
			throw std::bad_alloc();
	} else {
		auto *n = new detail::retire_node<T, D>{ p, std::move(d) };

		if (orcu__retire_nb(n, &detail::retire_node<T, D>::run) != 0) {
			delete n;
			throw std::bad_alloc();
		}
	}
}

} // namespace orcu

#endif
