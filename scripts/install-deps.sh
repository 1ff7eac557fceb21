#!/usr/bin/env bash
# Install the Debian packages orcu's build, tests, models and benchmarks use,
# only those missing.  Needs root (or sudo); without apt-get it just checks.
set -u
pkgs="cmake make gcc g++ pkg-config python3 binutils coreutils systemtap-sdt-dev liburcu-dev libck-dev libuv1-dev spin clang libclang-rt-14-dev clang-format clang-tidy gnuplot-nox"
missing=""
for p in $pkgs; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
# gnuplot-qt or gnuplot-x11 also provide gnuplot
if command -v gnuplot >/dev/null 2>&1; then missing=${missing/ gnuplot-nox/}; fi
[ -z "$missing" ] && exit 0
if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-deps: missing packages:$missing (no apt-get here)" >&2
  exit 0
fi
SUDO=""
[ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1 && SUDO="sudo"
echo "install-deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null 2>&1 || true
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null 2>&1 || \
  echo "install-deps: could not install some of:$missing" >&2
exit 0
