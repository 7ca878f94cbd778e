#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# /init of the scripts/vmcluster guests (packed by scripts/lib/mkinitramfs.sh).
# POSIX sh: stage 1 runs under busybox, stage 2 under the host's /bin/sh.
#
# Stage 1, PID 1 in the initramfs: insmod the virtio/9p modules; mount the
#   writable 9p export "out" (the host's DIR/nodeK) and read .spindle from
#   it; mount the host's root ("host", read-only) on /host with proc, sys,
#   dev, tmpfs... inside; move "out" onto the path it has on the host, so
#   $SPINDLE_OUT names the same folder on both sides; copy this script and
#   busybox to /host/run/spindle; chroot into /host for stage 2; power off.
# Stage 2, in the chroot: modprobe soft-RoCE, bring up lo, eth0 and rxe0,
#   wait until every peer answers ping, report ready, wait for the host's
#   go-ahead (so no guest starts, and maybe finishes and powers off, before
#   all have seen each other), run the command, report its exit code and
#   wait until every guest's command has ended (so that peers stay up while
#   any guest still runs).
#
# Files in the out folder (the host side is scripts/vmcluster):
#   .spindle  host->guest  SPINDLE_NODE SPINDLE_NODES SPINDLE_ADDRS SPINDLE_OUT
#                          addr (this guest's IPv4), repo (working directory),
#                          timeout (bound of the waits for .go and .halt),
#                          load_module, spindle_ko (the module to insmod),
#                          guest_modules (a host folder for /lib/modules),
#                          nic_module (the driver of the guest's NIC)
#   .cmd      host->guest  "set -- ARGS...", the command, shell-quoted
#   .ready    guest->host  every peer answered ping
#   .go       host->guest  every guest is ready
#   .started  guest->host  written just before the command starts
#   .rc       guest->host  the command's exit code
#   .halt     host->guest  every guest's command has ended (or it died)
#   .error    guest->host  why the guest could not run the command
#   command.log            the command's output (also on the console)

PEER_WAIT=120	# seconds for every peer to answer ping
BIN=/run/spindle	# (in the chroot) this script, busybox and its applets

errfile=

say() {
	echo "spindle-init: $*"
}

# fail MSG: report why the command cannot run, then stop this guest.
fail() {
	say "FAILED: $*"
	[ -n "$errfile" ] && echo "$*" >"$errfile"
	if [ $$ = 1 ]; then
		sync
		poweroff -f
	fi
	exit 1
}

# wait_for SECONDS CMD...: run CMD until it succeeds; fail after SECONDS.
wait_for() {
	_deadline=$(($(date +%s) + $1))
	shift
	until "$@"; do
		[ "$(date +%s)" -lt "$_deadline" ] || return 1
		sleep 0.2
	done
}

# wait_file SECONDS FILE: until FILE (made by the host) exists; fail after
# SECONDS.  The tests' waitfor, where the tree has it built, waits in one
# process: a turn of wait_for's loop is two process starts, 50 ms and more
# of the vCPU each under TCG, taken from the guests this one waits for.
wait_file() {
	if [ -x "$repo/build/selftests/waitfor" ]; then
		"$repo/build/selftests/waitfor" -t "$1" "$2"
	else
		wait_for "$1" test -e "$2"
	fi
}

