#!/usr/bin/env bash
# deb-check.sh - the Debian packages, as a user gets them: builds them from
# a copy of the tree (dpkg-buildpackage -us -uc -b; tests off, as CI has
# run the suite: DEB_BUILD_OPTIONS=nocheck, unless DEB_BUILD_OPTIONS is
# set), runs lintian (any error or warning fails), lists each package's
# dependencies and files.  Then, as an administrator would: installs the
# run-time packages of the liburcu ABI alone (with what they depend on,
# which must hold no -dev package) and runs prebuilt liburcu programs
# (built against liburcu, loaded from their directory) on them; then
# installs every package and, with only what they installed: builds the
# examples with pkg-config (which must print no -I/-L of the system
# directories) and CMake and runs them, builds a liburcu program through
# the liburcu build shim's pkg-config files and runs it, a short
# orcu-torture run, and man orcu_call and rcu_retire.
# The install goes into a throwaway overlay of /usr, /etc and /var (a
# private mount namespace) when the machine allows it, else into the
# system, and the packages are purged afterwards.
set -euo pipefail
S=$(cd "$(dirname "$0")/.." && pwd)
export DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8

if [ "${1:-}" = --runtime ]; then
  # Runs with the run-time swap alone installed.  $2: work directory,
  # holding the prebuilt liburcu programs (swap_real_*).
  T=$2
  ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
  shim=/usr/lib/$ma/orcu/urcu-shim
  for p in liborcu-dev liborcu-liburcu-dev; do
    ! dpkg -s "$p" >/dev/null 2>&1 || { echo "deb-check: $p is installed with the run-time swap alone" >&2; exit 1; }
  done
  for prog in "$T"/swap_real_*; do
    rc=0; LD_LIBRARY_PATH=$shim/lib "$prog" >/dev/null || rc=$?
    [ $rc = 0 ] || { echo "deb-check: $(basename "$prog") exited $rc on the run-time packages (0: ran on orcu, 3: on liburcu)" >&2; exit 1; }
    echo "   $(basename "$prog") ran on orcu: $(LD_LIBRARY_PATH=$shim/lib ldd "$prog" | grep -o 'liburcu[-a-z]*\.so\.8 => [^ ]*' | head -1)"
  done
  exit 0
fi

if [ "${1:-}" = --use ]; then
  # Runs with every package installed.  $2: work directory.
  T=$2
  ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
  shim=/usr/lib/$ma/orcu/urcu-shim
  unset PKG_CONFIG_PATH
  pc=$(pkg-config --cflags --libs orcu orcu-urcu)
  echo "== pkg-config: $pc"
  for f in $pc; do
    case $f in -I*|-L*) echo "deb-check: pkg-config prints $f: Debian's .pc files name /usr, whose directories pkg-config leaves out" >&2; exit 1;; esac
  done
  cc -Wall -Wextra -Werror "$S/examples/routing_table.c" -o "$T/routing_table" \
    $(pkg-config --cflags --libs orcu) -pthread
  "$T/routing_table"
  echo "   $(ldd "$T/routing_table" | grep liborcu)"
  cc -std=gnu11 -Wall -Wextra "$S/examples/rculfhash_orcu.c" -o "$T/rculfhash_orcu" \
    $(pkg-config --cflags --libs orcu-urcu) -pthread
  "$T/rculfhash_orcu"
  echo "== CMake: find_package(orcu CONFIG REQUIRED), orcu::urcu"
  cmake -S "$S/tests/compat/consumer" -B "$T/cmake" -DWITH_URCU=ON >/dev/null
  cmake --build "$T/cmake" >/dev/null
  "$T/cmake/consumer"
  echo "== liborcu-liburcu-dev: a liburcu program built through the shim"
  for fl in memb qsbr; do
    def=(); [ $fl = qsbr ] && def=(-DSWAP_QSBR)
    # Built through the shim's pkg-config files, as an unmodified build is.
    cc "${def[@]}" "$S/tests/compat/urcu/swap_prog.c" -o "$T/swap_shim_$fl" \
      $(PKG_CONFIG_PATH=$shim/lib/pkgconfig pkg-config --cflags --libs liburcu-$fl) -pthread -ldl
    "$T/swap_shim_$fl"
    echo "   swap_prog ($fl) ran on orcu, built through the shim"
  done
  echo "== orcu-tools"
  orcu-torture --duration 2 | tail -1
  man -w orcu-torture orcu-bench
  echo "== man orcu_call, man rcu_retire"
  man -w orcu_call rcu_retire
  MANWIDTH=80 man orcu_call 2>/dev/null | head -8
  MANWIDTH=80 man rcu_retire 2>/dev/null | sed -n 3,4p
  exit 0
fi

step() { echo; echo "== $*"; }
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
need="debhelper dpkg-dev lintian man-db help2man chrpath cmake pkg-config python3 liburcu-dev libck-dev systemtap-sdt-dev"
missing=""
for p in $need; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  step "installing$missing"
  $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
ver=$(sed -n 's/^project(orcu VERSION \([0-9.]*\).*/\1/p' "$S/CMakeLists.txt")
deb=$(cd "$S" && dpkg-parsechangelog -S Version)
[ "${deb%%-*}" = "$ver" ] || {
  echo "deb-check: debian/changelog says $deb, CMakeLists.txt $ver: add a changelog entry (dch -v $ver)" >&2
  exit 1; }

