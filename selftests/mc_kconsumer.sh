#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The exported in-kernel API, through the sample consumer module
# (kmod/sample/spindle_sample.ko): on every guest it sends 300 messages
# built in place and checks every delivery (pattern, FIFO, order).
. selftests/lib/ktap.sh
. selftests/lib/spindle.sh

N=${SPINDLE_NODES:-1}
G=41
COUNT=300
P=/sys/module/spindle_sample/parameters
CFG=${SPINDLE_OUT:-/tmp}/kconsumer.conf

spindle_load || exit 1
gen_config "$CFG" $G 7541 "subgroup 3 members all senders all window 24 max_msg 200 mode ordered"
ktap_plan 5
ktap_check "spindlectl_up" build/bin/spindlectl up "$CFG"
ktap_check "sample_module_loads" insmod "$SPINDLE_SAMPLE_KO" group=$G subgroup=3 count=$COUNT size=200
want=$((N * COUNT))
i=0
while [ "$(cat $P/delivered 2>/dev/null || echo 0)" -lt $want ] && [ $i -lt 600 ]; do
	sleep 0.2
	i=$((i + 1))
done
ktap_diag "sent $(cat $P/sent) delivered $(cat $P/delivered) errors $(cat $P/errors), want $want"
ktap_check "all_delivered" [ "$(cat $P/delivered)" -eq $want ]
ktap_check "no_errors" [ "$(cat $P/errors)" -eq 0 ]
barrier kconsumer_done
rmmod spindle_sample
ktap_check "spindlectl_down" build/bin/spindlectl down $G
spindle_unload
ktap_finish
