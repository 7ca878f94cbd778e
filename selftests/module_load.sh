#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# spindle.ko loads and unloads cleanly, repeatedly, binds to the soft-RoCE
# device through its ib_client, and creates /dev/spindle_ctl with mode 0600.
. selftests/lib/ktap.sh
. selftests/lib/spindle.sh

CYCLES=${CYCLES:-10}

ktap_plan 7

spindle_unload
ktap_check "modinfo_depends_ib_core" sh -c "modinfo '$SPINDLE_KO' | grep -q '^depends:.*ib_core'"

dmesg -C
ok=1
i=0
while [ $i -lt "$CYCLES" ]; do
	i=$((i + 1))
	if ! spindle_load; then
		ktap_diag "cycle $i: load failed"; ok=0; break
	fi
	if ! rmmod spindle; then
		ktap_diag "cycle $i: rmmod failed"; ok=0; break
	fi
	if [ -e /dev/spindle_ctl ] && sleep 0.5 && [ -e /dev/spindle_ctl ]; then
		ktap_diag "cycle $i: /dev/spindle_ctl left behind"; ok=0; break
	fi
done
[ $ok = 1 ] && ktap_result ok "load_unload_${CYCLES}_cycles" || ktap_result fail "load_unload_${CYCLES}_cycles"

spindle_load
ktap_check "binds_rxe0" sh -c "dmesg | grep -q 'spindle: bound to RDMA device rxe0'"

mode=$(stat -c '%F %a %U:%G' /dev/spindle_ctl 2>/dev/null)
ktap_diag "/dev/spindle_ctl: $mode"
ktap_check "ctl_device_mode_0600_root" [ "$mode" = "character special file 600 root:root" ]

ktap_check "rmmod_with_device_closed" rmmod spindle
ktap_check "no_module_left" sh -c "! grep -q '^spindle ' /proc/modules"
ktap_check "dmesg_clean" dmesg_clean
ktap_finish
