#!/usr/bin/env bash
# install_consumer.sh <build dir> <source dir> <ON|OFF: liborcu-urcu built>
#   <C compiler> [sanitizer list]
# Installs the build into a temporary prefix, then builds
# tests/compat/consumer once with pkg-config and once with CMake
# (find_package(orcu CONFIG)), runs both, and removes the prefix.  Fails
# on the first error.
set -euo pipefail
B=$(cd "$1" && pwd); S=$(cd "$2" && pwd); URCU=$3; CC=$4; SAN=${5:-}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
P="$T/prefix"
cmake --install "$B" --prefix "$P" >/dev/null
PCDIR=$(dirname "$(find "$P" -name orcu.pc | head -1)")
LIBDIR=$(dirname "$PCDIR")
flags=(); [ -n "$SAN" ] && flags=(-fsanitize="$SAN" -fno-omit-frame-pointer)
pc=(orcu); defs=(); cm_urcu=OFF
if [ "$URCU" = ON ]; then pc=(orcu-urcu); defs=(-DWITH_URCU); cm_urcu=ON; fi

echo "== pkg-config: ${pc[*]}"
export PKG_CONFIG_PATH="$PCDIR"
# Relocatable .pc files: every path they give is under the new prefix.
pcflags=$(pkg-config --cflags --libs orcu "${pc[@]}")
echo "   $pcflags"
for f in $pcflags; do
  case $f in -I/usr/include*|-L/usr/lib*) ;; -[IL]"$P"/*) ;;
    -[IL]*) echo "install_consumer: $f is outside the prefix $P" >&2; exit 1;; esac
done
# shellcheck disable=SC2086
"$CC" -Wall -Wextra -Werror "${flags[@]}" "${defs[@]}" "$S/tests/compat/consumer/main.c" -o "$T/consumer-pc" $pcflags
LD_LIBRARY_PATH="$LIBDIR" "$T/consumer-pc"

echo "== CMake: find_package(orcu CONFIG REQUIRED)"
cmake -S "$S/tests/compat/consumer" -B "$T/cbuild" -DCMAKE_PREFIX_PATH="$P" \
  -DCMAKE_C_COMPILER="$CC" -DWITH_URCU=$cm_urcu \
  -DCMAKE_C_FLAGS="${flags[*]}" -DCMAKE_EXE_LINKER_FLAGS="${flags[*]}" >/dev/null
cmake --build "$T/cbuild" >/dev/null
"$T/cbuild/consumer"
echo "install_consumer: pkg-config and CMake consumers built and ran"
