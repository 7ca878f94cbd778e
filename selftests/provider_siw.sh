#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# An iWARP device is refused, with the reason.  Every counter push is an
# RDMA write with immediate, which iWARP does not have: bringing a group
# up on soft-iWARP (siw) must fail with a clear error, log what the device
# lacks, leave no group behind, and let go of the device (it unloads).
# Then soft-RoCE is back and a group comes up on it again.
# siw is Debian's nowhere: the debug kernels build it in, the others get
# it from scripts/siw-module (build/siw/KVER/siw.ko, `make siw`).
. selftests/lib/ktap.sh
. selftests/lib/spindle.sh

SIW_KO=$PWD/build/siw/$(uname -r)/siw.ko
ME=$(my_addr)
D=${SPINDLE_OUT:-/tmp}/siw
mkdir -p "$D"

spindle_load || exit 1
ktap_plan 6
if ! modprobe siw 2>/dev/null && ! { modprobe libcrc32c && insmod "$SIW_KO"; }; then
	ktap_diag "no siw for $(uname -r): make siw KVER=$(uname -r)"
	exit 1
fi
ktap_diag "siw from $(modinfo -F filename siw 2>/dev/null || echo "$SIW_KO")"

# siw on the address soft-RoCE had: rdma_cm must find siw0 for it
rdma link delete rxe0
rdma link add siw0 type siw netdev eth0
ktap_check "siw_device_up" sh -c "for i in \$(seq 50); do rdma link show siw0/1 2>/dev/null | grep -q ACTIVE && exit 0; sleep 0.2; done; exit 1"

# a peer (which never answers): a group alone on its node posts nothing
# and runs on any device
printf '%s\n' "group 81" "self 0" "member 0 $ME:7611" "member 1 10.77.0.201:7611" \
	"subgroup 0 members all senders all window 8 max_msg 64" >"$D/siw.conf"
dmesg -C
build/bin/spindlectl up "$D/siw.conf" >"$D/up.out" 2>&1
rc=$?
ktap_diag "spindlectl up on siw0: exit $rc: $(head -n 1 "$D/up.out")"
ktap_check "refused" test "$rc" != 0
line=$(dmesg | grep -m1 'group 81: siw0 lacks')
ktap_diag "kernel: ${line:-nothing}"
ktap_check "kernel_says_why" sh -c "echo '$line' | grep -q 'iWARP has none'"
ktap_check "no_group_left" sh -c "! build/bin/spindlectl show 2>/dev/null | grep -q 'group 81'"

rdma link delete siw0
ktap_check "siw_unloads" rmmod siw

rdma link add rxe0 type rxe netdev eth0
for i in $(seq 50); do
	rdma link show rxe0/1 2>/dev/null | grep -q ACTIVE && break
	sleep 0.2
done
printf '%s\n' "group 82" "self 0" "member 0 $ME:7612" \
	"subgroup 0 members all senders all window 8 max_msg 64" >"$D/rxe.conf"
ktap_check "rxe_group_after" sh -c "build/bin/spindlectl up '$D/rxe.conf' >/dev/null && build/bin/spindlectl down 82"
ktap_finish
