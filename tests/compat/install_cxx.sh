#!/usr/bin/env bash
# install_cxx.sh <build dir> <source dir> <C++ compiler> [sanitizer list]
# Installs the build into a temporary prefix, then builds the C++ tests of
# tests/compat/cxx (the P2545 examples and the ported folly Rcu tests, on
# the installed <orcu/rcu.hpp>) once with pkg-config and once with CMake
# (find_package(orcu CONFIG)), runs all four, and removes the prefix.
# Fails on the first error.
set -euo pipefail
B=$(cd "$1" && pwd); S=$(cd "$2" && pwd); CXX=$3; SAN=${4:-}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
P="$T/prefix"
cmake --install "$B" --prefix "$P" >/dev/null
test -f "$P/include/orcu/rcu.hpp" || { echo "install_cxx: rcu.hpp not installed" >&2; exit 1; }
PCDIR=$(dirname "$(find "$P" -name orcu.pc | head -1)")
LIBDIR=$(dirname "$PCDIR")
flags=(); [ -n "$SAN" ] && flags=(-fsanitize="$SAN" -fno-omit-frame-pointer)
# g++ -Wtsan: as in CMakeLists.txt, the inline read side's fence.
case $SAN in *thread*) "$CXX" --version | grep -qi clang || flags+=(-Wno-tsan);; esac
export PKG_CONFIG_PATH="$PCDIR"
pcflags=$(pkg-config --cflags --libs orcu)
echo "== pkg-config: $pcflags"
for t in test_cxx_p2545 test_cxx_folly; do
  # shellcheck disable=SC2086
  "$CXX" -std=c++20 -Wall -Wextra -Werror "${flags[@]}" -I"$S/tests/compat/cxx" \
    "$S/tests/compat/cxx/$t.cc" -o "$T/$t-pc" $pcflags
  LD_LIBRARY_PATH="$LIBDIR" "$T/$t-pc"
done
echo "== CMake: find_package(orcu CONFIG REQUIRED)"
cmake -S "$S/tests/compat/cxx" -B "$T/cbuild" -DCMAKE_PREFIX_PATH="$P" \
  -DCMAKE_CXX_COMPILER="$CXX" -DCMAKE_CXX_FLAGS="-Wall -Wextra -Werror ${flags[*]}" \
  -DCMAKE_EXE_LINKER_FLAGS="${flags[*]}" >/dev/null
cmake --build "$T/cbuild" >/dev/null
"$T/cbuild/test_cxx_p2545"
"$T/cbuild/test_cxx_folly"
echo "install_cxx: the C++ tests built with pkg-config and with CMake, and ran"
