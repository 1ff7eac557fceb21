#!/bin/sh
# models/run.sh -- model-check orcu's Promela models with spin.
#
# For each model variant and each check: spin -a, compile pan, run it, and
# print one line.  orcu's models must verify; the historical kernel variants
# (and the mutants of orcu) must produce a counterexample.  Exit status 0 only
# if every expectation holds.  Everything generated goes to models/out/.
#
# Usage: models/run.sh            (needs spin and a C compiler)
#        CC=clang models/run.sh
set -u
cd "$(dirname "$0")" || exit 2
MODELS=$(pwd)
OUT=$MODELS/out
CC=${CC:-gcc}
command -v spin >/dev/null 2>&1 || { echo "FAIL: spin not found (apt-get install spin)"; exit 2; }
rm -rf "$OUT"
mkdir -p "$OUT"
fails=0
start=$(date +%s)

# check MODEL LABEL TAG DEFS KIND EXPECT
#   KIND:   safety  asserts + invalid end states (no never claim)
#           assert  asserts only (-E: a hang is not reported here)
#           ltl:N   the ltl formula N; safety search if N is a [] property
#           live:N  the ltl formula N; acceptance cycles with weak fairness
#   EXPECT: verify | cex
check() {
	model=$1 label=$2 tag=$3 defs=$4 kind=$5 expect=$6
	name=${kind%%:*}; claim=${kind#*:}
	dir=$OUT/$tag/$name
	mkdir -p "$dir"
	cp "$MODELS/$model.pml" "$dir/"
	(
		cd "$dir" || exit 2
		# shellcheck disable=SC2086
		spin $defs -a "$model.pml" >spin.out 2>&1 || exit 3
		case $name in
		safety) flags=-DNOCLAIM; run="-m1000000" ;;
		assert) flags=-DNOCLAIM; run="-E -m1000000" ;;
		ltl)    flags=-DSAFETY;  run="-m1000000 -N $claim" ;;
		live)   flags=-DNFAIR=3; run="-a -f -m1000000 -N $claim" ;;
		esac
		# shellcheck disable=SC2086
		$CC -w -O2 $flags -o pan pan.c >cc.out 2>&1 || exit 4
		# shellcheck disable=SC2086
		./pan $run >pan.out 2>&1
		exit 0
	)
	rc=$?
	rel=models/out/$tag/$name
	what="$model ($label) [$kind]"
	if [ $rc -ne 0 ]; then
		echo "FAIL $what: spin/cc failed, see $rel/"
		fails=$((fails + 1)); return
	fi
	pan=$dir/pan.out
	states=$(sed -n 's/^ *\([0-9.e+]*\) states, stored.*/\1/p' "$pan" | head -n 1)
	secs=$(sed -n 's/^pan: elapsed time \([0-9.e+-]*\) seconds.*/\1/p' "$pan" | head -n 1)
	stats="${states:-?} states, ${secs:-?}s"
	if grep -q 'errors: 0' "$pan"; then
		if grep -qE 'max search depth too small|out of memory|search not completed' "$pan"; then
			echo "FAIL $what: search incomplete ($stats), see $rel/pan.out"
			fails=$((fails + 1))
		elif [ "$expect" = verify ]; then
			echo "PASS $what: verified ($stats)"
		else
			echo "FAIL $what: no counterexample found, expected one ($stats)"
			fails=$((fails + 1))
		fi
		return
	fi
	err=$(grep -m1 '^pan:1:' "$pan" | sed 's/^pan:1: //')
	case $name in
	ltl|live)
		depth=$(echo "$err" | sed -n 's/.*(\(at depth [0-9]*\)).*/\1/p')
		case $err in
		*acceptance*) err="ltl '$claim' violated (acceptance cycle $depth)" ;;
		*) err="ltl '$claim' violated ($depth)" ;;
		esac ;;
	esac
	trail=$rel/$model.pml.trail
	if [ "$expect" = cex ]; then
		echo "PASS $what: counterexample found as expected: $err (trail: $trail)"
	else
		echo "FAIL $what: $err (trail: $trail)"
		fails=$((fails + 1))
	fi
	if [ -f "$dir/$model.pml.trail" ]; then
		(
			cd "$dir" || exit 0
			# shellcheck disable=SC2086
			spin $defs -t -p -g "$model.pml" >trail.txt 2>&1
			echo "    | spin $defs -t -p -g $model.pml | tail  (full: $rel/trail.txt)"
			# the last steps, then the final state: blocked processes,
			# non-empty queues, and the globals on one line
			grep -E '^ *[0-9]+:.*\[|CYCLE|Error|trail ends' trail.txt |
				grep -v 'proc  - ' | tail -n 8 | sed 's/^/    | /'
			sed -n '/^#processes/,$p' trail.txt | awk '
				/^#processes/ { next }
				/queue [0-9]+ \(/ { sub(/^[ \t]+/, ""); if ($NF ~ /\]$/) print "    | final " $0; next }
				/ = / { sub(/^[ \t]+/, ""); g = g (g ? ", " : "") $0; next }
				/proc  - |valid end state|processes created/ { next }
				/proc / { sub(/^ *[0-9]+:[ \t]*/, ""); print "    | stopped at: " $0 }
				END { print "    | globals: " g }'
		)
	fi
}

