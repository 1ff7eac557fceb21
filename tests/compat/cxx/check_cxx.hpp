// check_cxx.hpp - the assertions of the C++ tests, which are built both
// in the tree and, from an installed prefix, by install_cxx.sh: a failed
// check prints file:line and the expression, then exits 1.
#ifndef ORCU_TEST_CHECK_CXX_HPP
#define ORCU_TEST_CHECK_CXX_HPP

#include <cstdio>
#include <cstdlib>

#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond)) {                                                 \
			std::fprintf(stderr, "%s:%d: CHECK failed: %s\n",      \
				     __FILE__, __LINE__, #cond);               \
			std::exit(1);                                          \
		}                                                              \
	} while (0)

#endif
