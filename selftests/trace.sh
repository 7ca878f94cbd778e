#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Tracepoints (kmod/trace.h).  The spindle trace system lists its twelve
# events; with them enabled, a stream through a group of all the guests
# fires the batch events with sane values: every send and deliver batch is
# non-empty and names the stream's group and subgroup, the messages of the
# send events add up to what this node sent, those of the deliver events to
# what it delivered, and each deliver event's first seq is the seq of the
# message the log has at that place; the events along a message (bench/
# breakdown reads them) add up too: the messages marked ready to what this
# node sent, those RECV handed out to what it delivered.  Receive batches,
# posted chains with their doorbells, and the doorbells polled need peers:
# with one guest the test skips them.  Views do not change here (selftests/host/
# views.sh kills members), so suspect and view_change only have to exist
# (a peer that leaves first may still make them fire: not checked).
. selftests/lib/ktap.sh
. selftests/lib/spindle.sh
. selftests/lib/bw.sh

TR=/sys/kernel/tracing
EV=$TR/events/spindle
EVENTS="spindle_send_batch spindle_recv_batch spindle_deliver_batch spindle_null_send spindle_suspect spindle_view_change
	spindle_ready spindle_post spindle_cq_event spindle_wake spindle_doorbell spindle_consume"
N=${SPINDLE_NODES:-1}
G=31
NAME=trace_stream
TRACE=$LOGDIR/trace.txt

spindle_load || exit 1
if [ ! -d $TR/events ]; then
	mount -t tracefs nodev $TR || { echo "no tracefs" >&2; exit 4; }
fi
ktap_plan 10

missing=
for e in $EVENTS; do
	[ -f "$EV/$e/format" ] || missing="$missing $e"
done
[ -n "$missing" ] && ktap_diag "missing:$missing"
ktap_check "twelve_events_listed" [ -z "$missing" ]
# each event's own fields (the common_* ones are every event's)
for e in $EVENTS; do
	ktap_diag "$e: $(awk -F'[\t;]' '/field:/ && !/common_/ { sub(/^ *field:/, "", $2); printf "%s%s", s, $2; s = "; " }' "$EV/$e/format" 2>/dev/null)"
done

echo 0 >$EV/enable
: >$TR/trace
echo 1 >$TR/tracing_on
echo 1 >$EV/enable
bw_run $NAME --group $G --port "$(bw_port 31)" --senders all --messages 200 \
	--size 64 --stall 60
echo 0 >$EV/enable
cat $TR/trace >"$TRACE"
: >$TR/trace
json=$(grep '^{' "$LOGDIR/$NAME.json" | tail -n 1)
sent=$(echo "$json" | jq -r '.sent // 0')
delivered=$(echo "$json" | jq -r '.delivered // 0')
ktap_diag "$(grep -m1 'entries-in-buffer' "$TRACE" | sed 's/^# *//')"
for e in $EVENTS; do
	ktap_diag "$e: $(grep -c " $e: " "$TRACE") events"
done

# ev NAME: the key=value fields of every NAME event in the trace
ev() {
	awk -v n="$1:" '{
		for (i = 1; i < NF; i++)
			if ($i == n) {
				o = $(i + 1)
				for (j = i + 2; j <= NF; j++)
					o = o " " $j
				print o
				next
			}
	}' "$TRACE"
}

# sane "EVENTS TOTAL BAD" [TOTAL]: some fired, none bad, the total as wanted
sane() {
	# shellcheck disable=SC2086
	set -- $1 "${2:-}"
	[ "$1" -gt 0 ] && [ "$3" = 0 ] && { [ -z "$4" ] || [ "$2" = "$4" ]; }
}

# the awk code that puts an event's fields in f[] (numbers as numbers;
# it uses i, k and v)
# shellcheck disable=SC2016
F='delete f; for (i = 1; i <= NF; i++) { k = $i; sub(/=.*/, "", k); v = $i; sub(/^[^=]*=/, "", v); f[k] = v ~ /^[0-9]+$/ ? v + 0 : v }'

