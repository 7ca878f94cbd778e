#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Who may do what: an unprivileged user can neither open the control
# device nor, when it is opened up to everyone, bring a group up (EACCES,
# EPERM) and changes nothing; a group's pinned memory is charged to
# RLIMIT_MEMLOCK of whoever brings it up (without CAP_IPC_LOCK) and a group
# over the limit is refused (ENOMEM, with a log line naming the limit);
# unloading is refused while a subgroup device is open, and tears the
# group down cleanly once none is.
. selftests/lib/ktap.sh
. selftests/lib/spindle.sh

spindle_load || exit 1
LOGDIR=${SPINDLE_OUT:-/tmp}/logs
mkdir -p "$LOGDIR"
CFG=$LOGDIR/privileges.conf
G=51
gen_config "$CFG" $G 7551 \
	"subgroup 0 members all senders all window 64 max_msg 4096 mode ordered"
# a copy nobody can run: /run is the guest's own tmpfs (/tmp may hold the
# repository, read-only)
PRIV=$(mktemp -d /run/spindle-priv.XXXXXX) && chmod 755 "$PRIV"
CTL=$PRIV/spindlectl
cp build/bin/spindlectl "$CTL" && chmod 755 "$CTL"
AS_NOBODY="setpriv --reuid=nobody --regid=nogroup --clear-groups"
NO_IPC_LOCK="setpriv --inh-caps=-ipc_lock --bounding-set=-ipc_lock"

group_absent() {
	! build/bin/spindlectl show 2>/dev/null | grep -q "^group $G:"
}

ktap_plan 9
ktap_check "ctl_device_mode_0600" test "$(stat -c %a /dev/spindle_ctl)" = 600

out=$($AS_NOBODY $CTL up "$CFG" 2>&1)
ktap_diag "nobody, spindlectl up: $out"
denied() { echo "$out" | grep -q 'Permission denied'; }
ktap_check "nobody_cannot_open_ctl" denied
chmod 666 /dev/spindle_ctl
out=$($AS_NOBODY $CTL up "$CFG" 2>&1)
chmod 600 /dev/spindle_ctl
ktap_diag "nobody, ctl opened to all, spindlectl up: $out"
eperm() { echo "$out" | grep -q 'Operation not permitted' && group_absent; }
ktap_check "nobody_gets_eperm_and_changes_nothing" eperm
dmesg -C
out=$(prlimit --memlock=65536:65536 $NO_IPC_LOCK build/bin/spindlectl up "$CFG" 2>&1)
ktap_diag "64 KiB RLIMIT_MEMLOCK, no CAP_IPC_LOCK: $out"
ktap_diag "kernel: $(dmesg | grep 'RLIMIT_MEMLOCK' | head -n 1)"
refused() {
	echo "$out" | grep -q 'Cannot allocate memory' &&
		dmesg | grep -q 'RLIMIT_MEMLOCK allows' && group_absent
}
ktap_check "over_memlock_refused" refused

ktap_check "under_memlock_accepted" prlimit --memlock=unlimited:unlimited \
	$NO_IPC_LOCK build/bin/spindlectl up "$CFG"

dev=$(ls /dev/spindle[0-9]* 2>/dev/null | head -n 1)
ktap_check "subgroup_device_mode_0660" test "$(stat -c %a "$dev")" = 660
ktap_check "nobody_cannot_open_subgroup_device" sh -c "! $AS_NOBODY sh -c 'exec 3<$dev' 2>/dev/null"

# a reader holds the device open while we try to unload
( exec 3<"$dev"; sleep 3 ) &
holder=$!
sleep 0.5
ktap_check "rmmod_refused_while_open" sh -c "! rmmod spindle 2>/dev/null && grep -q '^spindle ' /proc/modules"
wait $holder

unload_clean() {
	rmmod spindle && dmesg | grep -q "group $G down" &&
		! grep -q '^spindle ' /proc/modules && dmesg_clean
}
dmesg -C
ktap_check "rmmod_tears_down_an_idle_group" unload_clean
rm -rf "$PRIV"
ktap_finish
