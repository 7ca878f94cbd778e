#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# A QP async event, 3 guests: under traffic, the device reports guest 0's
# connection to member 2 broken (IB_EVENT_QP_FATAL, through debugfs
# qp_event, dispatched through the QP's own handler as a driver does:
# soft-RoCE raises no fatal QP event of its own).  Guest 0
# logs the event once and takes member 2 for lost.  The link between 0
# and 2 is gone both ways (guest 2 sees its connection drop and suspects
# 0), so the view goes on without one of its ends, whichever suspicion
# guest 1 hears first: {0,1} or {1,2}, never without guest 1.  The
# survivors' logs are compared (scripts/check); a guest left out moves
# its log aside, as it stopped where it was taken out.
. selftests/lib/ktap.sh
. selftests/lib/spindle.sh
. selftests/lib/bw.sh

need_guests 3
spindle_load || exit 1
mount -t debugfs none /sys/kernel/debug 2>/dev/null
dmesg -C
G=68
CTL=build/bin/spindlectl
OUT=${SPINDLE_OUT:-/tmp}
ktap_plan 4

qlog=$LOGDIR/qp_event.log
barrier qp_event
(build/bin/spindle-bw --log "$qlog" --group $G --port "$(bw_port $G)" \
	--senders all --seconds 15 --size 256 --window 16 --timeout 120 \
	>"$OUT/qp_event.json" 2>"$OUT/qp_event.err"; echo $? >"$OUT/qp_event.rc") &
bw=$!
if [ "$SPINDLE_NODE" = 0 ]; then
	wait_active $G
	sleep 2
	ktap_check "qp_event_injected" sh -c "echo '2 1' >/sys/kernel/debug/spindle/group$G/qp_event"
else
	ktap_result skip "qp_event_injected" "guest 0 injects it"
fi
wait $bw
ktap_diag "spindle-bw: exit $(cat "$OUT/qp_event.rc"): $(tail -n 1 "$OUT/qp_event.err")"
dmesg | grep "group $G: " | grep -v "connected to\|ready$" | sed 's/^/# /'
# the view this guest installed after the event, if it is in it
view2=$(dmesg | sed -n "s/.*group $G: view 2 installed: members \(0x[0-9a-f]*\).*/\1/p" | tail -n 1)
in_view=0
[ -n "$view2" ] && in_view=$(( (view2 >> SPINDLE_NODE) & 1 ))
[ "$in_view" = 1 ] || mv "$qlog" "$OUT/qp_event-left-out.log" 2>/dev/null
if [ "$SPINDLE_NODE" = 0 ]; then
	ktap_check "qp_event_reported_once" \
		[ "$(dmesg | grep -c "group $G: QP of member 2: QP fatal error")" = 1 ]
else
	ktap_result skip "qp_event_reported_once" "guest 0's QP has the event"
fi
if [ "$in_view" = 1 ]; then
	ktap_check "qp_event_member_removed" [ "$view2" = 0x3 -o "$view2" = 0x6 ]
elif [ "$SPINDLE_NODE" = 1 ]; then
	ktap_check "qp_event_member_removed" false	# guest 1 is never left out
else
	ktap_result skip "qp_event_member_removed" "this end of the broken link was left out"
fi
barrier qp_event_done
$CTL down $G >/dev/null 2>&1
ktap_check "kernel_log_clean" dmesg_clean
spindle_unload
ktap_finish
