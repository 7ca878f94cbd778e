#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Streams of messages through a group of all the guests (1 or more), formed
# by spindle-bw from SPINDLE_NODE/SPINDLE_ADDRS: all / half / one senders,
# ordered and unordered, 1 B, 1 KB and the configured maximum message size,
# window 1, 16 and 100; through the producer page and (--no-producer) with
# SEND system calls.  Every payload is checked against its sender's
# pattern; each log obeys FIFO per sender and (ordered) the round-robin rule;
# once more in baseline mode (--baseline: one message per step);
# scripts/check then compares the logs of all guests.  Last, a late reader:
# the group is up everywhere, but guest 0's spindle-bw starts 2 s after the
# others', when their first window of messages already waits for it; it
# must see every one of them (a first RECV that subscribes may return
# messages at once: they are not to be thrown away).  Then the same in
# unordered mode, where the others do not wait: guest 0 sends all its
# messages at once (the window is larger than the stream) and takes the
# group down as soon as its own spindle-bw is done, guest 2 likewise, and
# guest 1's reader starts 2 s late: every message must still be there for
# it, and every member's group down must succeed.  (A member's group down
# waits until the others have delivered what it delivered, not only
# received it: sp_sub_caught_up(), whose unit test fails without that rule.
# This case does not hit the window in which a member has received the
# last messages and not yet delivered them; a slow guest in the streams
# above can.)  Then a stream that stops moving (2 guests or more):
# spindle-bw --stall, the limit every stream here has, must end it with
# a failure that says so.  Last, a reader that starts after a view change (3
# guests or more): the last guest takes the group down, the others wait
# for the view without it and then stream for 2 s (--seconds): each must
# end when the senders of its view have ended, not wait for the one that
# left before it started, of which no view record told it.  Last, a send
# right after the view record (3 guests or more; through the producer page,
# then with SEND calls): the last guest leaves, and each of the others,
# still holding the batch that carried the record, sends one message: it
# must be delivered in the new view (the record's promise: nothing after it
# belongs to the old view, so the old view's trim may not drop it).  Last,
# a reader from a smaller view (3 guests or more): guest 0's reader
# subscribes while the last guest is out, and holds back while every guest,
# the last one back, streams twice its window: it must get all of them.
# Last, a reservation across a view change (3 guests or more): guest 0's
# SEND reserves a slot and, held there by fault_send_delay_ms, records it
# only after the last guest left and the view changed; marking it must say
# ESTALE once, and the file must send again at once (selftests/guest/
# stale_send).
. selftests/lib/ktap.sh
. selftests/lib/spindle.sh
. selftests/lib/bw.sh

spindle_load || exit 1
T="--stall 60"
# On a debug kernel the streams carry half the messages (bw_messages)
N=${SPINDLE_NODES:-1}
ktap_plan 19
bw_run ordered_all_1k_w100   --group 11 --port "$(bw_port 1)" --senders all --messages "$(bw_messages 1500)" --size 1024 --window 100 $T
bw_run ordered_half_1b_w1    --group 12 --port "$(bw_port 2)" --senders half --messages "$(bw_messages 300)" --size 1 --window 1 --no-producer $T
bw_run ordered_one_max_w8    --group 13 --port "$(bw_port 3)" --senders one --messages "$(bw_messages 400)" --size 8192 --window 8 $T
bw_run ordered_all_1b_w100   --group 14 --port "$(bw_port 4)" --senders all --messages "$(bw_messages 3000)" --size 1 --window 100 $T
bw_run unordered_all_1k_w16  --group 15 --port "$(bw_port 5)" --mode unordered --senders all --messages "$(bw_messages 1500)" --size 1024 --window 16 --no-producer $T
bw_run unordered_one_max_w1  --group 16 --port "$(bw_port 6)" --mode unordered --senders one --messages "$(bw_messages 200)" --size 4096 --window 1 $T
# the baseline (Derecho before Spindle, kept for comparison): the same
# pass in steps of one message, each step's writes posted at once
bw_run baseline_ordered_all_1k_w16 --group 24 --port "$(bw_port 14)" --senders all --messages "$(bw_messages 600)" --size 1024 --window 16 --baseline $T