LW=leader_wake
check $LW "orcu"               lw_orcu     ""              safety     verify
check $LW "orcu"               lw_orcu     ""              ltl:nolost verify
check $LW "orcu"               lw_orcu     ""              live:live  verify
check $LW "before 11ed7f934cb8" lw_prefix   "-DPREFIX"      ltl:nolost cex
check $LW "before 11ed7f934cb8" lw_prefix   "-DPREFIX"      live:live  cex
check $LW "mutant: no re-scan" lw_norescan "-DNORESCAN"    ltl:nolost cex
check $LW "mutant: late publish" lw_late   "-DLATE_PUBLISH" ltl:nolost cex
check $LW "orcu, lazy"         lw_lazy     "-DLAZY"        ltl:nolost verify
check $LW "orcu, lazy"         lw_lazy     "-DLAZY"        live:live  verify
check $LW "mutant: no lazy re-scan" lw_nolazy "-DLAZY -DNO_LAZY_RESCAN" ltl:nolost cex
check $LW "src 9552413: lazy take arms nothing" lw_unarmed "-DLAZY -DLAZY_LEFT_UNARMED" ltl:nolost cex

B=barrier
check $B "orcu"                    b_orcu    ""           safety    verify
check $B "orcu"                    b_orcu    ""           live:live verify
check $B "before d7e29933969e"     b_2014    "-DV2014"    assert    verify
check $B "before d7e29933969e"     b_2014    "-DV2014"    live:live cex
check $B "kernel d7e29933969e"     b_2014fix "-DV2014FIX" live:live cex
check $B "kernel d7e29933969e"     b_2014fix "-DV2014FIX" assert    cex
check $B "mutant: list emptiness"  b_listempty "-DLIST_EMPTY" assert cex
check $B "mutant: no kick"         b_nokick  "-DNO_KICK"  live:live cex

SV=serve
check $SV "orcu"                      sv_orcu      ""                   safety     verify
check $SV "orcu"                      sv_orcu      ""                   ltl:nolost verify
check $SV "orcu"                      sv_orcu      ""                   live:live  verify
check $SV "orcu, slot 1's follower"   sv_follower  "-DFOLLOWER"         safety     verify
check $SV "mutant: clear after serve" sv_clearafter "-DCLEAR_AFTER"      ltl:nolost cex
check $SV "mutant: clear after serve" sv_clearafter "-DCLEAR_AFTER"      live:live  cex
check $SV "mutant: attach, no wake"   sv_attachgap "-DATTACH_GAP"       ltl:nolost cex
check $SV "mutant: bit cleared after"  sv_bitafter  "-DCLEAR_BIT_AFTER"  ltl:nolost cex
check $SV "mutant: batch hands nothing back" sv_nohandback "-DNO_HAND_BACK" ltl:nolost cex

