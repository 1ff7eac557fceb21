// test_cxx_fork_twice_in_deleter.cc - fork() while a thread runs the
// deleters of a batch from its own ring, then, in the child, threads
// that reuse the stacks of the parent's threads, and a second fork().
// The grandchild's fork handler must not follow anything the gone
// poster left on its stack (it crashed there), and a barrier works in
// the child and in the grandchild.  The parent then lets the poster go
// and every object is deleted exactly once.
#include "blocking_deleter.hpp"

#include <cstring>
#include <sys/wait.h>

namespace {

// New threads in the child take the stacks the parent's threads left:
// each scribbles over the top of its stack.
void *scribble(void *)
{
	char buf[128 * 1024];

	std::memset(buf, 0x10, sizeof(buf));
	asm volatile("" : : "r"(buf) : "memory");
	return nullptr;
}

int child()
{
	pthread_t t[16];
	pid_t pid;
	int st;

	for (auto &x : t)
		CHECK(pthread_create(&x, nullptr, scribble, nullptr) == 0);
	for (auto &x : t)
		CHECK(pthread_join(x, nullptr) == 0);
	orcu_barrier();
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		orcu_barrier();
		_exit(0);
	}
	CHECK(waitpid(pid, &st, 0) == pid);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		std::fprintf(stderr, "grandchild: %s %d\n", WIFSIGNALED(st) ? "signal" : "exit",
			     WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	return 0;
}

} // namespace

int main()
{
	pthread_t t;
	pid_t pid;
	int st;

	alarm(120); // a hang in a child or a lost batch
	blocking::start(&t);
	held::release = true; // A's callback may run too (and lose)
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0)
		_exit(child());
	CHECK(waitpid(pid, &st, 0) == pid);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		std::fprintf(stderr, "child: %s %d\n", WIFSIGNALED(st) ? "signal" : "exit",
			     WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	blocking::go = true;
	CHECK(pthread_join(t, nullptr) == 0);
	held::release_and_check("test_cxx_fork_twice_in_deleter", 2 * held::kFill);
	return 0;
}