CFG=${SPINDLE_OUT:-/tmp}/late.conf
gen_config "$CFG" 17 "$(bw_port 7)" "subgroup 0 members all senders all window 16 max_msg 256 mode ordered"
ktap_check "late_reader_group_up" build/bin/spindlectl up "$CFG"
barrier late_reader
[ "${SPINDLE_NODE:-0}" = 0 ] && sleep 2
bw_run late_reader --config "$CFG" --messages 300 --size 256 $T
barrier late_reader_done
ktap_check "late_reader_group_down" build/bin/spindlectl down 17

CFG=${SPINDLE_OUT:-/tmp}/late_unordered.conf
gen_config "$CFG" 18 "$(bw_port 8)" "subgroup 0 members all senders 0 window 256 max_msg 256 mode unordered"
ktap_check "late_reader_unordered_group_up" build/bin/spindlectl up "$CFG"
barrier late_reader_unordered
[ "${SPINDLE_NODE:-0}" = 1 ] && sleep 2
bw_run late_reader_unordered --config "$CFG" --messages 200 --size 256 $T
ktap_check "late_reader_unordered_group_down" build/bin/spindlectl down 18 timeout 20000

# view_id GROUP: the installed view of GROUP here
# (from "group G state S self K view V ...": a jq per turn of wait_view
# took a TCG guest 0.4 s of its vCPU)
view_id() {
	build/bin/spindlectl group show "$1" 2>/dev/null | {
		read -r _g _id _st _state _se _self _vw _view _rest && echo "$_view"
	}
}

# wait_view GROUP ID: until view ID of GROUP is installed here (30 s at most)
wait_view() {
	_i=0
	while [ "$(view_id "$1")" != "$2" ]; do
		_i=$((_i + 1))
		[ $_i -gt 300 ] && { ktap_diag "group $1: view $(view_id "$1"), not $2"; return 1; }
		sleep 0.1
	done
}

# wait_file FILE: until FILE exists (10 s at most; the caller's next step
# fails if it does not)
wait_file() {
	"$WAITFOR" -t 10 "$1"
}

# up_active CFG GROUP: bring GROUP up and wait (30 s at most) until it is
# active here, every member connected: `up` returns while the peers still
# connect, and a member that left before this one had connected to it
# would find this one still forming, a member the others cannot move on
# with (the others lose their majority)
up_active() {
	build/bin/spindlectl up "$1" >/dev/null || return 1
	wait_active "$2" 30 || { ktap_diag "group $2 not active after 30 s"; return 1; }
}