RW=reader_wake
check $RW "orcu memb"                 rw_memb      ""                      safety     verify
check $RW "orcu memb"                 rw_memb      ""                      ltl:nolost verify
check $RW "orcu memb"                 rw_memb      ""                      live:live  verify
check $RW "orcu qsbr"                 rw_qsbr      "-DQSBR"                safety     verify
check $RW "orcu qsbr"                 rw_qsbr      "-DQSBR"                live:live  verify
check $RW "orcu memb, 3 readers"      rw_memb3     "-DNR=3"                live:live  verify
check $RW "orcu, wake if xchg saw 1"  rw_wakexchg  "-DWAKE_IF_XCHG"        live:live  verify
check $RW "M1: no membarrier"         rw_nomb      "-DNR=1 -DNOMB"         safety     cex
check $RW "M1: no membarrier"         rw_nomb      "-DNR=1 -DNOMB"         ltl:nolost cex
check $RW "M1: no membarrier, qsbr"   rw_nomb_qsbr "-DNR=1 -DNOMB -DQSBR"  ltl:nolost cex
check $RW "orcu qsbr, reader fence"   rw_qsbr_rf   "-DNOMB -DQSBR -DREADER_FENCE" ltl:nolost verify
check $RW "M2: load before store"     rw_loadfirst "-DNR=1 -DLOAD_FIRST"   safety     cex
check $RW "M3: no re-scan"            rw_norescan  "-DNR=1 -DNORESCAN"     safety     cex
check $RW "M4: trust the wake"        rw_trust     "-DTRUST_WAKE"          assert     cex
check $RW "orcu memb + qsbr"          rw_mixed     "-DMIXED"               safety     verify
check $RW "orcu memb + qsbr"          rw_mixed     "-DMIXED"               ltl:nolost verify
check $RW "orcu memb + qsbr"          rw_mixed     "-DMIXED"               live:live  verify
check $RW "M5: barrier chosen at start" rw_armstart "-DMIXED -DARM_AT_START" ltl:nolost cex
check $RW "M6: no upgrade"            rw_noupgrade "-DMIXED -DNO_UPGRADE"  ltl:nolost cex

RP=reader_phase
check $RP "orcu"                      rp_orcu      ""              safety     verify
check $RP "orcu"                      rp_orcu      ""              ltl:nolost verify
check $RP "orcu"                      rp_orcu      ""              live:live  verify
check $RP "orcu, 3 sections each"     rp_k3        "-DK=3"         ltl:nolost verify
check $RP "before the targeted wake"  rp_untarg    "-DUNTARGETED"  ltl:nolost verify
check $RP "mutant: phase read early"  rp_early     "-DPHASE_EARLY" ltl:nolost cex
check $RP "mutant: phase read early"  rp_early     "-DPHASE_EARLY" safety     cex
check $RP "mutant: same phase wakes"  rp_same      "-DSAME_PHASE"  ltl:nolost cex

UP=unpark
check $UP "orcu"                      up_orcu      ""                 safety     verify
check $UP "4ce5399: idle, then fence" up_idle      "-DIDLE_FIRST"     assert     cex
check $UP "mutant: slow path skips unparking" up_noslow "-DNO_SLOW_UNPARK" assert cex

PW=postq_wake
check $PW "orcu"                      pw_orcu      ""              safety     verify
check $PW "orcu"                      pw_orcu      ""              ltl:nolost verify
check $PW "orcu"                      pw_orcu      ""              live:live  verify
check $PW "mutant: no membarrier"     pw_nomb      "-DNOMB"        ltl:nolost cex
check $PW "mutant: no re-scan"        pw_norescan  "-DNORESCAN"    ltl:nolost cex
check $PW "mutant: relaxed owners--"  pw_rowners   "-DRELAXED_OWNERS" ltl:nolost cex
check $PW "mutant: relaxed owned = 0" pw_rowned    "-DRELAXED_OWNED"  safety     cex

MT=membar_target
check $MT "orcu: mask | cpu_id"       mt_orcu      ""                      safety     verify
check $MT "orcu, 3 sections, 4 moves, 3 changes" mt_big "-DK=3 -DMOVES=4 -DCHANGES=3" safety verify
check $MT "mutant: a CPU it runs on skipped" mt_skip "-DSKIP_CPU"         safety     cex
check $MT "mutant: the mask alone"    mt_norseq    "-DNO_RSEQ"             safety     cex

end=$(date +%s)
if [ $fails -eq 0 ]; then
	echo "ALL PASS ($((end - start))s)"
	exit 0
fi
echo "$fails check(s) FAILED ($((end - start))s)"
exit 1
