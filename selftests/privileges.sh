#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Who may do what: an unprivileged user can neither open the control
# device nor, when it is opened up to everyone, bring a group up (EACCES,
# EPERM) and changes nothing; a group's pinned memory is charged to
# RLIMIT_MEMLOCK of whoever brings it up (without CAP_IPC_LOCK) and a group
# over the limit is refused (ENOMEM, with a log line naming the limit);
# per-file kernel memory is charged to the opener's memory cgroup;
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

ktap_plan 10
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

# memcg_charge: per-file kernel memory (the file, its reservations, its
# delivery queue) is charged to the memory cgroup of whoever opens the
# device: 64 read-write opens of a subgroup with a window of 4096 (64 KiB of
# reservations each) must raise the cgroup's memory.current by 3 MiB at
# least (4048 KiB here; with GFP_KERNEL, uncharged: -40 KiB)
CG=/sys/fs/cgroup
memcg_charge() {
	_before=$(ls /dev/spindle[0-9]*)
	build/bin/spindlectl up "$CFG2" >/dev/null || return 1
	_dev=$(ls /dev/spindle[0-9]* | grep -vxF "$_before" | head -n 1)
	mkdir -p $CG/spindle-acct || return 1
	_kib=$(bash -c '
		echo $$ >"$1/cgroup.procs" || exit 1
		read -r b <"$1/memory.current"
		for i in $(seq 64); do exec {fd}<>"$2" || exit 1; done
		read -r a <"$1/memory.current"
		echo $(((a - b) / 1024))' charge "$CG/spindle-acct" "$_dev")
	rmdir $CG/spindle-acct
	build/bin/spindlectl down $G2 >/dev/null
	ktap_diag "64 opens of $_dev (window 4096): memory.current grew by ${_kib:-?} KiB"
	[ -n "$_kib" ] && [ "$_kib" -ge 3072 ]
}
CFG2=$LOGDIR/privileges_memcg.conf
G2=52
gen_config "$CFG2" $G2 7552 \
	"subgroup 0 members all senders all window 4096 max_msg 64 mode ordered"
grep -q "^cgroup2 $CG " /proc/mounts || mount -t cgroup2 none $CG 2>/dev/null
if grep -qw memory $CG/cgroup.controllers 2>/dev/null &&
	echo +memory >$CG/cgroup.subtree_control; then
	ktap_check "per_file_memory_charged_to_memcg" memcg_charge
else
	ktap_result skip "per_file_memory_charged_to_memcg" "no memory cgroup controller"
fi

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
