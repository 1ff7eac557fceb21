#!/usr/bin/env bash
# deb-check.sh - the Debian packages, as a user gets them: builds them from
# a copy of the tree (dpkg-buildpackage -us -uc -b; tests off, as CI has
# run the suite: DEB_BUILD_OPTIONS=nocheck, unless DEB_BUILD_OPTIONS is
# set), runs lintian (any error fails), lists each package's files,
# installs them, and with only what they installed: builds the examples
# with pkg-config and CMake and runs them, runs a liburcu program on the
# compatibility package (built through its pkg-config files, and a binary
# built against liburcu loaded from its directory), a short orcu-torture
# run, and man orcu_call.
# The install goes into a throwaway overlay of /usr, /etc and /var (a
# private mount namespace) when the machine allows it, else into the
# system, and the packages are purged afterwards.
set -euo pipefail
S=$(cd "$(dirname "$0")/.." && pwd)
export DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8

if [ "${1:-}" = --use ]; then
  # Second half: runs with the packages installed.  $2: work directory.
  T=$2
  ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
  shim=/usr/lib/$ma/orcu/urcu-shim
  unset PKG_CONFIG_PATH
  echo "== pkg-config: $(pkg-config --cflags --libs orcu)"
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
  echo "== liborcu-urcu-compat: a liburcu program"
  for fl in memb qsbr; do
    def=(); [ $fl = qsbr ] && def=(-DSWAP_QSBR)
    # Built through the shim's pkg-config files, as an unmodified build is.
    cc "${def[@]}" "$S/tests/compat/urcu/swap_prog.c" -o "$T/swap_shim_$fl" \
      $(PKG_CONFIG_PATH=$shim/lib/pkgconfig pkg-config --cflags --libs liburcu-$fl) -pthread -ldl
    "$T/swap_shim_$fl"
    # Built against the real liburcu, loaded from the shim's directory.
    cc "${def[@]}" "$S/tests/compat/urcu/swap_prog.c" -o "$T/swap_real_$fl" \
      $(pkg-config --cflags --libs liburcu-$fl) -pthread -ldl
    LD_LIBRARY_PATH=$shim/lib "$T/swap_real_$fl"
    echo "   swap_prog ($fl) ran on orcu, built through the shim and swapped in"
  done
  echo "== orcu-tools"
  orcu-torture --duration 2 | tail -1
  man -w orcu-torture orcu-bench
  echo "== man orcu_call"
  man -w orcu_call
  MANWIDTH=80 man orcu_call 2>/dev/null | head -8
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
lintian --fail-on error -I "$T"/*.changes && echo "lintian: no error"

for d in "$T"/*.deb; do
  step "dpkg -c $(basename "$d")"
  dpkg -c "$d" | awk '{ $1=$2=$3=$4=$5=""; sub(/^ +/, ""); print }'
done

step "install"
if [ "$(id -u)" -eq 0 ] && unshare --mount --propagation private true 2>/dev/null; then
  # Everything dpkg writes lands on a tmpfs that disappears with the namespace.
  unshare --mount --propagation private bash -euc '
    T=$1; S=$2; shift 2
    mkdir -p "$T/ov" && mount -t tmpfs ovl "$T/ov"
    for d in /usr /etc /var; do
      mkdir -p "$T/ov$d/u" "$T/ov$d/w"
      mount -t overlay overlay -o "lowerdir=$d,upperdir=$T/ov$d/u,workdir=$T/ov$d/w" "$d"
    done
    echo "(into an overlay of /usr /etc /var, discarded at the end)"
    dpkg -i "$T"/*.deb | grep -E "^Setting up"
    ldconfig
    bash "$S/scripts/deb-check.sh" --use "$T"' _ "$T" "$S"
else
  $SUDO dpkg -i "$T"/*.deb | grep -E "^Setting up"
  pkgs=$(for d in "$T"/*.deb; do dpkg-deb -f "$d" Package; done)
  trap '$SUDO dpkg --purge $pkgs >/dev/null; rm -rf "$T"' EXIT
  bash "$S/scripts/deb-check.sh" --use "$T"
fi
echo
echo "deb-check: packages built, lintian clean of errors, installed and used"