after_view() {
	CFG=${SPINDLE_OUT:-/tmp}/after_view.conf
	gen_config "$CFG" 19 "$(bw_port 9)" \
		"subgroup 0 members all senders all window 16 max_msg 256 mode ordered"
	up_active "$CFG" 19 || return 1
	barrier after_view || return 1
	if [ "$SPINDLE_NODE" = $((N - 1)) ]; then
		build/bin/spindlectl down 19 || return 1
		barrier after_view_done
		return
	fi
	wait_view 19 2 || return 1
	# (not in $LOGDIR: the two readers start at different times, their
	# logs need not be the same)
	_o=${SPINDLE_OUT:-/tmp}/after_view
	build/bin/spindle-bw --config "$CFG" --seconds 2 --size 256 --timeout 30 \
		--log "$_o.log" >"$_o.json" 2>"$_o.err"
	_rc=$?
	ktap_diag "after_view: $(grep '^{' "$_o.json" | jq -c '{delivered, senders}') exit $_rc $(tail -n 2 "$_o.err")"
	barrier after_view_done
	build/bin/spindlectl down 19 >/dev/null
	[ $_rc = 0 ]
}
# send_after_view NAME GROUP PORT [--no-producer]: the last guest leaves; each
# other one sends one message right after it reads the view record, still
# holding the batch that carried it (selftests/guest/view_send)
send_after_view() {
	CFG=${SPINDLE_OUT:-/tmp}/$1.conf
	_o=${SPINDLE_OUT:-/tmp}/$1
	gen_config "$CFG" "$2" "$(bw_port "$3")" \
		"subgroup 0 members all senders all window 8 max_msg 256 mode ordered"
	up_active "$CFG" "$2" || return 1
	rm -f "$_o.ready"
	if [ "$SPINDLE_NODE" != $((N - 1)) ]; then
		build/selftests/view_send "$CFG" "$_o.ready" $4 >"$_o.out" 2>&1 &
		_pid=$!
		wait_file "$_o.ready"
	fi
	barrier "$1" || return 1
	if [ "$SPINDLE_NODE" = $((N - 1)) ]; then
		build/bin/spindlectl down "$2" || return 1
		barrier "$1_done"
		return
	fi
	wait $_pid
	_rc=$?
	ktap_diag "$1: $(cat "$_o.out") (exit $_rc)"
	barrier "$1_done"
	build/bin/spindlectl down "$2" >/dev/null
	[ $_rc = 0 ]
}
# smaller_view: guest 0 subscribes a reader (selftests/guest/hold_reader)
# while the last guest is out, so its file is sized in a view of one sender
# (guest 1) where there will be two; the last guest comes back, and both
# senders stream 2 windows while that reader holds the subgroup back for
# 3 s: more messages wait for it than the smaller view's log holds.  It
# must get every one, in order, and the streams must end (a queue sized
# from the smaller view would drop what did not fit, with a WARN, and its
# flow control would never come back).
smaller_view() {
	CFG=${SPINDLE_OUT:-/tmp}/smaller_view.conf
	_o=${SPINDLE_OUT:-/tmp}/smaller_view
	_w=200
	_rc=0
	gen_config "$CFG" 22 "$(bw_port 12)" \
		"subgroup 0 members all senders 1,$((N - 1)) window $_w max_msg 64 mode ordered"
	up_active "$CFG" 22 || return 1
	barrier smaller_view || return 1
	rm -f "$_o.ready" "$_o.go"
	if [ "$SPINDLE_NODE" = $((N - 1)) ]; then
		build/bin/spindlectl down 22 || return 1
	else
		wait_view 22 2 || return 1
	fi
	if [ "$SPINDLE_NODE" = 0 ]; then
		build/selftests/hold_reader "$CFG" "$_o.ready" "$_o.go" 3000 $((2 * _w)) \
			>"$_o.out" 2>&1 &
		_pid=$!
		wait_file "$_o.ready"
	fi
	barrier smaller_view_subscribed || return 1
	if [ "$SPINDLE_NODE" = $((N - 1)) ]; then
		up_active "$CFG" 22 || return 1
	else
		wait_view 22 3 || return 1
	fi
	barrier smaller_view_joined || return 1
	if [ "$SPINDLE_NODE" = 0 ]; then
		: >"$_o.go"
		wait $_pid || _rc=1
		ktap_diag "smaller_view: $(cat "$_o.out")"
	else
		build/bin/spindle-bw --config "$CFG" --messages $((2 * _w)) --size 64 --timeout 60 \
			--log "$_o.log" >"$_o.json" 2>"$_o.err" || _rc=1
		ktap_diag "smaller_view: $(grep '^{' "$_o.json" | jq -c '{delivered, senders}') $(tail -n 2 "$_o.err")"
	fi
	barrier smaller_view_done
	build/bin/spindlectl down 22 >/dev/null
	[ $_rc = 0 ]
}
# reserve_across_view: guest 0's reservation is voided by a view change
# while its SEND still makes it (5 s of fault_send_delay_ms, 20 s on a debug
# guest); the last guest leaves a second after that SEND began
reserve_across_view() {
	CFG=${SPINDLE_OUT:-/tmp}/reserve_across_view.conf
	_o=${SPINDLE_OUT:-/tmp}/reserve_across_view
	_rc=0
	gen_config "$CFG" 23 "$(bw_port 13)" \
		"subgroup 0 members all senders all window 8 max_msg 256 mode ordered"
	up_active "$CFG" 23 || return 1
	rm -f "$_o.ready"
	if [ "$SPINDLE_NODE" = 0 ]; then
		_d=5000
		on_debug_kernel && _d=20000
		build/selftests/stale_send "$CFG" "$_o.ready" $_d >"$_o.out" 2>&1 &
		_pid=$!
		wait_file "$_o.ready"
	fi
	barrier reserve_across_view || return 1
	if [ "$SPINDLE_NODE" = $((N - 1)) ]; then
		sleep 1
		build/bin/spindlectl down 23 || return 1
		barrier reserve_across_view_done
		return
	fi
	if [ "$SPINDLE_NODE" = 0 ]; then
		wait $_pid || _rc=1
		ktap_diag "reserve_across_view: $(cat "$_o.out") (exit $_rc)"
	fi
	barrier reserve_across_view_done
	build/bin/spindlectl down 23 >/dev/null
	[ $_rc = 0 ]
}
# stalled_stream: a stream that stops moving must fail spindle-bw --stall
# (the tests' limit: else a hang would pass for a slow kernel).  A
# baseline group (no null-sends) of every guest, all senders, in which
# only guest 0 streams: its first message is delivered, then the
# round-robin order waits for guest 1's first, which never comes; guest 0
# must give up --stall's 5 s later, saying why, well before `timeout 60`
stalled_stream() {
	CFG=${SPINDLE_OUT:-/tmp}/stalled.conf
	_o=${SPINDLE_OUT:-/tmp}/stalled
	_rc=0
	gen_config "$CFG" 25 "$(bw_port 15)" "baseline yes" \
		"subgroup 0 members all senders all window 8 max_msg 64 mode ordered"
	up_active "$CFG" 25 || return 1
	barrier stalled_stream || return 1
	if [ "$SPINDLE_NODE" = 0 ]; then
		timeout 60 build/bin/spindle-bw --config "$CFG" --messages 20 --size 64 \
			--stall 5 >"$_o.json" 2>"$_o.err"
		_x=$?
		ktap_diag "stalled_stream: exit $_x: $(grep '^{' "$_o.json" | jq -c '{delivered, expected, seconds}') $(tail -n 1 "$_o.err")"
		[ $_x = 1 ] && grep -q "no progress for --stall" "$_o.err" || _rc=1
	fi
	barrier stalled_stream_done
	build/bin/spindlectl down 25 >/dev/null
	[ $_rc = 0 ]
}
if [ "$N" -lt 2 ]; then
	ktap_result skip stalled_stream_gives_up "needs 2 guests: one that does not send"
else
	ktap_check "stalled_stream_gives_up" stalled_stream
fi
if [ "$N" -lt 3 ]; then
	for t in reader_after_a_view_change send_after_view_record send_after_view_record_syscalls \
		reader_from_a_smaller_view reservation_voided_while_made; do
		ktap_result skip "$t" "needs 3 guests: one leaves, two go on"
	done
else
	ktap_check "reader_after_a_view_change" after_view
	ktap_check "send_after_view_record" send_after_view send_after_view_record 20 10
	ktap_check "send_after_view_record_syscalls" \
		send_after_view send_after_view_record_syscalls 21 11 --no-producer
	ktap_check "reader_from_a_smaller_view" smaller_view
	ktap_check "reservation_voided_while_made" reserve_across_view
fi
spindle_unload
ktap_finish