stage1() {
	export PATH=/bin
	mount -t proc proc /proc
	mount -t sysfs sysfs /sys
	mount -t devtmpfs devtmpfs /dev
	while read -r m; do
		insmod "/lib/modules/$m.ko" || fail "insmod $m"
	done </lib/modules/order

	opts=trans=virtio,version=9p2000.L,msize=262144
	mount -t 9p -o "$opts" out /out || fail "cannot mount the out folder"
	mkdir -p /shared
	mount -t 9p -o "$opts" shared /shared || fail "cannot mount the shared folder"
	errfile=/out/.error
	[ -r /out/.spindle ] || fail "no .spindle in the out folder"
	# shellcheck source=/dev/null
	. /out/.spindle
	: "${repo:?}" "${SPINDLE_OUT:?}" "${SPINDLE_SHARED:?}"

	# The host's root does not change under a run: let the guest cache it.
	mount -t 9p -o "$opts,ro,cache=loose" host /host ||
		fail "cannot mount the host's root"
	r=/host
	if ! { mount -t proc proc $r/proc &&
		mount -t sysfs sysfs $r/sys &&
		mount -t devtmpfs devtmpfs $r/dev &&
		mkdir -p $r/dev/pts $r/dev/shm &&
		mount -t devpts devpts $r/dev/pts &&
		mount -t tmpfs -o mode=1777 tmpfs $r/dev/shm; }; then
		fail "cannot mount proc, sys and dev in the chroot"
	fi
	# the debug kernel's modules (scripts/debug-kernel) stand in for the host's
	if [ -n "${guest_modules:-}" ] &&
		! mount -o bind "$r$guest_modules" $r/lib/modules; then
		fail "cannot mount $guest_modules on /lib/modules"
	fi
	# optional: absent from some kernels
	mount -t debugfs debugfs $r/sys/kernel/debug 2>/dev/null
	# kmemleak's own scans (every 10 min, the first a minute after boot)
	# would take the one vCPU for a long while in the middle of a test,
	# under KASAN and TCG; stage2 asks for a scan after the command instead
	if [ -w $r/sys/kernel/debug/kmemleak ]; then
		echo scan=off >$r/sys/kernel/debug/kmemleak
	fi
	mount -t tracefs tracefs $r/sys/kernel/tracing 2>/dev/null
	for spec in /run:0755 /tmp:1777 /var/tmp:1777 /root:0700; do
		d=${spec%:*}
		case "$repo/" in
		"$d"/*)
			say "no tmpfs on $d: it holds $repo"
			continue ;;
		esac
		mount -t tmpfs -o "mode=${spec#*:}" tmpfs "$r$d" ||
			fail "cannot mount a tmpfs on $d"
	done
	if ! { mkdir -p "$r$SPINDLE_OUT" && mount -o move /out "$r$SPINDLE_OUT"; }; then
		fail "cannot mount the out folder on $SPINDLE_OUT"
	fi
	errfile=$r$SPINDLE_OUT/.error
	if ! { mkdir -p "$r$SPINDLE_SHARED" && mount -o move /shared "$r$SPINDLE_SHARED"; }; then
		fail "cannot mount the shared folder on $SPINDLE_SHARED"
	fi

	# busybox's applets come last in stage 2's PATH: they stand in for
	# tools the host lacks (ping, nc...).  The initramfs's /bin holds
	# busybox and a relative link to it per applet: one cp copies them
	# all (a process per link took seconds of a guest's boot under TCG).
	if ! { mkdir -p "$r$BIN/bin" &&
		cp /init "$r$BIN/init" &&
		cp -a /bin/. "$r$BIN/bin/"; }; then
		fail "cannot copy the init and busybox to the chroot"
	fi

	env -i TERM=linux SPINDLE_OUT="$SPINDLE_OUT" \
		chroot $r /bin/sh "$BIN/init" stage2
	sync
	poweroff -f
}

# sched_waits: the tasks that waited longest for the CPU once runnable
# (schedstats, switched on before the command), ksoftirqd among them:
# an ACK that soft-RoCE sends late is told from a late guest by these
sched_waits() {
	[ -r /proc/sys/kernel/sched_schedstats ] || return 0
	echo "longest runqueue waits (ms), run time (ms), task:"
	# one awk for all tasks: one per task took 3 s and more under TCG,
	# after every command (a task gone meanwhile: cat skips its file)
	cat /proc/[0-9]*/sched 2>/dev/null |
		awk 'function out() { if (w != "") printf "%12.3f %12.3f %s\n", w, r, n }
		     /#threads:/ { out(); n = $1; w = ""; r = "" }
		     /wait_max/ { w = $NF }
		     /sum_exec_runtime/ { r = $NF }
		     END { out() }' | sort -rn | head -n 8
	grep -E 'NET_RX|TASKLET|TIMER' /proc/softirqs
}

# peers_up: every other guest answers ping and rxe0 is active.
# shellcheck disable=SC2154 # ($addr comes from .spindle)
peers_up() {
	for a in $SPINDLE_ADDRS; do
		[ "$a" = "$addr" ] && continue
		ping -c1 -W1 "$a" >/dev/null 2>&1 || return 1
	done
	rdma link show rxe0/1 | grep -q 'state ACTIVE'
}

