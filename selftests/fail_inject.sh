#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Failures no test bed produces on its own, injected through debugfs
# fail_function into the module's injectable functions (ALLOW_ERROR_
# INJECTION: spindle_subdev_add, spindle_thread_create, spindle_listen,
# spindle_conn_alloc).  Only the debug kernels (scripts/debug-kernel) have
# fail_function: elsewhere the test is skipped.
#
#   group_up_fails_*  a group up fails at each of its late steps: the second
#                     subgroup's device (the first one made), the predicate
#                     thread, the listener.  spindlectl up gets the injected
#                     errno, no group and no /dev/spindleN is left, and the
#                     same configuration comes up right after and carries
#                     messages;
#   file_open_while_up_fails  a file opened on a group's device while its
#                     up is held after the devices exist (fault_up_delay_ms)
#                     sees the group go when the listener then fails: poll
#                     says POLLHUP, RECV says ENOTCONN (selftests/guest/
#                     up_hup);
#   rejoin_retried    (3 guests or more) guest 0 leaves and comes back, and the
#                     first connection each other guest makes for its
#                     rejoin cannot be allocated: the attempt is retried
#                     and the member is back in a view;
#   qp_create_fails_quietly  (cluster) each guest's first 12 QP creations
#                     fail while a group forms: the attempts are retried
#                     and the group comes up, and each member's streak of
#                     failures is logged once when it begins and once
#                     when a QP is made, not per try;
# then the module unloads and kmemleak finds nothing.
. selftests/lib/ktap.sh
. selftests/lib/spindle.sh

FF=/sys/kernel/debug/fail_function
mount -t debugfs none /sys/kernel/debug 2>/dev/null
if [ ! -d $FF ]; then
	echo "1..0 # SKIP no fail_function in $(uname -r) (the debug kernels have it)"
	exit 4
fi
spindle_load || exit 1
N=${SPINDLE_NODES:-1}
ME=${SPINDLE_NODE:-0}
CTL=build/bin/spindlectl
D=${SPINDLE_OUT:-/tmp}/fail_inject
mkdir -p "$D"
dmesg -C
kml=0
kmemleak_reset && kml=1
ktap_plan $((N > 1 ? 10 : 8))

# arm FN ERRNO [NTH [TIMES]]: the NTH call of FN (default the next) returns
# -ERRNO (0: NULL); TIMES times in a row (default once)
arm() {
	echo "$1" >$FF/inject || return 1
	printf '%#x\n' "$(( $2 ? -$2 : 0 ))" >"$FF/$1/retval"
	echo 100 >$FF/probability
	echo "${3:-1}" >$FF/interval
	echo "${4:-1}" >$FF/times
	echo 1 >$FF/verbose
}

disarm() {
	echo >$FF/inject
}

# wait_log TEXT: up to 120 s for TEXT (plain text) in the kernel log
wait_log() {
	"$WAITFOR" -t 120 -k "$1"
}

ktap_check "module_functions_injectable" sh -c "
	for f in spindle_subdev_add spindle_thread_create spindle_listen spindle_conn_alloc \
		 spindle_conn_new_qp; do
		grep -q \"^\$f\s\" $FF/injectable || { echo \"# \$f is not injectable\"; exit 1; }
	done"

# --- group up fails: a one-member group of two subgroups ------------------
CFG=$D/g74.conf
printf '%s\n' "group 74" "self 0" "member 0 $(my_addr):7604" \
	"subgroup 0 members all senders all window 8 max_msg 64" \
	"subgroup 1 members all senders all window 8 max_msg 64" >"$CFG"

# up_fails NAME FN ERRNO TEXT [NTH]
up_fails() {
	local out rc n bad=''
	n=$(dmesg | grep -c 'FAULT_INJECTION: forcing a failure')
	arm "$2" "$3" "${5:-1}" || { ktap_result fail "$1"; return; }
	out=$($CTL up "$CFG" 2>&1)
	rc=$?
	disarm
	ktap_diag "$1: spindlectl up: exit $rc: $out"
	[ $rc = 1 ] && echo "$out" | grep -q "$4" || bad="not the injected error"
	[ "$(dmesg | grep -c 'FAULT_INJECTION: forcing a failure')" -gt "$n" ] ||
		bad="${bad:+$bad, }nothing injected"
	$CTL show 74 >/dev/null 2>&1 && bad="${bad:+$bad, }group 74 still up"
	ls /dev/spindle[0-9]* >/dev/null 2>&1 && bad="${bad:+$bad, }$(ls /dev/spindle[0-9]*) left"
	# the same configuration comes up and carries messages
	if ! $CTL up "$CFG" >"$D/$1.up" 2>&1; then
		bad="${bad:+$bad, }the next up failed: $(cat "$D/$1.up")"
	else
		$CTL down 74 >/dev/null 2>&1
		build/bin/spindle-bw --config "$CFG" --messages 200 --size 32 \
			--window 8 --timeout 60 >"$D/$1.json" 2>"$D/$1.err" ||
			bad="${bad:+$bad, }spindle-bw after it: $(tail -n 1 "$D/$1.err")"
	fi
	[ -n "$bad" ] && ktap_diag "$1: $bad"
	ktap_result "$([ -z "$bad" ] && echo ok || echo fail)" "$1"
}

