#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A stress loop of view-change scenarios (selftests/host/views.sh), by
# default the hostile-peer ones, where a member is taken out while it
# still writes: each round replays them with the next seed, and every
# guest console of every round is scanned for kernel splats (KASAN,
# lockdep, a double fault...).  Rounds that pass are deleted; the others
# stay in OUTDIR/round-N.
#
#   selftests/host/stress-views.sh [ROUNDS] [OUTDIR]    (default 20, build/stress)
#   env: STRESS_SEED   the first round's seed (default: from the clock);
#                      round N uses STRESS_SEED + N, which VIEWS_SEED replays
#        STRESS_ONLY   scenarios (views.sh names, comma separated)
#        SPINDLE_KVER, SPINDLE_VM_KERNEL: the kernel, as for vmcluster
# Ends with "stress: R rounds ... N failed, K with a splat"; exit 1 if any.
set -u
cd "$(dirname "$0")/../.." || exit 1
ROUNDS=${1:-20}
OUT=${2:-build/stress}
ONLY=${STRESS_ONLY:-hostile_counters_back,hostile_row,hostile_lengths,hostile_nulls,hostile_hdr_torn,hostile_foreign_key}
SEED=${STRESS_SEED:-$(( $(date +%s) % 100000 ))}
rm -rf "$OUT"
mkdir -p "$OUT"
kernel=${SPINDLE_VM_KERNEL:+$(cat "$SPINDLE_VM_KERNEL/kernelrelease" 2>/dev/null)}
kernel=${kernel:-$(scripts/kver -q)}
echo "# stress: $ROUNDS rounds of $ONLY on $kernel, seeds $((SEED + 1))..$((SEED + ROUNDS))"
start=$(date +%s)
failed=0
splats=0
scen_runs=0
for r in $(seq 1 "$ROUNDS"); do
	d=$OUT/round-$r
	VIEWS_SEED=$((SEED + r)) VIEWS_ONLY=$ONLY selftests/host/views.sh "$d" >"$d.ktap" 2>&1
	rc=$?
	ok=$(grep -c '^ok ' "$d.ktap")
	bad=$(grep -c '^not ok ' "$d.ktap")
	scen_runs=$((scen_runs + ok + bad))
	splat=$(scripts/vmcluster --scan-log "$d"/*/console-*.log 2>/dev/null | head -n 3)
	if [ -n "$splat" ]; then
		splats=$((splats + 1))
		echo "# round $r (seed $((SEED + r))): kernel splat:"
		echo "$splat" | sed 's/^/#   /'
	fi
	if [ $rc != 0 ] || [ "$bad" != 0 ]; then
		failed=$((failed + 1))
		echo "# round $r (seed $((SEED + r))): $bad failed: $(grep '^not ok' "$d.ktap" | cut -d' ' -f4- | tr '\n' ' ')"
	elif [ -z "$splat" ]; then
		rm -rf "$d" "$d.ktap"
	fi
	echo "# round $r: $ok passed, $bad failed, $(( $(date +%s) - start )) s so far"
done
echo "stress: $ROUNDS rounds ($scen_runs scenario runs) on $kernel, seeds $((SEED + 1))..$((SEED + ROUNDS)): $failed failed, $splats with a splat, $(( $(date +%s) - start )) s"
[ $failed = 0 ] && [ $splats = 0 ]
