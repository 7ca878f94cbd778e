#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Null-sends and quiescence.  The last sender sleeps 50 ms after each of its
# messages while the others stream theirs: its nulls must carry the others
# past it (in the log its real messages end up at indices far beyond its
# count), and once every sender has stopped, no RDMA write is posted any
# more: the write and null counters stand still, and the predicate thread,
# parked, uses next to no CPU.
. selftests/lib/ktap.sh
. selftests/lib/spindle.sh
. selftests/lib/bw.sh

spindle_load || exit 1
N=${SPINDLE_NODES:-1}
MSGS=100
G=21
ktap_plan 5
bw_run nulls_sleepy_sender --group $G --port "$(bw_port 21)" --senders all \
	--messages $MSGS --size 256 --window 16 --sleep-us 50000 --delayed one \
	--keep-up --stall 60

last=$(awk -v r=$((N - 1)) '$2 == r { i = $3 } END { print i + 0 }' "$LOGDIR/nulls_sleepy_sender.log")
ktap_diag "slow sender (rank $((N - 1))) last index $last for $MSGS messages"
if [ "$N" -lt 2 ]; then
	ktap_result skip "slow_sender_carried_by_nulls" "one sender: nobody to wait for"
	ktap_result skip "slow_sender_sent_nulls" "one sender"
else
	ktap_check "slow_sender_carried_by_nulls" [ "$last" -ge $((MSGS * 3 / 2)) ]
	if [ "$SPINDLE_NODE" = $((N - 1)) ]; then
		nulls=$(build/bin/spindlectl -j show $G | jq '.[0].subgroups[0].nulls_sent')
		ktap_diag "slow sender sent $nulls nulls"
		ktap_check "slow_sender_sent_nulls" [ "${nulls:-0}" -gt 0 ]
	else
		ktap_result skip "slow_sender_sent_nulls" "checked on the slow sender's node"
	fi
fi

# CPU time (clock ticks) the group's predicate thread has used, and the
# uptime (centiseconds) it was read at: the window between two readings is
# what they say, not what the script slept (a process start alone takes a
# second or more on a debug guest)
thread_ticks() {
	_pid=$(ps -eo pid=,comm= | awk -v c="spindle/$G" '$2 == c { print $1 }')
	awk 'FNR == NR { t = $14 + $15; next } { printf "%d %d\n", t, $1 * 100 }' \
		"/proc/$_pid/stat" /proc/uptime 2>/dev/null
}

# everyone delivered everything; give the last pushes a moment, then watch
sleep 2
s1=$(build/bin/spindlectl -j show $G | jq -c '[.[0].subgroups[0] | .writes_posted, .nulls_sent, .msgs_sent]')
read -r t1 u1 <<EOF
$(thread_ticks)
EOF
sleep 3
s2=$(build/bin/spindlectl -j show $G | jq -c '[.[0].subgroups[0] | .writes_posted, .nulls_sent, .msgs_sent]')
read -r t2 u2 <<EOF
$(thread_ticks)
EOF
ktap_diag "writes, nulls, messages: $s1 then $s2"
ktap_check "quiescent_when_senders_stop" test -n "$s1" -a "$s1" = "$s2"
# parked, the thread wakes every idle_ms and heartbeat_ms (100 ms each) to
# look at its peers' rows: 5% of a CPU at most over the window.  On the
# debug kernels (KASAN, lockdep, TCG) a third of a CPU, still far from a
# spinning thread's all of it: a turn costs far more there (6.12-rt debug
# guests: 130-159 ticks in windows of 27-31 s, where the script slept 3).
hz=$(getconf CLK_TCK)
win=$((${u2:-0} - ${u1:-0}))
idle_max=$((hz * win / 100 / 20))
on_debug_kernel && idle_max=$((hz * win / 100 / 3))
ktap_diag "predicate thread: $((t2 - t1)) ticks of CPU in $((win / 100)).$((win / 10 % 10)) s idle ($hz ticks/s, at most $idle_max)"
ktap_check "idle_thread_leaves_the_cpu" test -n "$t1" -a "$win" -ge 300 -a $((t2 - t1)) -le $idle_max
build/bin/spindlectl down $G >/dev/null
spindle_unload
ktap_finish
