#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Bad configurations: each is refused (spindlectl exits 1) with a message
# that names the field to fix; the kernel's own check logs the field too;
# and afterwards a good configuration still comes up.
. selftests/lib/ktap.sh
. selftests/lib/spindle.sh

spindle_load || exit 1
ME=$(my_addr)
D=${SPINDLE_OUT:-/tmp}/cfg
mkdir -p "$D"
n=0

# reject NAME PATTERN LINES...: config made of LINES must fail naming PATTERN
reject() {
	local name=$1 pat=$2
	shift 2
	printf '%s\n' "$@" >"$D/$name.conf"
	build/bin/spindlectl up "$D/$name.conf" >"$D/$name.out" 2>&1
	local rc=$?
	ktap_diag "$name: exit $rc: $(head -n 1 "$D/$name.out")"
	if [ $rc = 1 ] && grep -qi -- "$pat" "$D/$name.out"; then
		ktap_result ok "$name"
	else
		ktap_result fail "$name"
	fi
}

M0="member 0 $ME:7601"
M1="member 1 10.77.0.201:7601"
OK="subgroup 0 members all senders all window 8 max_msg 64"
ktap_plan 22
reject dup_member_id "member id" "group 71" "self 0" "$M0" "member 0 10.77.0.202:7601" "$OK"
reject dup_member_addr "address" "group 71" "self 0" "$M0" "member 1 $ME:7601" "$OK"
reject sg_member_not_in_group "subgroup members" "group 71" "self 0" "$M0" "$M1" \
	"subgroup 0 members 0,5 senders 0"
reject sender_not_in_subgroup "subgroup senders" "group 71" "self 0" "$M0" "$M1" \
	"subgroup 0 members 0 senders 0,1"
reject window_zero "window" "group 71" "self 0" "$M0" "subgroup 0 window 0 max_msg 64"
reject window_too_big "window" "group 71" "self 0" "$M0" "subgroup 0 window 5000 max_msg 64"
reject max_msg_zero "max_msg" "group 71" "self 0" "$M0" "subgroup 0 window 8 max_msg 0"
reject max_msg_too_big "max_msg" "group 71" "self 0" "$M0" "subgroup 0 window 8 max_msg 2000000"
reject ring_too_big "ring too large" "group 71" "self 0" "$M0" "subgroup 0 window 4096 max_msg 65536"
reject unknown_mode "mode" "group 71" "self 0" "$M0" "subgroup 0 window 8 max_msg 64 mode chaotic"
reject self_not_member "self" "group 71" "self 9" "$M0" "$OK"
reject self_auto_not_local "self" "group 71" "self auto" "member 0 10.77.0.203:7601" "$OK"
reject group_id_zero "group" "group 0" "self 0" "$M0" "$OK"
reject dup_subgroup_id "subgroup id" "group 71" "self 0" "$M0" "$OK" "$OK"
reject no_subgroups "subgroup" "group 71" "self 0" "$M0"
reject bad_address "address" "group 71" "self 0" "member 0 10.77.0.300:7601" "$OK"

# the parser lets these through; the kernel's own validation names the field
dmesg -C
reject kernel_multicast_addr "member address" "group 71" "self 0" "$M0" "member 1 224.0.0.1:7601" "$OK"
ktap_check "kernel_logs_the_field" sh -c "dmesg | grep -q 'configuration rejected: member address (unspecified or multicast)'"

printf '%s\n' "group 72" "self 0" "$M0" "$OK" >"$D/good.conf"
build/bin/spindlectl up "$D/good.conf" >/dev/null 2>&1
reject group_already_up "already up" "group 72" "self 0" "$M0" "$OK"
ktap_check "good_config_still_comes_up" sh -c "build/bin/spindlectl show 72 | grep -q 'group 72: active' && build/bin/spindlectl down 72"

# The largest group there is (32 members; 31 of them at addresses nobody
# has) comes up on rxe: two connections per peer want 31 x 2 x 778 + 16 =
# 48252 completion queue entries, more than rxe has; group up gives the CQ
# what the device has and says so (spindle_device_fits), and the group
# comes up and goes down with 31 connections still resolving.
big=$D/largest.conf
{
	echo "group 73"
	echo "self 0"
	echo "member 0 $ME:7603"
	for i in $(seq 1 31); do echo "member $i 10.77.0.$((100 + i)):7603"; done
	echo "subgroup 0 members all senders 0 window 8 max_msg 64"
} >"$big"
dmesg -C
build/bin/spindlectl up "$big" >"$D/largest.out" 2>&1
rc=$?
ktap_diag "largest group: up exit $rc: $(head -n 1 "$D/largest.out"); $(dmesg | grep -m1 'completion queues hold')"
largest_up() {
	[ "$rc" = 0 ] &&
		[ "$(build/bin/spindlectl -j show 73 | jq '.[0].members | length')" = 32 ] &&
		dmesg | grep -q 'completion queues hold [0-9]* entries, not 48252'
}
ktap_check "largest_group_up_on_rxe" largest_up
ktap_check "largest_group_down" build/bin/spindlectl down 73
spindle_unload
ktap_finish
