#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Connections and their teardown under churn (3 guests):
#   staggered_up   the guests bring a group up seconds apart, so the ones
#                  that connect try many times (every attempt a QP made and
#                  destroyed) before the others listen; the group must form
#                  and carry traffic, and no attempt may fail it.  Each
#                  rejected attempt's failure event is held back 300 ms
#                  (fault_cm_delay_ms), so its flushed completions always
#                  reach the predicate thread first: they must be taken for
#                  that attempt's, never for a connection's that is up;
#   down_connecting  guests 1 and 2 bring groups up and take them down
#                  while guest 0, which they connect to, never comes: every
#                  attempt in flight is torn down; the module unloads;
#   device_removal guest 2 deletes its soft-RoCE device under traffic:
#                  the deletion returns (the group on it is torn down),
#                  the two others go on in a view without it, and guest 2
#                  adds the device back;
#   removal_races_up  guest 2 deletes its device while it brings groups up,
#                  again and again, every other time by unloading the
#                  driver (rmmod rdma_rxe): no group may keep the device (a
#                  deletion or an unload that never returns) and every
#                  group that came up goes down;
#   cq_overrun     guest 0's completion queue holds 2 entries
#                  (fault_cq_entries), so that under traffic it overruns:
#                  the device reports it once, guest 0 stops in that group
#                  (EIO) and says why, and the two others go on in a view
#                  without it;
#   failed_stays_failed  a group of guests 0 and 1: guest 0 holds its group
#                  3 s (debug: 10 s) between seeing every member connected and becoming
#                  active (fault_active_delay_ms), guest 1 leaves meanwhile:
#                  guest 0's group failed, and must stay failed, not become
#                  active after the hold.
# The kernel log must stay clean throughout.
. selftests/lib/ktap.sh
. selftests/lib/spindle.sh
. selftests/lib/bw.sh

need_guests 3
N=${SPINDLE_NODES:-1}
ROUNDS=${LIFECYCLE_ROUNDS:-3}
CTL=build/bin/spindlectl
OUT=${SPINDLE_OUT:-/tmp}

ktap_plan $((ROUNDS + 15))
spindle_load || exit 1
dmesg -C

# returns_within S CMD...: CMD ends within S seconds.  A device removal
# (rdma link delete, rmmod rdma_rxe) that waits for a user of the device
# sleeps uninterruptibly, where timeout(1)'s signal cannot stop it: so
# CMD runs in the background, and if it has not ended after S seconds
# every group is taken down, which should let it end, and the answer is
# no (if it still has not ended S seconds later, it is left behind).
returns_within() {
	local s=$1 pid n=0 id
	shift
	"$@" &
	pid=$!
	while kill -0 $pid 2>/dev/null; do
		n=$((n + 1))
		if [ $n = $((s * 5)) ]; then
			ktap_diag "'$*' still blocked after $s s: taking every group down"
			for id in $($CTL -j show 2>/dev/null | jq '.[].group'); do
				$CTL down "$id" >/dev/null 2>&1
			done
		elif [ $n -ge $((s * 10)) ]; then
			ktap_diag "'$*' still blocked with every group down: left behind"
			return 1
		fi
		sleep 0.2
	done
	wait $pid || return 1
	[ $n -lt $((s * 5)) ]
}

# --- staggered_up: guest 0 comes 3 s late, guest 2 1.5 s late -------------
P=/sys/module/spindle/parameters
echo 300 >$P/fault_cm_delay_ms
r=0
while [ $r -lt "$ROUNDS" ]; do
	r=$((r + 1))
	g=$((70 + r))
	barrier "stagger$r"
	case "$SPINDLE_NODE" in
	0) sleep 3 ;;
	2) sleep 1.5 ;;
	esac
	bw_run "staggered_up_$r" --group $g --port "$(bw_port $g)" --senders all \
		--messages 300 --size 256 --window 16 --stall 60
done
echo 0 >$P/fault_cm_delay_ms
ktap_check "no_group_failed_while_forming" sh -c "! dmesg | grep -q 'no more sends in this group'"
dmesg | grep 'no more sends in this group' | head -n 3 | sed 's/^/# /'
attempts=$(dmesg | grep -c 'connected to member')
ktap_diag "connections made: $attempts"

