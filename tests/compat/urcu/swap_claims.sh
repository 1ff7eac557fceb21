#!/usr/bin/env bash
# swap_claims.sh <MIGRATING.md> [dir of unpacked packages]
# Checks the table of Debian binaries in docs/MIGRATING.md ("Which
# binaries qualify", after the line "<!-- swap-claims -->") against the
# binaries themselves: for each package present, every ELF file it ships
# that needs a liburcu flavour library must be listed, under "swap" if
# its undefined liburcu symbols are all functions (nm -D --undefined-only)
# and it needs no flavour the shim leaves to liburcu (mb, signal), else
# under "rebuild".  Packages are read from the installed system (dpkg), or
# from <dir>/<package>/ (dpkg -x of the .deb) when a directory is given.
# Exit 0 when every present package's row is right, 77 when none of the
# packages is present (CTest: skipped), 1 on a wrong or missing row.
set -euo pipefail
DOC=$1; UNPACKED=${2:-}
fail() { echo "swap_claims: $*" >&2; exit 1; }

rows=$(awk '/<!-- swap-claims -->/ { on = 1; next } on && /^\|/ { print; next } on && NF { exit }' "$DOC")
[ -n "$rows" ] || fail "$DOC has no table after <!-- swap-claims -->"
# A cell: names separated by commas, each maybe followed by a remark in
# parentheses; "—" for none.
names() { tr -d '`' <<<"$1" | tr ',' '\n' | sed 's/([^)]*)//; s/^ *//; s/ *$//' |
  grep -Fvx -e '' -e '—' | sort || true; }

files_of() {  # <package>: its regular files, by full path
  if [ -n "$UNPACKED" ]; then find "$UNPACKED/$1" -type f
  else dpkg -L "$1" | while read -r f; do [ -f "$f" ] && [ ! -L "$f" ] && echo "$f"; done; fi
}
present() {
  if [ -n "$UNPACKED" ]; then [ -d "$UNPACKED/$1" ]
  else dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'ok installed'; fi
}

checked=0
while IFS='|' read -r _ pkg swap rebuild _; do
  pkg=$(echo $pkg | tr -d '`')
  case $pkg in ""|*package*|-*) continue ;; esac
  present "$pkg" || { echo "$pkg: not present, not checked"; continue; }
  got_swap=""; got_rebuild=""
  while read -r f; do
    head -c4 "$f" 2>/dev/null | grep -q ELF || continue
    needed=$(readelf -d "$f" 2>/dev/null | grep -o 'liburcu[a-z-]*\.so\.8' | grep -Ev 'common|cds' || true)
    [ -n "$needed" ] || continue
    data=$(nm -D --undefined-only "$f" | awk '{ print $2 }' |
      grep -E '^urcu_[a-z]+_(reader|gp|has_sys_membarrier)$' | tr '\n' ' ' || true)
    left=$(grep -E 'liburcu-(mb|signal)\.so' <<<"$needed" | tr '\n' ' ' || true)
    if [ -z "$data$left" ]; then got_swap+="${f##*/}"$'\n'
    else got_rebuild+="${f##*/}"$'\n'; echo "$pkg: ${f##*/}: $data$left"; fi
  done < <(files_of "$pkg")
  want=$(names "$swap"); have=$(sort <<<"${got_swap%$'\n'}" | grep -v '^$' || true)
  [ "$want" = "$have" ] || fail "$pkg: the table says swap: $(echo $want), nm says: $(echo $have)"
  want=$(names "$rebuild"); have=$(sort <<<"${got_rebuild%$'\n'}" | grep -v '^$' || true)
  [ "$want" = "$have" ] || fail "$pkg: the table says rebuild: $(echo $want), nm says: $(echo $have)"
  echo "$pkg: swap: $(echo $(names "$swap")); rebuild: $(echo $(names "$rebuild"))"
  checked=$((checked + 1))
done <<<"$rows"
[ $checked -gt 0 ] || { echo "swap_claims: none of the table's packages is present"; exit 77; }
echo "swap_claims: $checked package(s) checked against nm -D"