# A copy of the tree (committed and new files), so the build leaves the
# checkout and its parent untouched.
src="$T/orcu-$ver"
mkdir "$src"
if git -C "$S" rev-parse --git-dir >/dev/null 2>&1; then
  (cd "$S" && git ls-files -co --exclude-standard -z | tar --null -T - -cf -) | tar -xf - -C "$src"
else
  tar -C "$S" --exclude='./build*' --exclude=./debian/tmp -cf - . | tar -xf - -C "$src"
fi

step "dpkg-buildpackage -us -uc -b (DEB_BUILD_OPTIONS=${DEB_BUILD_OPTIONS:=nocheck noautodbgsym parallel=$(nproc)})"
export DEB_BUILD_OPTIONS
start=$(date +%s)
if ! (cd "$src" && dpkg-buildpackage -us -uc -b) >"$T/build.log" 2>&1; then
  tail -40 "$T/build.log"; echo "deb-check: dpkg-buildpackage failed" >&2; exit 1
fi
grep -E '^dpkg-(buildpackage|deb|genchanges|source|shlibdeps|gensymbols)' "$T/build.log" | grep -v '^dpkg-source: info: using options' || true
echo "built in $(( $(date +%s) - start )) s: $(cd "$T" && echo *.deb)"

step "lintian"
# Not "lintian ... && echo": set -e does not stop at a failing && list.
lintian --fail-on error,warning -i "$T"/*.changes
echo "lintian: no error, no warning"

for d in "$T"/*.deb; do
  step "$(dpkg-deb -f "$d" Package): $(dpkg-deb -f "$d" Depends)"
  dpkg -c "$d" | awk '{ $1=$2=$3=$4=$5=""; sub(/^ +/, ""); print }'
done

# The run-time swap: the liburcu ABI packages and what they depend on
# among ours; no -dev package anywhere in it.
deb_of() { ls "$T/$1"_*.deb 2>/dev/null || true; }
todo="liborcu-liburcu-memb8 liborcu-liburcu-qsbr8 liborcu-liburcu-bp8"; runtime=""
while [ -n "$todo" ]; do
  read -r p todo <<<"$todo"
  case " $runtime " in *" $p "*) continue;; esac
  runtime="$runtime $p"
  [ -n "$(deb_of "$p")" ] || { echo "deb-check: no package $p was built (the run-time swap)" >&2; exit 1; }
  deps=$(dpkg-deb -f "$(deb_of "$p")" Pre-Depends Depends | sed 's/^[A-Za-z-]*: //' |
    tr ',|' '\n\n' | sed 's/(.*//; s/:any//; s/ //g')
  for d in $deps; do
    case $d in *-dev) echo "deb-check: $p depends on $d: the run-time swap pulls in a development package" >&2; exit 1;; esac
    [ -z "$(deb_of "$d")" ] || todo="$todo $d"
  done
done
step "the run-time swap alone:$runtime (no -dev package)"
# Prebuilt liburcu programs, built against liburcu itself.
# shellcheck disable=SC2046
{
  cc "$S/tests/compat/urcu/swap_prog.c" -o "$T/swap_real_memb" $(pkg-config --cflags --libs liburcu) -pthread -ldl
  cc -DSWAP_QSBR "$S/tests/compat/urcu/swap_prog.c" -o "$T/swap_real_qsbr" $(pkg-config --cflags --libs liburcu-qsbr) -pthread -ldl
  cc "$S/tests/compat/urcu/bp_prog.c" -o "$T/swap_real_bp" $(pkg-config --cflags --libs liburcu-bp) -pthread -ldl
}
# shellcheck disable=SC2086
runtime_debs=$(for p in $runtime; do deb_of "$p"; done | tr '\n' ' ')

step "install"
if [ "$(id -u)" -eq 0 ] && unshare --mount --propagation private true 2>/dev/null; then
  # Everything dpkg writes lands on a tmpfs that disappears with the namespace.
  unshare --mount --propagation private bash -euc '
    T=$1; S=$2; R=$3; shift 3
    mkdir -p "$T/ov" && mount -t tmpfs ovl "$T/ov"
    for d in /usr /etc /var; do
      mkdir -p "$T/ov$d/u" "$T/ov$d/w"
      mount -t overlay overlay -o "lowerdir=$d,upperdir=$T/ov$d/u,workdir=$T/ov$d/w" "$d"
    done
    echo "(into an overlay of /usr /etc /var, discarded at the end)"
    # shellcheck disable=SC2086
    dpkg -i $R | grep -E "^Setting up"
    ldconfig
    bash "$S/scripts/deb-check.sh" --runtime "$T"
    echo; echo "== every package"
    dpkg -i "$T"/*.deb | grep -E "^Setting up"
    ldconfig
    bash "$S/scripts/deb-check.sh" --use "$T"' _ "$T" "$S" "$runtime_debs"
else
  pkgs=$(for d in "$T"/*.deb; do dpkg-deb -f "$d" Package; done)
  trap '$SUDO dpkg --purge $pkgs >/dev/null 2>&1 || true; rm -rf "$T"' EXIT
  # shellcheck disable=SC2086
  $SUDO dpkg -i $runtime_debs | grep -E "^Setting up"
  bash "$S/scripts/deb-check.sh" --runtime "$T"
  echo; echo "== every package"
  $SUDO dpkg -i "$T"/*.deb | grep -E "^Setting up"
  bash "$S/scripts/deb-check.sh" --use "$T"
fi
echo
echo "deb-check: packages built, lintian clean, the run-time swap installed alone and used, every package installed and used"