# shellcheck disable=SC2120 # ("$@" is the command, set by .cmd)
stage2() {
	export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:$BIN/bin
	export HOME=/root
	errfile=$SPINDLE_OUT/.error
	# shellcheck source=/dev/null
	. "$SPINDLE_OUT/.spindle"
	: "${addr:?}" "${repo:?}" "${timeout:?}"
	SPINDLE_KO=${spindle_ko:-$repo/build/kmod/$(uname -r)/kmod/spindle.ko}
	export SPINDLE_NODE SPINDLE_NODES SPINDLE_ADDRS SPINDLE_OUT SPINDLE_SHARED SPINDLE_KO

	# shellcheck disable=SC2086 # (one or two module names)
	modprobe -a ${nic_module:-virtio_net e1000} crc32_generic rdma_rxe ib_core \
		rdma_cm ib_uverbs rdma_ucm || fail "modprobe failed"
	wait_for 10 test -e /sys/class/net/eth0 || fail "no eth0"
	if ! { ip link set lo up &&
		ip addr add "$addr/24" dev eth0 &&
		ip link set eth0 up; }; then
		fail "cannot configure eth0"
	fi
	rdma link add rxe0 type rxe netdev eth0 || fail "rdma link add rxe0 failed"
	if ! wait_for $PEER_WAIT peers_up; then
		down=
		for a in $SPINDLE_ADDRS; do
			ping -c1 -W1 "$a" >/dev/null 2>&1 || down="$down $a"
		done
		# what the next look at a test-bed failure needs: did ARP
		# resolve the silent ones, did eth0 send and receive at all
		say "eth0: $(ip -s -o link show eth0 | tr -s ' ' | cut -c1-400)"
		say "neighbours: $(ip neigh show dev eth0 | tr '\n' ';')"
		fail "after ${PEER_WAIT}s: no answer from:${down:- none}; $(rdma link show rxe0/1)"
	fi
	if [ "${load_module:-1}" = 1 ] && [ -f "$SPINDLE_KO" ]; then
		modprobe -a ib_core rdma_cm || fail "modprobe rdma_cm failed"
		insmod "$SPINDLE_KO" || fail "insmod $SPINDLE_KO failed"
	fi
	# for sched_waits(), at the end
	[ -w /proc/sys/kernel/sched_schedstats ] &&
		echo 1 >/proc/sys/kernel/sched_schedstats
	: >"$SPINDLE_OUT/.ready"
	wait_file "$timeout" "$SPINDLE_OUT/.go" || fail "no go-ahead from the host"
	cd "$repo" || fail "cannot cd to $repo"

	# The output goes through a fifo to a background tee, not a pipe: a
	# process the command leaves behind would keep a pipe open, and this
	# script would never learn that the command ended.
	fifo=$BIN/output
	mkfifo "$fifo" || fail "mkfifo $fifo"
	{ tee "$SPINDLE_OUT/command.log" <"$fifo"; : >"$BIN/tee.done"; } &
	say "node $SPINDLE_NODE: starting the command"
	: >"$SPINDLE_OUT/.started"
	# shellcheck source=/dev/null
	(. "$SPINDLE_OUT/.cmd" && exec "$@") </dev/null >"$fifo" 2>&1
	rc=$?
	wait_for 2 test -e "$BIN/tee.done"
	say "node $SPINDLE_NODE: the command exited $rc"
	# what the soft NIC and eth0 counted (drops, retries, sequence
	# errors): a test-bed failure is told from a protocol one by these
	{
		rdma statistic show link rxe0/1 2>&1
		ip -s -s link show eth0 2>&1
		sched_waits
	} >"$SPINDLE_OUT/net.txt"

	# A kmemleak kernel: report what the run leaked (the host scans the
	# console for "unreferenced object").  kmemleak ignores objects younger
	# than 5 s.
	if [ -w /sys/kernel/debug/kmemleak ]; then
		sleep 5
		echo scan >/sys/kernel/debug/kmemleak
		cat /sys/kernel/debug/kmemleak
	fi
	echo $rc >"$SPINDLE_OUT/.rc"
	wait_file "$timeout" "$SPINDLE_OUT/.halt"
}

if [ "${1:-}" = stage2 ]; then
	# shellcheck disable=SC2119 # (stage2 takes no arguments)
	stage2
else
	stage1
fi
