#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# One guest's part of scripts/demo.
set -e
. selftests/lib/spindle.sh
MSGS=${1:-2000}
LOGS=$SPINDLE_OUT/logs
mkdir -p "$LOGS"
spindle_load
CFG=$SPINDLE_OUT/demo.conf
gen_config "$CFG" 7 7470 \
	"subgroup 0 members all senders all window 64 max_msg 1024 mode ordered" \
	"subgroup 1 members 0,1 senders 0,1 window 16 max_msg 256 mode ordered"
build/bin/spindlectl up "$CFG"
if [ "$SPINDLE_NODE" -le 1 ]; then
	build/bin/spindle-bw --config "$CFG" --subgroup 1 --messages "$MSGS" --size 256 \
		--log "$LOGS/demo_sg1.log" >"$LOGS/demo_sg1.json" &
fi
build/bin/spindle-bw --config "$CFG" --subgroup 0 --messages "$MSGS" --size 1024 \
	--log "$LOGS/demo_sg0.log" >"$LOGS/demo_sg0.json"
wait
build/bin/spindlectl show 7
barrier demo_done
build/bin/spindlectl down 7
