#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The exported in-kernel API, through the sample consumer module
# (kmod/sample/spindle_sample.ko): on every guest it sends 300 messages
# built in place and checks every delivery (pattern, FIFO, order); then
# again with its slots marked ready and its deliveries given back from a
# timer, in softirq context, as the API allows (spindle_kapi.h): a lock
# taken there that the predicate thread holds with bottom halves on would
# deadlock a CPU, and lockdep says so on the debug kernels.
. selftests/lib/ktap.sh
. selftests/lib/spindle.sh

N=${SPINDLE_NODES:-1}
COUNT=300
P=/sys/module/spindle_sample/parameters

# run MODE GROUP: one group, the sample module in it with softirq=MODE
run() {
	_cfg=${SPINDLE_OUT:-/tmp}/kconsumer-$2.conf
	_t=$([ "$1" = 1 ] && echo _softirq)
	gen_config "$_cfg" "$2" $((7500 + $2)) "subgroup 3 members all senders all window 24 max_msg 200 mode ordered"
	ktap_check "spindlectl_up$_t" build/bin/spindlectl up "$_cfg"
	ktap_check "sample_module_loads$_t" insmod "$SPINDLE_SAMPLE_KO" group="$2" subgroup=3 \
		count=$COUNT size=200 softirq="$1"
	_want=$((N * COUNT))
	_i=0
	while [ "$(cat $P/delivered 2>/dev/null || echo 0)" -lt $_want ] && [ $_i -lt 600 ]; do
		sleep 0.2
		_i=$((_i + 1))
	done
	ktap_diag "softirq=$1: sent $(cat $P/sent) delivered $(cat $P/delivered) errors $(cat $P/errors), want $_want"
	ktap_check "all_delivered$_t" [ "$(cat $P/delivered)" -eq $_want ]
	ktap_check "no_errors$_t" [ "$(cat $P/errors)" -eq 0 ]
	barrier "kconsumer_done_$2"
	rmmod spindle_sample
	ktap_check "spindlectl_down$_t" build/bin/spindlectl down "$2"
}

spindle_load || exit 1
ktap_plan 11
run 0 41
run 1 42
ktap_check "kernel_log_clean" dmesg_clean
spindle_unload
ktap_finish