up_fails group_up_fails_second_device spindle_subdev_add 28 "No space left on device" 2
up_fails group_up_fails_thread spindle_thread_create 11 "Resource temporarily unavailable"
up_fails group_up_fails_listen spindle_listen 98 "Address already in use"

# --- a file open on a group that fails to come up sees it go ---------------
P=/sys/module/spindle/parameters
echo 3000 >$P/fault_up_delay_ms
arm spindle_listen 98
$CTL up "$CFG" >"$D/hup.up" 2>&1 &
up=$!
build/selftests/up_hup 74 0 20000 >"$D/hup.out" 2>&1
rc=$?
wait $up
disarm
echo 0 >$P/fault_up_delay_ms
ktap_diag "file_open_while_up_fails: $(cat "$D/hup.out" "$D/hup.up" | tr '\n' ' ')"
ktap_check "file_open_while_up_fails" [ $rc = 0 ]

# --- rejoin_retried: guest 0 leaves and comes back -------------------------
# The members with higher ids connect to it (spindle_peer_init: the higher
# id is the active side), so the others' connection for its rejoin is made
# by their connect work: its first allocation fails there.  The others go
# on without it only as a majority: three guests or more.
if [ "$N" = 2 ]; then
	ktap_result skip "rejoin_retried" "two guests: one alone is no majority"
elif [ "$N" -gt 2 ]; then
	G=75
	gen_config "$D/g$G.conf" $G 7605 "subgroup 0 members all senders all window 8 max_msg 64"
	barrier fail_inject_up
	$CTL up "$D/g$G.conf" >/dev/null || exit 1
	wait_active $G || ktap_diag "group $G did not become active: $($CTL show $G 2>&1 | head -n 3)"
	barrier fail_inject_formed
	if [ "$ME" = 0 ]; then
		$CTL down $G >/dev/null
	else
		wait_log "group $G: view 2 installed" ||
			ktap_diag "no view 2 without guest 0"
		n=$(dmesg | grep -c 'FAULT_INJECTION: forcing a failure')
		arm spindle_conn_alloc 0
	fi
	barrier fail_inject_left
	if [ "$ME" = 0 ]; then
		$CTL up "$D/g$G.conf" >/dev/null || exit 1
		wait_active $G && back=1 || back=0
		fired=1		# (the failures are injected in the others)
	else
		wait_log "group $G: view 3 installed" && back=1 || back=0
		# (the injected failure skips the function: no line of its own)
		[ "$(dmesg | grep -c 'FAULT_INJECTION: forcing a failure')" -gt "$n" ] && fired=1 || fired=0
		disarm
	fi
	ktap_diag "rejoin: back in a view: $back, the failure injected: $fired; $(dmesg | grep "group $G: view" | tail -n 2 | tr '\n' ' ')"
	ktap_check "rejoin_retried" test "$back" = 1 -a "$fired" = 1
	barrier fail_inject_back
	$CTL down $G >/dev/null 2>&1
fi

# --- qp_create_fails_quietly: QPs that cannot be made while a group forms --
# Every guest's first FAILS creations fail (the active side's after its
# address resolves, the passive side's on a connection request, which is
# then rejected): the active sides try again every 200 ms, so the failures
# come in a few seconds, more of them than this guest has peers.  Each
# peer's streak gets one "cannot create QP" line and, once a QP is made,
# one "created after N failed tries"; a line per try (rate-limited or
# not) exceeds one per peer.
if [ "$N" -gt 1 ]; then
	G=76
	FAILS=12
	gen_config "$D/g$G.conf" $G 7606 "subgroup 0 members all senders all window 8 max_msg 64"
	arm spindle_conn_new_qp 12 1 $FAILS	# ENOMEM, FAILS times
	barrier fail_inject_qp
	$CTL up "$D/g$G.conf" >/dev/null || exit 1
	wait_active $G && up=1 || up=0
	# (fail_function counts "times" down as it injects; its log lines
	# are rate-limited, ten in five seconds)
	fired=$((FAILS - $(cat $FF/times)))
	disarm
	streaks=$(dmesg | grep -c "group $G: cannot create QP for member")
	ends=$(dmesg | grep -c "group $G: QP for member [0-9]* created after [0-9]* failed tries")
	ktap_diag "qp_create: active $up; $fired failures injected; $streaks streaks logged, $ends ends, for $((N - 1)) peers"
	dmesg | grep "group $G: .*QP for member" | head -n 4 | sed 's/^/# /'
	ktap_check "qp_create_fails_quietly" test "$up" = 1 -a "$fired" = $FAILS -a \
		"$streaks" -ge 1 -a "$streaks" -le $((N - 1)) -a "$ends" = "$streaks"
	barrier fail_inject_qp_done
	$CTL down $G >/dev/null 2>&1
fi

disarm
ktap_check "module_unloads" spindle_unload
if [ $kml = 1 ]; then
	leak=$(kmemleak_scan)
	[ -n "$leak" ] && echo "$leak" | head -n 20 | sed 's/^/# /'
	ktap_check "kmemleak_empty" test -z "$leak"
else
	ktap_result skip "kmemleak_empty" "this kernel has no kmemleak"
fi
ktap_check "kernel_log_clean" dmesg_clean
ktap_finish
