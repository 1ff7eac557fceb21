#!/usr/bin/env bash
# debugging.sh <mode> <build dir> <source dir> <C compiler> [sanitizer list]
# The tools of docs/DEBUGGING.md, as a user meets them: installs the build
# into a temporary prefix, builds the user-style programs of debugging/
# against it, runs them and checks what each prints.
#   prove        prove.c with -DORCU_PROVE, memb and ORCU_QSBR units: each
#                bug prints exactly its line (file:line of its BUG mark)
#                and aborts, the legal forms print nothing; without
#                ORCU_PROVE every case runs unchecked
#   asan         asan.c with -fsanitize=address: each write to a pending
#                head is reported at its BUG line; the clean twin is silent
#   tsan_memb    tsan.c with -fsanitize=thread, memb / qsbr readers:
#   tsan_qsbr    0 ThreadSanitizer warnings, no suppression file
#   tsan_free    tsan_free.cc (C++, c++ on PATH): 100,000 objects through
#                each of orcu_free, orcu_retire, retire(), rcu_retire,
#                with readers: 0 warnings
#   tsan_flood   tsan_flood.c: 100,000 callbacks through orcu_call(), memb
#                readers: 0 warnings
#   tsan_abi     tsan_flood.c -DURCU_ABI: the same through liburcu's names,
#                built on liburcu's own headers (no _LGPL_SOURCE), memb
#                and qsbr, run on orcu's liburcu ABI libraries: 0 warnings
#   tsan_urcu    tsan_urcu.c on orcu (liburcu's names, rculfhash on
#                orcu_rcu_flavor), memb and qsbr: 0 warnings
#   compare      not a test: tsan_urcu.c on liburcu itself, for comparison;
#                prints its warning counts
# The sanitizer modes check the hooks of the ordinary library: in a build
# that is itself instrumented (sanitizer list not empty) they are left
# out of the library (src/base/sanitize.h), and the test is skipped (77).
set -euo pipefail
MODE=$1; B=$(cd "$2" && pwd); S=$(cd "$3" && pwd); CC=$4; SAN=${5:-}
D="$S/tests/compat/debugging"
case $MODE in asan|tsan_*|compare)
  if [ -n "$SAN" ]; then
    echo "debugging $MODE: skipped: this build's library is instrumented ($SAN), so it has no sanitizer hooks; the test checks the ordinary library's (make test)"
    exit 77
  fi;;
esac
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
P="$T/prefix"
cmake --install "$B" --prefix "$P" >/dev/null
LIB=$(dirname "$(dirname "$(find "$P" -name orcu.pc | head -1)")")
san=(); [ -n "$SAN" ] && san=(-fsanitize="$SAN" -fno-omit-frame-pointer)
cd "$T"
fail=0

# build <out> <source> <flags...>: a user's build line against the prefix
# (libraries before -lorcu in $libs).
libs=()
build() {
  local out=$1 src=$2; shift 2
  cp "$D/$src" "$T/$src"
  "$CC" -std=gnu11 -g -Wall -Wextra -Werror "$@" -I"$P/include" "$src" -o "$out" \
    -L"$LIB" -Wl,-rpath,"$LIB" "${libs[@]}" -lorcu -lpthread
}

# run <name> <cmd...>: runs it, its stdout in $T/out, stderr in $T/err,
# exit status in $rc.
run() {
  local name=$1; shift
  set +e; "$@" >"$T/out" 2>"$T/err"; rc=$?; set -e
  echo "-- $name: exit $rc"
  sed 's/^/   | /' "$T/out" "$T/err" | head -20
}

bad() { echo "FAIL: $*"; fail=1; }

bug_line() { grep -n "BUG:$2 " "$D/$1" | cut -d: -f1; }

case $MODE in
prove)
  for unit in memb qsbr; do
    defs=(); [ $unit = qsbr ] && defs=(-DORCU_QSBR)
    build prove prove.c "${san[@]}" "${defs[@]}" -DORCU_PROVE
    build prove_off prove.c "${san[@]}" "${defs[@]}"
    run "$unit legal, ORCU_PROVE" ./prove legal
    [ $rc = 0 ] && [ ! -s err ] && [ ! -s out ] || bad "$unit: legal forms not silent"
    for c in unregistered outside check protected offline; do
      line=$(bug_line prove.c $c)
      run "$unit $c, ORCU_PROVE" ./prove $c
      [ $rc = 134 ] || bad "$unit $c: exit $rc, not an abort"
      [ "$(wc -l <err)" = 1 ] && grep -qx "suspicious orcu usage: .* at prove.c:$line" err ||
        bad "$unit $c: not one line naming prove.c:$line"
      run "$unit $c, no ORCU_PROVE" ./prove_off $c
      [ $rc = 0 ] && [ ! -s err ] || bad "$unit $c: checked without ORCU_PROVE"
    done
  done;;
asan)
  build asan asan.c -fsanitize=address -fno-omit-frame-pointer
  for c in reuse repost; do
    line=$(bug_line asan.c $c)
    run "$c" ./asan $c
    [ $rc != 0 ] || bad "$c: exit 0"
    grep -q "ERROR: AddressSanitizer: use-after-poison" err &&
      grep -q "#0 .* in main .*asan.c:$line\$" err || bad "$c: no report at asan.c:$line"
  done
  run clean ./asan clean
  [ $rc = 0 ] && [ ! -s err ] && grep -qx "asan: clean (1 callback ran)" out || bad "clean twin not clean";;
