# SPDX-License-Identifier: GPL-2.0
# Helpers for guest selftests (sourced).  Run from the repository root.
# the module built for the kernel this guest runs (make module KVER=...)
SPINDLE_KO=${SPINDLE_KO:-$PWD/build/kmod/$(uname -r)/kmod/spindle.ko}
# the sample kernel consumer is built next to spindle.ko (kmod/sample/)
SPINDLE_SAMPLE_KO=${SPINDLE_KO%/*}/sample/spindle_sample.ko
KMEMLEAK=/sys/kernel/debug/kmemleak

# on_debug_kernel: is this guest on scripts/debug-kernel's kernel (KASAN,
# lockdep, kmemleak; its LOCALVERSION), where everything runs slower?
on_debug_kernel() {
	case "$(uname -r)" in *-spindle-debug) return 0 ;; esac
	return 1
}

# need_guests N: skip the test (KTAP plan 0, exit 4) in a run of fewer
# than N guests
need_guests() {
	[ "${SPINDLE_NODES:-1}" -ge "$1" ] && return 0
	echo "1..0 # SKIP needs $1 guests"
	exit 4
}

spindle_loaded() {
	grep -q '^spindle ' /proc/modules
}

# The QPs' local ACK timeout on this test bed: 4.096 us * 2^17, 537 ms a
# try (the module's default, 14, is 67 ms: perftest's value, for a NIC).
# A try must outlast the fabric's round trip, and soft-RoCE's round trip is
# its guests' CPU: ICMP between 6.1 guests streaming (four and five TCG
# guests on two host cores, one more taken by a busy loop, as a loaded CI
# host) took 6-12 ms at the median, up to 240 ms at the 99th percentile
# and 400 ms at most; between 6.12 guests 90-200 ms at most.  At 67 ms
# such a round trip is a retransmission of everything in flight (6.1:
# 20-40 per guest and scenario, none for a lost packet), and seven in a
# row took live members out (4 of 21 view scenarios under that load, 10
# of 20 and 4 of 20 in two CI runs).  (bench/run-guest.sh keeps the
# module's: see there.)
SPINDLE_ACK_TIMEOUT=${SPINDLE_ACK_TIMEOUT:-17}

# TCG guests sharing two host cores can stall for seconds: only the view
# change tests (which set their own) want suspicion to be quick.
spindle_tune() {
	echo "${SPINDLE_SUSPECT_MS:-10000}" >/sys/module/spindle/parameters/suspect_ms &&
		echo "$SPINDLE_ACK_TIMEOUT" >/sys/module/spindle/parameters/ack_timeout
}

# Load spindle.ko with its dependencies (the guest's /lib/modules is the
# host's, read-only, so the module itself is insmod'ed from the build tree).
spindle_load() {
	spindle_loaded && { spindle_tune; return 0; }
	modprobe -a ib_core rdma_cm || return 1
	insmod "$SPINDLE_KO" "$@" || return 1
	spindle_tune
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

# mark NAME: record in the folder all guests share that this guest got to
# NAME, and go on (the host's --kill K@NAME+T counts from when every guest
# did: scripts/vmcluster)
mark() {
	_d=${SPINDLE_SHARED:?}/barrier.$1
	mkdir -p "$_d" && : >"$_d/${SPINDLE_NODE:?}"
}

# WAITFOR: the waits below, each in one process (a `sleep` per turn of a
# shell loop costs a TCG guest 50 ms and more of its vCPU: a fifth of it
# while it "waits", taken from the guests it waits for)
WAITFOR=${WAITFOR:-$PWD/build/selftests/waitfor}

# barrier NAME [SECONDS]: mark NAME, then wait (SECONDS, default 120, at
# most) until every guest of the run reached it.  One guest: no wait.
barrier() {
	[ "${SPINDLE_NODES:-1}" -le 1 ] && return 0
	mark "$1" || return 1
	"$WAITFOR" -t "${2:-120}" -n "$SPINDLE_NODES" "$SPINDLE_SHARED/barrier.$1" ||
		{ echo "barrier $1: timed out" >&2; return 1; }
}

# marked NAME GUEST...: wait (up to 120 s) until each GUEST marked NAME
# (those guests only, where barrier waits for all)
marked() {
	_d=$SPINDLE_SHARED/barrier.$1
	shift
	_who=$*
	_n=$#
	for _k in "$@"; do
		set -- "$@" "$_d/$_k"
	done
	shift "$_n"
	[ $# = 0 ] && return 0
	"$WAITFOR" -t 120 "$@" && return 0
	echo "marked ${_d##*.}: not every one of $_who got there" >&2
	return 1
}

# my_addr: this guest's address on the test bed's switch (the node's word
# of SPINDLE_ADDRS; 127.0.0.1 outside vmcluster)
my_addr() {
	echo "${SPINDLE_ADDRS:-127.0.0.1}" | cut -d' ' -f$((${SPINDLE_NODE:-0} + 1))
}

# gen_config FILE GROUP PORT SUBGROUP-LINE...: a configuration of all the
# guests (member K at the K-th address of SPINDLE_ADDRS), self = this guest.
gen_config() {
	_f=$1 _g=$2 _p=$3
	shift 3
	{
		echo "group $_g"
		echo "self ${SPINDLE_NODE:-0}"
		_k=0
		for _a in ${SPINDLE_ADDRS:-127.0.0.1}; do
			echo "member $_k $_a:$_p"
			_k=$((_k + 1))
		done
		for _l in "$@"; do
			echo "$_l"
		done
	} >"$_f"
}

# wait_active GROUP [SECONDS]: until GROUP is active here, every member
# connected (`spindlectl up` returns while the peers still connect), for
# SECONDS of the clock at most (default 120: a turn of the loop takes a
# while on a debug guest); false if it is not by then
wait_active() {
	_end=$(($(uptime_s) + ${2:-120}))
	while [ "$(uptime_s)" -lt $_end ]; do
		case "$(build/bin/spindlectl group show "$1" 2>/dev/null)" in
		"group $1 state active "*) return 0 ;;
		esac
		sleep 0.2
	done
	return 1
}

# uptime_s: whole seconds since boot; no process started (no date, no
# grep in a wait's loop: each start costs a TCG guest 50 ms and more of
# its vCPU)
uptime_s() {
	read -r _up _idle </proc/uptime
	echo "${_up%.*}"
}

# kmemleak_reset: on a kmemleak kernel, forget what the kernel leaked
# before this point (boot, earlier tests), so a later kmemleak_scan reports
# only what happened since.  False (nothing done) without kmemleak.
kmemleak_reset() {
	[ -w "$KMEMLEAK" ] || return 1
	echo scan >"$KMEMLEAK" && echo clear >"$KMEMLEAK"
}

# kmemleak_scan: scan now; print what kmemleak reports (empty: no leak).
# kmemleak ignores objects younger than 5 s, hence the wait.
kmemleak_scan() {
	sleep 6
	echo scan >"$KMEMLEAK" && cat "$KMEMLEAK"
}
