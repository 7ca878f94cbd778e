#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The test bed's own promises (runs on the host; scripts/check's "testbed"
# suite): a guest whose command fails fails the run and is named; --kill
# hard-kills a guest without failing the run, at a time counted from its
# command's start or from a barrier every guest reached; --partition cuts
# guests off from the others, both ways; guests see each other and nothing
# else; --boot-timeout counts the command's --timeout from the go-ahead,
# not from the launch; the splat scanner catches kernel reports, not user output; a
# cluster that never came up is the test bed's failure (exit 3), and
# vmcluster_again boots it once more, keeping the first attempt.
#   selftests/host/testbed.sh [OUTDIR]     prints KTAP
cd "$(dirname "$0")/../.." || exit 1
. selftests/lib/ktap.sh
OUT=${1:-build/testbed}
rm -rf "$OUT"
mkdir -p "$OUT"
ktap_plan 11
# Each run's wall limit (vmcluster --timeout) covers its guests' boot as
# well as its command: stock guests boot in under 40 s, a debug kernel's
# (SPINDLE_VM_KERNEL: KASAN, lockdep) take minutes: 6.12-rt debug took
# 87 s alone and 110 s two at once on two cores, so 120 s timed runs out
# before their commands began.  views.sh allows the same.
LIMIT=120
[ -n "${SPINDLE_VM_KERNEL:-}" ] && LIMIT=600

scripts/vmcluster -n 2 --no-module --timeout $LIMIT --out "$OUT/fail" -- \
	sh -c '[ "$SPINDLE_NODE" != 1 ]' >"$OUT/fail.log" 2>&1
rc=$?
ktap_diag "a failing guest: exit $rc; $(grep 'FAILED' "$OUT/fail.log" | head -n 2 | tr '\n' ' ')"
ktap_check "failing_guest_fails_the_run" test $rc = 1
ktap_check "failing_guest_is_named" grep -q 'FAILED node 1: command exited 1' "$OUT/fail.log"
ktap_check "other_guest_ok" sh -c "! grep -q 'FAILED node 0' '$OUT/fail.log'"

# Both forms of --kill in one run.  --kill K@T: guest 2 dies K2 s after
# its command started (it marks the barrier first, so that the others can
# pass it: three process starts, over a second each on a debug guest).
# --kill K@BARRIER+T: guest 0 reaches the barrier 4 s late; guest 1 must
# die a second after that, not a second after its own arrival.  Every
# guest checks what it sees of the network: its own address, one link
# beside lo, no default route.
K2=3
[ -n "${SPINDLE_VM_KERNEL:-}" ] && K2=20
scripts/vmcluster -n 3 --no-module --timeout $LIMIT --kill 2@$K2 --kill 1@go+1 \
	--out "$OUT/kill" -- \
	sh -c '. selftests/lib/spindle.sh
	       [ "$SPINDLE_NODE" = 2 ] && mark go
	       ip -o addr show eth0 | grep -q "10.77.0.$((SPINDLE_NODE + 1))/24" &&
		[ "$(ip -o link | grep -vc " lo:")" = 1 ] && ! ip route | grep -q default ||
		exit 1
	       case $SPINDLE_NODE in
	       0) sleep 4
		  barrier go || exit 1
		  exec sleep 3 ;;
	       1) barrier go || exit 1
		  sleep 1.5; touch "$SPINDLE_OUT/too_late"; sleep 10 ;;
	       2) exec sleep 60 ;;
	       esac' >"$OUT/kill.log" 2>&1
rc=$?
line=$(grep 'node 1: killed' "$OUT/kill.log")
ktap_diag "--kill 2@$K2 --kill 1@go+1: exit $rc; $(grep 'node 2: killed' "$OUT/kill.log"); ${line:-not killed}"
ktap_check "kill_is_not_a_failure" test $rc = 0
ktap_check "killed_guest_reported" grep -Eq \
	"node 2: killed ($K2|$((K2 + 1)))\.[0-9] s after its command started" "$OUT/kill.log"