tsan_memb|tsan_qsbr)
  defs=(); [ $MODE = tsan_qsbr ] && defs=(-DORCU_QSBR)
  # -O2: where gcc's -Wtsan warns about fences (-Werror makes it fatal).
  build tsan tsan.c -O2 -fsanitize=thread "${defs[@]}"
  run "$MODE" env TSAN_OPTIONS="halt_on_error=0" ./tsan
  n=$(grep -c "WARNING: ThreadSanitizer" err || true)
  echo "   ThreadSanitizer warnings: $n"
  [ "$n" = 0 ] && [ $rc = 0 ] && grep -qx "tsan: ok" out || bad "$MODE: $n warnings, exit $rc";;
tsan_free)
  CXX=$(command -v c++ || command -v g++ || true)
  [ -n "$CXX" ] || { echo "debugging tsan_free: skipped: no C++ compiler"; exit 77; }
  cp "$D/tsan_free.cc" "$T/tsan_free.cc"
  # -Wno-tsan: g++ warns that TSan does not model orcu.h's read-side fence.
  "$CXX" -std=c++20 -g -O2 -Wall -Wextra -Werror -Wno-tsan -fsanitize=thread \
    -I"$P/include" tsan_free.cc -o tsan_free -L"$LIB" -Wl,-rpath,"$LIB" -lorcu -lpthread
  run tsan_free env TSAN_OPTIONS="halt_on_error=0" ./tsan_free
  n=$(grep -c "WARNING: ThreadSanitizer" err || true)
  echo "   ThreadSanitizer warnings: $n"
  [ "$n" = 0 ] && [ $rc = 0 ] && grep -qx "tsan_free: ok" out || bad "tsan_free: $n warnings, exit $rc";;
tsan_flood)
  build tsan_flood tsan_flood.c -O2 -fsanitize=thread
  run "$MODE" env TSAN_OPTIONS="halt_on_error=0" ./tsan_flood
  n=$(grep -c "WARNING: ThreadSanitizer" err || true)
  echo "   ThreadSanitizer warnings: $n"
  [ "$n" = 0 ] && [ $rc = 0 ] && grep -qx "tsan_flood: 100000 callbacks, ok" out ||
    bad "$MODE: $n warnings, exit $rc";;
tsan_abi)
  # As a prebuilt liburcu binary: liburcu's headers and -lurcu(-qsbr), run
  # with orcu's liburcu sonames first on the loader path.
  shim=$(dirname "$(find "$P" -name liburcu.so.8 | head -1)")
  for flavor in memb qsbr; do
    defs=(-DURCU_ABI); libs=(-lurcu); so=liburcu.so.8
    [ $flavor = qsbr ] && defs+=(-DTEST_QSBR) && libs=(-lurcu-qsbr) && so=liburcu-qsbr.so.8
    build tsan_flood tsan_flood.c -O2 -fsanitize=thread "${defs[@]}"
    deps=$(LD_LIBRARY_PATH="$shim:$LIB" ldd ./tsan_flood)
    grep -q "$so => $shim/" <<<"$deps" || bad "$flavor: $so is not orcu's: $deps"
    run "liburcu ABI on orcu, $flavor" env LD_LIBRARY_PATH="$shim:$LIB" \
      TSAN_OPTIONS="halt_on_error=0" ./tsan_flood
    n=$(grep -c "WARNING: ThreadSanitizer" err || true)
    echo "   ThreadSanitizer warnings: $n"
    [ "$n" = 0 ] && [ $rc = 0 ] && grep -qx "tsan_flood: 100000 callbacks, ok" out ||
      bad "$flavor: $n warnings, exit $rc"
  done;;
tsan_urcu)
  for flavor in memb qsbr; do
    defs=(-DON_ORCU); [ $flavor = qsbr ] && defs+=(-DTEST_QSBR)
    libs=(-lorcu-urcu -lurcu-cds)
    build tsan_urcu tsan_urcu.c -O2 -fsanitize=thread "${defs[@]}"
    run "liburcu names on orcu, $flavor" env TSAN_OPTIONS="halt_on_error=0" ./tsan_urcu
    n=$(grep -c "WARNING: ThreadSanitizer" err || true)
    echo "   ThreadSanitizer warnings: $n"
    [ "$n" = 0 ] && [ $rc = 0 ] && grep -qx "tsan_urcu: ok" out || bad "$flavor: $n warnings, exit $rc"
  done;;
compare)
  for flavor in memb qsbr; do
    lib=-lurcu; defs=(); [ $flavor = qsbr ] && lib=-lurcu-qsbr && defs=(-DTEST_QSBR)
    cp "$D/tsan_urcu.c" .
    "$CC" -std=gnu11 -g -O2 -fsanitize=thread "${defs[@]}" tsan_urcu.c -o on_liburcu $lib -lurcu-cds -lpthread
    set +e; TSAN_OPTIONS="halt_on_error=0" ./on_liburcu >out 2>err; rc=$?; set -e
    echo "liburcu $flavor: exit $rc, ThreadSanitizer warnings: $(grep -c 'WARNING: ThreadSanitizer' err || true)"
    grep SUMMARY err | sort | uniq -c || true
  done;;
*) echo "debugging.sh: unknown mode $MODE" >&2; exit 2;;
esac
[ $fail = 0 ] && echo "debugging $MODE: ok"
exit $fail
