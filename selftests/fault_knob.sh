#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The phase-exact fault knob (kmod/fault.c, debugfs group<ID>/fault and
# the module parameter fault_new_groups) is a root-only test knob, but its
# input is checked like any other: bad input is EINVAL and one log line,
# and arms nothing; a one-member group (no view change) refuses a fault
# (EOPNOTSUPP, logged).  Arming, EBUSY and a stall that ends are checked
# where views change: selftests/host/views.sh false_suspicion_*.
. selftests/lib/ktap.sh
. selftests/lib/spindle.sh

spindle_load || exit 1
mount -t debugfs none /sys/kernel/debug 2>/dev/null
ME=$(my_addr)
D=${SPINDLE_OUT:-/tmp}/fault
mkdir -p "$D"
CFG=$D/g73.conf
printf '%s\n' "group 73" "self 0" "member 0 $ME:7603" \
	"subgroup 0 members all senders all window 8 max_msg 64" >"$CFG"
F=/sys/kernel/debug/spindle/group73/fault
P=/sys/module/spindle/parameters/fault_new_groups

ktap_plan 7
build/bin/spindlectl up "$CFG" >/dev/null || exit 1

# arm STRING: write it to the knob; prints the write's error, or "ok"
arm() {
	local err
	err=$( { printf '%s' "$1" >"$F"; } 2>&1) && { echo ok; return; }
	echo "${err##*: }"
}

bad=0
dmesg -C
for s in " " "soon die" "now" "now explode" "now silent 5" "now stall" \
	 "now stall 0" "now stall 600001" "now stall -1" "now stall 12x" \
	 "off now" "drained die die" "echoed short" "proposed short 5"; do
	r=$(arm "$s")
	ktap_diag "'$s': $r"
	[ "$r" = "Invalid argument" ] || bad=1
done
ktap_check "bad_input_is_einval" test $bad = 0
ktap_check "bad_input_is_logged" sh -c "[ \$(dmesg | grep -c 'group 73: fault: want') = 14 ]"
ktap_check "nothing_armed_by_bad_input" grep -qx off "$F"

# a one-member group has no view change: a good fault is refused too
r=$(arm "now stall 300")
ktap_diag "'now stall 300' in a one-member group: $r; reads '$(cat "$F")'"
ktap_check "one_member_group_refuses_a_fault" sh -c "[ '$r' = 'Operation not supported' ] &&
	grep -qx off '$F' && dmesg | grep -q 'group 73: fault: a one-member group has no view change'"
ktap_check "off_is_always_taken" test "$(arm off)" = ok
build/bin/spindlectl down 73 >/dev/null

# fault_new_groups: bad text, and a fault a one-member group cannot take,
# are logged when a group comes up, which then runs unarmed
for v in "now stall" "now stall 300"; do
	echo "$v" >"$P"
	build/bin/spindlectl up "$CFG" >/dev/null || exit 1
	echo "" >"$P"
	ktap_diag "fault_new_groups '$v': $(dmesg | grep 'fault_new_groups' | tail -n 1)"
	grep -qx off "$F" && build/bin/spindlectl show 73 | grep -q 'group 73: active' || bad=2
	build/bin/spindlectl down 73 >/dev/null
done
ktap_check "bad_parameter_is_logged_not_armed" sh -c "[ $bad = 0 ] &&
	dmesg | grep -q 'group 73: fault_new_groups: want' &&
	dmesg | grep -q 'group 73: fault_new_groups: a one-member group has no view change'"
echo "" >"$P"
build/bin/spindlectl up "$CFG" >/dev/null || exit 1
ktap_check "blank_parameter_is_not_logged" sh -c "[ \$(dmesg | grep -c 'fault_new_groups') = 2 ]"
build/bin/spindlectl down 73 >/dev/null
spindle_unload
ktap_finish
