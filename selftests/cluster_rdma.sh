#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The cluster itself: every guest has soft-RoCE up, reaches every other guest
# on the closed L2, and spindle.ko binds to its rxe device.
. selftests/lib/ktap.sh
. selftests/lib/spindle.sh

ktap_plan 4
ktap_check "rxe0_active" sh -c "rdma link show rxe0/1 | grep -q 'state ACTIVE'"
ok=1
for a in $SPINDLE_ADDRS; do
	ping -c1 -W2 "$a" >/dev/null 2>&1 || { ktap_diag "cannot reach $a"; ok=0; }
done
[ $ok = 1 ] && ktap_result ok "all_peers_reachable" || ktap_result fail "all_peers_reachable"
ktap_check "no_default_route_off_switch" sh -c "! ip route | grep -q '^default'"
spindle_unload
dmesg -C
spindle_load
ktap_check "module_binds_rxe0" sh -c "dmesg | grep -q 'bound to RDMA device rxe0'"
spindle_unload
ktap_finish