# send: "events messages bad", bad = empty, more messages than headers, or not ours
s=$(ev spindle_send_batch | awk -v g=$G "{ $F"'
	n++; m += f["msgs"]
	if (f["group"] != g || f["subgroup"] != 0 || f["hdrs"] < 1 || f["msgs"] > f["hdrs"])
		bad++
} END { print n + 0, m + 0, bad + 0 }')
ktap_diag "send batches, messages, bad: $s (sent $sent)"
ktap_check "send_batches" sane "$s" "$sent"

# tally EVENT FIELD: "events total bad" of the stream's subgroup, FIELD
# summed; bad = not ours, or FIELD empty
tally() {
	ev "$1" | awk -v g=$G -v field="$2" "{ $F"'
		n++; t += f[field]
		if (f["group"] != g || f["subgroup"] != 0 || f[field] < 1)
			bad++
	} END { print n + 0, t + 0, bad + 0 }'
}

r=$(tally spindle_recv_batch hdrs)
ktap_diag "recv batches, headers, bad: $r"
if [ "$N" -lt 2 ]; then
	ktap_result skip "recv_batches" "one guest: no peers to receive from"
else
	ktap_check "recv_batches" sane "$r"
fi

# deliver: "events messages bad", bad = empty, not ours, or a first seq
# other than the log's at that place
d=$(ev spindle_deliver_batch | awk -v g=$G -v lf="$LOGDIR/$NAME.log" "{ $F"'
	n++
	if (f["group"] != g || f["subgroup"] != 0 || f["msgs"] < 1)
		bad++
	if ((getline line < lf) <= 0 || (split(line, l, " ") && l[1] != f["seq"]))
		bad++
	for (i = 1; i < f["msgs"]; i++)
		getline line < lf
	m += f["msgs"]
} END { print n + 0, m + 0, bad + 0 }')
ktap_diag "deliver batches, messages, bad: $d (delivered $delivered)"
ktap_check "deliver_batches" sane "$d"
ktap_check "deliver_total" sane "$d" "$delivered"

# messages marked ready, and handed out by RECV
y=$(tally spindle_ready msgs)
ktap_diag "ready events, messages, bad: $y (sent $sent)"
ktap_check "ready_total" sane "$y" "$sent"

c=$(tally spindle_consume msgs)
ktap_diag "consume events, messages, bad: $c (delivered $delivered)"
ktap_check "consume_total" sane "$c" "$delivered"

# post and doorbell: "events doorbells bad"; a chain is never empty, and
# counter pushes ring: some chains carry a doorbell, some arrive; the row
# pushes a chain carries are counted apart, and are some of its writes
p=$(ev spindle_post | awk -v g=$G "{ $F"'
	n++; b += f["bells"]
	if (f["group"] != g || f["wrs"] < 1 || f["bells"] > f["wrs"] ||
	    f["rows"] == "" || f["rows"] + 0 > f["wrs"] + 0)
		bad++
} END { print n + 0, b + 0, bad + 0 }')
b=$(ev spindle_doorbell | awk -v g=$G "{ $F"'
	n++
	if (f["group"] != g)
		bad++
} END { print n + 0, n + 0, bad + 0 }')
ktap_diag "posted chains, doorbells among them, bad: $p; doorbells polled: $b"
posts_ok() {
	sane "$p" && sane "$b" && [ "$(echo "$p" | cut -d' ' -f2)" -gt 0 ]
}
if [ "$N" -lt 2 ]; then
	ktap_result skip "posts_and_doorbells" "one guest: no peers to write to"
else
	ktap_check "posts_and_doorbells" posts_ok
fi

ktap_check "events_disabled" [ "$(cat $EV/enable)" = 0 ]
spindle_unload
ktap_finish
