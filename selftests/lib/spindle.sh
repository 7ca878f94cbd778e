# SPDX-License-Identifier: GPL-2.0
# Helpers for guest selftests (sourced).  Run from the repository root.
SPINDLE_KO=${SPINDLE_KO:-$PWD/kmod/spindle.ko}

spindle_loaded() {
	grep -q '^spindle ' /proc/modules
}

# Load spindle.ko with its dependencies (the guest's /lib/modules is the
# host's, read-only, so the module itself is insmod'ed from the build tree).
spindle_load() {
	spindle_loaded && return 0
	modprobe -a ib_core rdma_cm || return 1
	insmod "$SPINDLE_KO" "$@" || return 1
	# devtmpfs creates the node asynchronously
	for _i in $(seq 50); do
		[ -c /dev/spindle_ctl ] && return 0
		sleep 0.1
	done
	echo "spindle_load: /dev/spindle_ctl did not appear" >&2
	return 1
}

spindle_unload() {
	spindle_loaded || return 0
	rmmod spindle
}

# Kernel log lines that must never appear (the cluster runner scans the whole
# console too; this lets a test fail at the step that caused them).
dmesg_clean() {
	! dmesg | grep -E 'BUG:|WARNING:|Oops|KASAN|UBSAN|general protection|unreferenced object|possible (circular|recursive) locking' >&2
}