# --- down_connecting: guest 0 never comes -----------------------------------
barrier down_connecting
if [ "$SPINDLE_NODE" != 0 ]; then
	ok=1
	i=0
	while [ $i -lt 5 ]; do
		i=$((i + 1))
		gen_config "$OUT/dc$i.conf" $((80 + i)) $((7580 + i)) \
			"subgroup 0 members all senders all window 16 max_msg 64"
		$CTL up "$OUT/dc$i.conf" >/dev/null || ok=0
		sleep 0.$((3 + i))
		$CTL down $((80 + i)) || ok=0
	done
	ktap_check "down_while_connecting" [ $ok = 1 ]
else
	ktap_result skip "down_while_connecting" "guest 0 is the one that never comes"
fi
barrier down_connecting_done
ktap_check "module_unloads" spindle_unload
ktap_check "module_reloads" spindle_load

# --- device_removal: guest 2 deletes rxe0 under traffic ---------------------
barrier removal
g=90
# the survivors' logs are compared across guests (scripts/check); guest 2's
# stops short where its device went
rlog=$LOGDIR/removal.log
[ "$SPINDLE_NODE" = 2 ] && rlog=$OUT/removal-guest2.log
(build/bin/spindle-bw --log "$rlog" --group $g --port "$(bw_port $g)" \
	--senders all --seconds 20 --size 256 --window 16 --timeout 60 \
	>"$LOGDIR/removal.json" 2>"$LOGDIR/removal.err"; echo $? >"$OUT/removal.rc") &
bw=$!
if [ "$SPINDLE_NODE" = 2 ]; then
	sleep 8
	start=$(date +%s)
	returns_within 60 rdma link delete rxe0
	rc=$?
	ktap_diag "rdma link delete rxe0: exit $rc after $(( $(date +%s) - start )) s"
	ktap_check "device_deletion_returns" [ $rc = 0 ]
	ktap_check "group_gone_with_device" sh -c "dmesg | grep -q 'group $g: RDMA device rxe0 removed'"
	wait $bw
	rdma link add rxe0 type rxe netdev eth0
	ktap_check "device_back" sh -c "for i in \$(seq 50); do rdma link show rxe0/1 2>/dev/null | grep -q ACTIVE && exit 0; sleep 0.2; done; exit 1"
else
	wait $bw
	ktap_diag "spindle-bw on a survivor: exit $(cat "$OUT/removal.rc"): $(tail -n 1 "$LOGDIR/removal.err")"
	ktap_check "survivors_change_view" sh -c "dmesg | grep -q 'group $g: view 2 installed'"
	ktap_result skip "group_gone_with_device" "guest 2 removes its device"
	ktap_result skip "device_back" "guest 2 removes its device"
fi
barrier removal_done
$CTL down $g >/dev/null 2>&1

# --- removal_races_up: guest 2 alone, one-member groups on rxe0 -------------
if [ "$SPINDLE_NODE" = 2 ]; then
	a2=$(echo "$SPINDLE_ADDRS" | cut -d' ' -f3)
	ok=1
	ok_unload=1
	i=0
	while [ $i -lt 5 ]; do
		i=$((i + 1))
		printf 'group %d\nself 0\nmember 0 %s:%d\nsubgroup 0 members all senders all window 8 max_msg 64\n' \
			$((95 + i)) "$a2" $((7595 + i)) >"$OUT/race$i.conf"
		$CTL up "$OUT/race$i.conf" >/dev/null 2>&1 &
		up=$!
		sleep 0.0$i
		if [ $((i % 2)) = 0 ]; then
			# the driver goes, and every rxe device with it
			start=$(date +%s)
			returns_within 60 rmmod rdma_rxe || ok_unload=0
			ktap_diag "round $i: rmmod rdma_rxe: $(( $(date +%s) - start )) s"
			modprobe rdma_rxe || ok_unload=0
		else
			returns_within 60 rdma link delete rxe0 || ok=0
		fi
		wait $up
		$CTL down $((95 + i)) >/dev/null 2>&1
		rdma link add rxe0 type rxe netdev eth0 || ok=0
		sleep 1
	done
	ktap_check "removal_races_up" [ $ok = 1 ]
	ktap_check "driver_unload_races_up" [ $ok_unload = 1 ]
	ktap_check "no_group_left" [ "$($CTL -j show 2>/dev/null | jq length)" = 0 ]
else
	ktap_result skip "removal_races_up" "guest 2 removes its device"
	ktap_result skip "driver_unload_races_up" "guest 2 removes its device"
	ktap_result skip "no_group_left" "guest 2 removes its device"
fi
barrier races_done

