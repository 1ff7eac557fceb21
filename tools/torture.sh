#!/usr/bin/env bash
# torture.sh - the long orcu-torture matrix behind `make torture`.
#   bash tools/torture.sh <builddir> [total_seconds]   (default 600)
# Splits the total over the configurations below (busted check fixed at
# 10 s), logs each run to <builddir>/torture-logs/<name>.log, prints one
# summary line per run and ends with SUCCESS or FAILURE (exit 0 or 1).
#   bash tools/torture.sh --expect-failure <orcu-torture> [args...]
# Runs one configuration that must be caught (the busted flavor): passes
# only on exit status 1, a reader-detected error and FAILURE as last line.
set -u

expect_failure() {
	local bin=$1 out rc last
	shift
	out=$("$bin" "$@")
	rc=$?
	printf '%s\n' "$out" | grep -v '^orcu-torture: ERROR' | tail -n 16
	printf '%s\n' "$out" | grep '^orcu-torture: ERROR' | head -n 3
	last=$(printf '%s\n' "$out" | tail -n 1)
	if [ "$rc" -ne 1 ]; then
		echo "expect-failure: exit status $rc, expected 1"
		return 1
	fi
	if [ "$last" != FAILURE ]; then
		echo "expect-failure: last line \"$last\", expected FAILURE"
		return 1
	fi
	# Caught by the oracle itself, not by some unrelated error.
	if ! printf '%s\n' "$out" | grep -q '^orcu-torture: ERROR (\(too-old\|freed\|reused\))'; then
		echo "expect-failure: FAILURE without a reader-detected error"
		return 1
	fi
	echo "expect-failure: the broken flavor was caught"
	return 0
}

if [ "${1:-}" = --expect-failure ]; then
	shift
	expect_failure "$@"
	exit $?
fi

B=${1:?usage: torture.sh <builddir> [total_seconds]}
TOTAL=${2:-600}
BIN=$B/orcu-torture
if [ ! -x "$BIN" ]; then
	echo "torture.sh: $BIN not built" >&2
	exit 1
fi
LOGS=$B/torture-logs
mkdir -p "$LOGS"

CPUS=possible=16,online=0-3
MIXED=0,2,5-7
# name | options (each runs for its share of TOTAL)
CONFIGS=(
	"memb-all-barrier|--readers 4 --qsbr-readers 0 --fake-writers 2 --cpus $CPUS --nocbs all --barrier-torture"
	"qsbr-none-hotplug|--readers 0 --qsbr-readers 4 --fake-writers 2 --cpus $CPUS --nocbs none --hotplug --barrier-torture"
	"mixed-mixed-hotplug-offload|--readers 2 --qsbr-readers 2 --fake-writers 2 --cpus $CPUS --nocbs $MIXED --hotplug --toggle-offload --barrier-torture"
	"flood-offloaded|--readers 2 --qsbr-readers 1 --fake-writers 2 --cpus $CPUS --nocbs all --flood --barrier-torture"
	"flood-inline-hotplug|--readers 1 --qsbr-readers 2 --fake-writers 2 --cpus $CPUS --nocbs none --flood --hotplug"
	"qsbr-inline-flood-lazy-fork|--readers 1 --qsbr-readers 3 --fake-writers 2 --cpus $CPUS --nocbs none --flood --fork --hotplug --barrier-torture"
	"big4096|--readers 2 --qsbr-readers 2 --fake-writers 2 --cpus possible=4096,online=0-15 --nocbs all --hotplug --toggle-offload --barrier-torture"
	"big4096-flat-inline|--readers 2 --qsbr-readers 2 --fake-writers 2 --cpus possible=4096,online=0-7 --stride 1 --nocbs $MIXED --hotplug --barrier-torture"
	"delays|--readers 2 --qsbr-readers 2 --fake-writers 3 --cpus $CPUS --nocbs $MIXED --delays 500 --hotplug --toggle-offload --barrier-torture --move-readers"
	"no-membarrier|ENV=ORCU_NO_MEMBARRIER=1 --readers 3 --qsbr-readers 1 --fake-writers 2 --cpus $CPUS --nocbs all --hotplug --barrier-torture"
	"real-topology|--readers 2 --qsbr-readers 1 --fake-writers 2 --hotplug --toggle-offload --barrier-torture --move-readers"
)
BUSTED_SECS=10
EACH=$(( (TOTAL - BUSTED_SECS) / ${#CONFIGS[@]} ))
[ "$EACH" -lt 5 ] && EACH=5

echo "orcu torture matrix: ${#CONFIGS[@]} configurations x ${EACH} s + busted check ${BUSTED_SECS} s; logs in $LOGS"
failed=0
summary=()
for c in "${CONFIGS[@]}"; do
	name=${c%%|*}
	args=${c#*|}
	envs=()
	if [[ $args == ENV=* ]]; then
		envs=("${args%% *}")
		envs=("${envs[0]#ENV=}")
		args=${args#* }
	fi
	start=$(date +%s)
	# shellcheck disable=SC2086  # options are word lists on purpose
	env "${envs[@]}" "$BIN" --duration "$EACH" $args >"$LOGS/$name.log" 2>&1
	rc=$?
	secs=$(( $(date +%s) - start ))
	result=$(tail -n 1 "$LOGS/$name.log")
	hist=$(grep '^pipe histogram' "$LOGS/$name.log" | sed 's/.*: //')
	seed=$(sed -n 's/^orcu-torture: seed \([0-9]*\).*/\1/p' "$LOGS/$name.log")
	if [ "$rc" -ne 0 ] || [ "$result" != SUCCESS ]; then
		failed=$((failed + 1))
		result="FAILURE (exit $rc; replay: --seed $seed $args)"
	fi
	line=$(printf '%-28s %4d s  %s  [pipe %s]' "$name" "$secs" "$result" "$hist")
	echo "$line"
	summary+=("$line")
done

start=$(date +%s)
expect_failure "$BIN" --busted --duration "$BUSTED_SECS" --readers 2 --qsbr-readers 2 \
	--cpus "$CPUS" >"$LOGS/busted.log" 2>&1
rc=$?
secs=$(( $(date +%s) - start ))
if [ "$rc" -eq 0 ]; then
	result="caught (FAILURE, as it must)"
else
	failed=$((failed + 1))
	result="NOT caught: $(tail -n 1 "$LOGS/busted.log")"
fi
line=$(printf '%-28s %4d s  %s' "busted (must fail)" "$secs" "$result")
echo "$line"
summary+=("$line")

echo
echo "== torture summary =="
printf '%s\n' "${summary[@]}"
if [ "$failed" -ne 0 ]; then
	echo "$failed configuration(s) failed; logs in $LOGS"
	echo FAILURE
	exit 1
fi
echo SUCCESS
exit 0