ktap_check "kill_counts_from_a_barrier" sh -c "[ $rc = 0 ] && [ ! -e '$OUT/kill/node1/too_late' ] &&
	echo '$line' | grep -Eq 'killed ([4-9]|[1-9][0-9])\.[0-9] s after its command started \(1\.[0-9] s after barrier go\)'"

# --partition K@BARRIER+T: guest 2 cut off a second after the barrier;
# then 0 and 1 still reach each other, and nobody reaches across.
# --boot-timeout B --timeout T, in the same run: the command ends well
# within T s of the go-ahead and passes however long the boot took; the
# check asks that the boot plus the command took longer than T, so that a
# limit counted from the launch would have failed it (three stock guests
# boot in over 10 s here; a debug kernel's in minutes, and its reports
# wait 5 s for kmemleak, then scan: T is 60 there).
T=15
[ -n "${SPINDLE_VM_KERNEL:-}" ] && T=60
scripts/vmcluster -n 3 --no-module --boot-timeout $LIMIT --timeout $T --partition 2@go+1 \
	--out "$OUT/part" -- \
	sh -c '. selftests/lib/spindle.sh
	       barrier go || exit 1
	       sleep 3
	       reach() { ping -c 2 -W 1 -i 0.3 "10.77.0.$(($1 + 1))" >/dev/null; }
	       case $SPINDLE_NODE in
	       0) reach 1 && ! reach 2 ;;
	       1) reach 0 && ! reach 2 ;;
	       2) ! reach 0 && ! reach 1 ;;
	       esac' >"$OUT/part.log" 2>&1
rc=$?
took=$(awk '$1 == "0" && $2 == "ok" { print $4 + $5 }' "$OUT/part.log")
ktap_diag "--partition 2@go+1 --boot-timeout $LIMIT --timeout $T: exit $rc; boot + command ${took:-?} s; $(grep 'cut off\|FAILED' "$OUT/part.log" | tr '\n' ' ')"
ktap_check "timeout_counts_from_the_go_ahead" sh -c "[ $rc = 0 ] &&
	awk 'BEGIN { exit !(${took:-0} > $T) }'"
ktap_check "partition_cuts_both_ways" sh -c "[ $rc = 0 ] && grep -q 'nodes 2 cut off' '$OUT/part.log'"

# a guest that never comes up (here: QEMU refuses its NIC): exit 3, not 1;
# and vmcluster_again (scripts/check, views.sh) boots the run once more
SPINDLE_VM_NIC=no-such-nic scripts/vmcluster -n 1 --no-module --timeout $LIMIT \
	--out "$OUT/never" -- true >"$OUT/never.log" 2>&1
rc=$?
ktap_diag "a guest that never comes up: exit $rc; $(grep 'test bed failed' "$OUT/never.log")"
ktap_check "never_up_is_the_test_beds_failure" test $rc = 3
(. scripts/lib/vmcluster-again.sh
 SPINDLE_VM_NIC=no-such-nic vmcluster_again "$OUT/again.log" -n 1 --no-module \
	--timeout $LIMIT --out "$OUT/again" -- true) >"$OUT/again.out"
rc=$?
ktap_check "never_up_booted_once_more" sh -c "[ $rc = 3 ] && [ -d '$OUT/again.bootfail' ] &&
	[ -f '$OUT/again.log.bootfail' ] && grep -q 'booted once more' '$OUT/again.out'"

printf '[    1.0] WARNING: CPU: 0 PID: 1 at x.c:1 f+0x1/0x2\n' >"$OUT/splat.log"
printf 'WARNING: this line was printed by a program\n[    2.0] spindle: module verification failed: signature and/or required key missing - tainting kernel\n' >"$OUT/clean.log"
scripts/vmcluster --scan-log "$OUT/splat.log" >/dev/null 2>&1
a=$?
scripts/vmcluster --scan-log "$OUT/clean.log" >/dev/null 2>&1
b=$?
ktap_check "scanner_flags_splats_only" test $a = 1 -a $b = 0
ktap_finish
