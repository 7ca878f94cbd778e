#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# One guest's part of scripts/demo:
#
#   demo-guest.sh MESSAGES OPS RATE
#
# Group 7 of every guest, two subgroups running at the same time:
#   subgroup 0  all members send, ordered: spindle-counter, the replicated
#               register (OPS operations per sender, RATE a second each)
#   subgroup 1  all members, guests 0 and 1 send, ordered: spindle-bw
#               streaming MESSAGES messages of 1 KB per sender
# Everything lands in $SPINDLE_OUT, which the host reads while it runs:
#   counter.out  spindle-counter's live lines, then its JSON line
#   stream.log   spindle-bw's delivery log; stream.json its JSON line
#   live.json    spindlectl -j subgroup show 7, every second
set -e
. selftests/lib/spindle.sh
MSGS=${1:-10000}
OPS=${2:-1500}
RATE=${3:-100}
O=$SPINDLE_OUT
CTL=build/bin/spindlectl

spindle_load
CFG=$O/demo.conf
gen_config "$CFG" 7 7470 \
	"subgroup 0 members all senders all window 32 max_msg 64 mode ordered" \
	"subgroup 1 members all senders 0,1 window 64 max_msg 1024 mode ordered"
$CTL up "$CFG"
i=0
until [ "$($CTL -j group show 7 | jq -r '.[0].state')" = active ]; do
	i=$((i + 1))
	if [ $i -gt 600 ]; then
		echo "demo-guest: group 7 did not connect in 60 s" >&2
		$CTL group show 7
		exit 1
	fi
	sleep 0.1
done
if [ "$SPINDLE_NODE" = 0 ]; then
	echo "demo-guest: \$ spindlectl group show 7"
	$CTL group show 7
fi

# the kernel's counters, for the host's live lines
(
	while :; do
		$CTL -j subgroup show 7 >"$O/live.tmp" 2>/dev/null && mv -f "$O/live.tmp" "$O/live.json"
		sleep 1
	done
) &
sampler=$!

build/bin/spindle-counter --config "$CFG" --subgroup 0 --ops "$OPS" --rate "$RATE" \
	--timeout 240 >"$O/counter.out" 2>"$O/counter.err" &
counter=$!
rc=0
build/bin/spindle-bw --config "$CFG" --subgroup 1 --messages "$MSGS" --size 1024 \
	--timeout 240 --log "$O/stream.log" >"$O/stream.json" 2>"$O/stream.err" || rc=1
wait $counter || rc=1
kill $sampler 2>/dev/null || true
wait $sampler 2>/dev/null || true
# the last sample, replaced whole (the host may be reading it)
if $CTL -j subgroup show 7 >"$O/live.tmp"; then
	mv -f "$O/live.tmp" "$O/live.json"
else
	rc=1
fi
if [ "$SPINDLE_NODE" = 0 ]; then
	echo "demo-guest: \$ spindlectl subgroup show 7"
	$CTL subgroup show 7
fi
for f in counter.err stream.err; do
	if [ -s "$O/$f" ]; then
		echo "demo-guest: $f:"
		cat "$O/$f"
	fi
done
barrier demo_done
$CTL down 7
exit $rc
