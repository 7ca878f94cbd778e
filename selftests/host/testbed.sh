#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The test bed's own promises (runs on the host; scripts/check's "testbed"
# suite): a guest whose command fails fails the run and is named; --kill
# hard-kills a guest without failing the run; guests see each other and
# nothing else; the splat scanner catches kernel reports, not user output.
#   selftests/host/testbed.sh [OUTDIR]     prints KTAP
cd "$(dirname "$0")/../.." || exit 1
. selftests/lib/ktap.sh
OUT=${1:-build/testbed}
rm -rf "$OUT"
mkdir -p "$OUT"
ktap_plan 6

scripts/vmcluster -n 2 --no-module --timeout 120 --out "$OUT/fail" -- \
	sh -c '[ "$SPINDLE_NODE" != 1 ]' >"$OUT/fail.log" 2>&1
rc=$?
ktap_diag "a failing guest: exit $rc; $(grep 'FAILED' "$OUT/fail.log" | head -n 2 | tr '\n' ' ')"
ktap_check "failing_guest_fails_the_run" test $rc = 1
ktap_check "failing_guest_is_named" grep -q 'FAILED node 1: command exited 1' "$OUT/fail.log"
ktap_check "other_guest_ok" sh -c "! grep -q 'FAILED node 0' '$OUT/fail.log'"

scripts/vmcluster -n 2 --no-module --timeout 120 --kill 1@1 --out "$OUT/kill" -- \
	sh -c 'ip -o addr show eth0 | grep -q "10.77.0.$((SPINDLE_NODE + 1))/24" &&
	       [ "$(ip -o link | grep -vc " lo:")" = 1 ] && ! ip route | grep -q default &&
	       sleep 5' >"$OUT/kill.log" 2>&1
rc=$?
ktap_diag "--kill 1@1: exit $rc; $(grep 'killed' "$OUT/kill.log" | head -n 1)"
ktap_check "kill_is_not_a_failure" test $rc = 0
ktap_check "killed_guest_reported" grep -q 'killed' "$OUT/kill.log"

printf '[    1.0] WARNING: CPU: 0 PID: 1 at x.c:1 f+0x1/0x2\n' >"$OUT/splat.log"
printf 'WARNING: this line was printed by a program\n[    2.0] spindle: module verification failed: signature and/or required key missing - tainting kernel\n' >"$OUT/clean.log"
scripts/vmcluster --scan-log "$OUT/splat.log" >/dev/null 2>&1
a=$?
scripts/vmcluster --scan-log "$OUT/clean.log" >/dev/null 2>&1
b=$?
ktap_check "scanner_flags_splats_only" test $a = 1 -a $b = 0
ktap_finish