# --- cq_overrun: guest 0's completion queue is far too small -----------------
# Guest 0 becomes active a while after the others (fault_active_delay_ms),
# so that they are active, to take it out of the view rather than fail a
# group still forming.  Its queue of two entries overruns in its first
# passes as a member (each row push is signaled: two of them, and the
# others' first rows), or already while it is held, from the others'
# traffic; either way it must say that it stops for that cause: a held
# thread is woken by its broken queue (debug kernels hold 5 s, long
# enough for the others to take it out first were it not).
g=66
act=1000
on_debug_kernel && act=5000
clog=$LOGDIR/cq_overrun.log
if [ "$SPINDLE_NODE" = 0 ]; then
	clog=$OUT/cq_overrun-guest0.log
	echo 2 >$P/fault_cq_entries
	echo $act >$P/fault_active_delay_ms
fi
barrier cq_overrun
build/bin/spindle-bw --log "$clog" --group $g --port "$(bw_port $g)" --senders all \
	--seconds 5 --size 256 --window 16 --timeout 60 \
	>"$LOGDIR/cq_overrun.json" 2>"$LOGDIR/cq_overrun.err"
rc=$?
echo 0 >$P/fault_cq_entries
echo 0 >$P/fault_active_delay_ms
ktap_diag "cq_overrun: spindle-bw exit $rc: $(tail -n 1 "$LOGDIR/cq_overrun.err")"
dmesg | grep "group $g: " | grep -v "connected to\|ready$" | sed 's/^/# /'
if [ "$SPINDLE_NODE" = 0 ]; then
	ktap_check "cq_overrun" sh -c "[ $rc != 0 ] && grep -q 'Input/output error' $LOGDIR/cq_overrun.err"
	ktap_check "cq_overrun_member_stops" sh -c \
		"dmesg | grep -q 'group $g: this member stops: its completion queue broke'"
	ktap_check "cq_overrun_reported_once" [ "$(dmesg | grep -c "group $g: completion queue: ")" = 1 ]
else
	ktap_check "cq_overrun" [ $rc = 0 ]
	ktap_check "cq_overrun_member_stops" sh -c "dmesg | grep -q 'group $g: view 2 installed: members 0x6'"
	ktap_result skip "cq_overrun_reported_once" "guest 0's queue overruns"
fi
barrier cq_overrun_done

# --- failed_stays_failed: guest 1 leaves while guest 0 is about to be active
g=67
h=$SPINDLE_SHARED/barrier.failed_stays_failed_held/0
if [ "$SPINDLE_NODE" -le 1 ]; then
	printf 'group %d\nself %d\nmember 0 %s:%d\nmember 1 %s:%d\n%s\n' $g "$SPINDLE_NODE" \
		"$(echo "$SPINDLE_ADDRS" | cut -d' ' -f1)" "$(bw_port $g)" \
		"$(echo "$SPINDLE_ADDRS" | cut -d' ' -f2)" "$(bw_port $g)" \
		"subgroup 0 members all senders all window 8 max_msg 64" >"$OUT/g$g.conf"
fi
hold=3		# s; a process start takes a second or more on a debug guest
on_debug_kernel && hold=10
[ "$SPINDLE_NODE" = 0 ] && echo $((hold * 1000)) >$P/fault_active_delay_ms
barrier failed_stays_failed
case "$SPINDLE_NODE" in
0)
	$CTL up "$OUT/g$g.conf" >/dev/null
	i=0
	until dmesg | grep -q "group $g: fault injection: held .* before it becomes active"; do
		i=$((i + 1))
		[ $i -gt 300 ] && break
		sleep 0.1
	done
	mark failed_stays_failed_held
	sleep $((hold + 3))	# the hold, and then some
	echo 0 >$P/fault_active_delay_ms
	state=$($CTL -j show $g 2>/dev/null | jq -r '.[0].state')
	dmesg | grep "group $g: " | grep -v "connected to\|ready$" | sed 's/^/# /'
	ktap_diag "failed_stays_failed: group $g is $state"
	ktap_check "failed_stays_failed" [ "$state" = failed ]
	;;
1)
	$CTL up "$OUT/g$g.conf" >/dev/null
	i=0
	while [ ! -e "$h" ] && [ $i -lt 300 ]; do
		i=$((i + 1))
		sleep 0.1
	done
	$CTL down $g >/dev/null
	ktap_result skip "failed_stays_failed" "guest 0's group is the one held"
	;;
*)
	ktap_result skip "failed_stays_failed" "a group of guests 0 and 1"
	;;
esac
barrier failed_stays_failed_done
$CTL down $g >/dev/null 2>&1
ktap_check "kernel_log_clean" dmesg_clean
spindle_unload
ktap_finish
