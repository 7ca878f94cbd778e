#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# One guest's part of scripts/bench (run under scripts/vmcluster).  Every
# guest runs every step; barriers keep them in step.  Each result is one
# JSON line, tagged with the run's name and the cluster size, appended to
# $SPINDLE_OUT/bench/results.jsonl.  Runs send a fixed number of messages
# per sender, by size (as Derecho's bandwidth_test): an ordered baseline
# has no nulls, so its senders cannot stop on a clock.  Steps:
#   perftest  ib_write_bw / ib_write_lat between guests 0 and 1 (the wire);
#             ib_send_lat -e (both sides sleep on completion events, as an
#             idle Spindle thread does) between them, and from guest 0 to
#             every other guest at once
#   sweep     spindle and its baseline: all/half/one senders x 1 B, 128 B,
#             1 KB, 10 KB (ordered, window 100)
#   window    1 B and 10 KB at windows 16 and 500
#   groups    of the sweep, only what messages_vs_nodes.png plots: spindle
#             and its baseline, all senders, 1 B and 10 KB; what sweep
#             runs with more than 4 guests, where all of it takes hours
#   unordered 1 KB and 10 KB
#   delayed   10 KB with one sender busy-waiting 100 us after each send,
#             then sleeping 100 us instead
#   delayab   BENCH_AB_ROUNDS (4) rounds of 10 KB with no sender delayed,
#             one busy-waiting and one sleeping, the order rotated
#   copy      10 KB copied in and out instead of built in place
#   coalesce  1 B, window 500, counter pushes not coalesced
#   latency   spindle-lat: one sender, one message in flight; Spindle,
#             then its baseline
#   ab        what consumers released rides along (lazy_ms 10, the
#             default) against pushed at once (lazy_ms 0), interleaved:
#             BENCH_AB_ROUNDS (4) rounds of spindle-lat, 10 KB window 100
#             and 1 B window 500 under each, the order swapped every round
#             (BENCH_AB_KINDS, default "latency 10240 1", picks among them)
#   before    the module and spindle-bw of HEAD against those of an older
#             tree (BENCH_BEFORE, its root: kmod/spindle.ko and build/bin
#             built for this kernel), interleaved: BENCH_AB_ROUNDS (4)
#             rounds of 10 KB window 100 and 1 B window 500, all senders
#             (those of BENCH_AB_KINDS),
#             the module reloaded on every guest before each side's runs;
#             BENCH_HEAD_PARAMS (e.g. "lazy_ms=0") are this tree's
#             module's parameters there, to tell which change made a
#             difference
#   breakdown the same with the events along a message traced (kmod/
#             trace.h) into bench/trace-breakdown.txt, for bench/breakdown
#   blk       fio's 4 KiB random writes (O_DIRECT) through the replicated
#             block device (/dev/spindle-blk0, spindle_blk): guest 0 alone
#             at queue depths 1 and 16, then every guest at once; and the
#             same fio on guest 0's RAM disk alone (brd), the store without
#             the group
# BENCH_SCALE (default 1) multiplies the message counts; BENCH_SECONDS
# (default 3) is perftest's run length; BENCH_STEPS (default: all of the
# above) picks steps.
# The module's ACK timeout (67 ms), not the test bed's (537 ms): the 10 KB
# streams lose packets on rxe here, and each loss stalls its QP for a whole
# try (at 2^16 and 2^19 they silenced members for 10 s).  With more than 4
# guests a guest's share of the host is too small for it: with 6, the
# 10 KB streams lost members to "transport retry counter exceeded" within
# seconds at 67 ms and at 268 ms (send queues waited over a second for
# ACKs), so 1.07 s there, as the debug lanes' view tests use from 5 guests.
SPINDLE_ACK_TIMEOUT=14
[ "${SPINDLE_NODES:-0}" -gt 4 ] && SPINDLE_ACK_TIMEOUT=18
. selftests/lib/spindle.sh

SECS=${BENCH_SECONDS:-3}
SCALE=${BENCH_SCALE:-1}
STEPS=${BENCH_STEPS:-perftest sweep window unordered delayed copy coalesce latency ab breakdown blk}
N=${SPINDLE_NODES:?}

# Four guests on two host cores can starve a guest's predicate thread for
# seconds, eight for longer: the benchmark measures throughput, not failure
# detection.
suspect=10000
[ "$N" -gt 4 ] && suspect=30000
echo $suspect >/sys/module/spindle/parameters/suspect_ms 2>/dev/null
echo $SPINDLE_ACK_TIMEOUT >/sys/module/spindle/parameters/ack_timeout 2>/dev/null
# how long one run may take (a guard: a run that hits it has no result)
RUN_TIMEOUT=240
[ "$N" -gt 4 ] && RUN_TIMEOUT=600

# messages per sender for a size: a few seconds of spindle, more of baseline;
# beyond 4 guests 16/N^2 of that, as every guest delivers every sender's
# stream and the baseline's cost per message grows with the group (at 4
# guests its 1 B run already takes a minute)
count() {	# count SIZE [baseline]
	case "$1:${2:-}" in
	1:|128:)		c=30000 ;;
	1024:)			c=15000 ;;
	10240:)			c=2000 ;;
	1:baseline|128:baseline) c=5000 ;;
	1024:baseline)		c=4000 ;;
	*:baseline)		c=1000 ;;
	esac
	[ "$N" -gt 4 ] && c=$((c * 16 / (N * N)))
	echo $((c * SCALE))
}
OUT=$SPINDLE_OUT/bench
RES=$OUT/results.jsonl
mkdir -p "$OUT"
: >"$RES"
A0=$(echo "$SPINDLE_ADDRS" | cut -d' ' -f1)
run=0

# record NAME JSON-LINE: tag a result and keep it
record() {
	[ -n "$2" ] || {
		echo "{\"run\":\"$1\",\"cluster\":$N,\"error\":\"no result\"}" >>"$RES"
		return
	}
	echo "$2" | jq -c --arg run "$1" --argjson cluster "$N" \
		'. + {run: $run, cluster: $cluster}' >>"$RES" 2>>"$OUT/errors.log" ||
		echo "{\"run\":\"$1\",\"cluster\":$N,\"error\":\"no result\"}" >>"$RES"
}

# bw NAME SPINDLE-BW-ARGS...: one run on every guest
bw() {
	_name=$1
	shift
	run=$((run + 1))
	barrier "$_name.go" || return 1
	_line=$("${BW_BIN:-build/bin}/spindle-bw" --group $((200 + run)) --port $((8000 + run)) \
		--timeout $RUN_TIMEOUT "$@" 2>>"$OUT/errors.log" | grep '^{' | tail -n 1)
	record "$_name" "$_line"
	barrier "$_name.done"
}

# pt_json TOOL SIZE FILE: perftest's result line in FILE as one JSON line
pt_json() {
	if [ "$1" = ib_write_bw ]; then
		awk -v s="$2" '/#bytes/ { getline; printf "{\"tool\":\"ib_write_bw\",\"size\":%d,\"MBps_peak\":%s,\"MBps\":%s}\n", s, $3, $4 }' "$3"
	else
		awk -v t="$1" -v s="$2" '/#bytes/ { getline; printf "{\"tool\":\"%s\",\"size\":%d,\"min_us\":%s,\"typical_us\":%s,\"mean_us\":%s,\"p99_us\":%s}\n", t, s, $3, $5, $6, $8 }' "$3"
	fi
}

# pt_client TOOL SIZE NAME PORT: measure against guest 0's server on PORT
# (retried until it listens) and record the result as NAME
pt_client() {
	_i=0
	: >"$OUT/$3.txt"
	while [ $_i -lt 20 ]; do
		sleep 0.5
		timeout 120 "$1" -d rxe0 -x 1 -s "$2" -p "$4" $PT_OPTS "$A0" \
			>>"$OUT/$3.txt" 2>&1 && break
		_i=$((_i + 1))
	done
	pt_json "$1" "$2" "$OUT/$3.txt" >"$OUT/$3.json"
	record "$3" "$(cat "$OUT/$3.json")"
}

# perftest TOOL SIZE [NAME [PEERS]]: guest 0 serves, each of PEERS (default
# guest 1) measures against it, all at once (guest 0 serves each on its own
# port), the others wait.  Every call has ports of its own, so no server
# binds a port the one before may have left in TIME_WAIT.  (A client that
# found no server in 20 tries, seen in 4 of 9 cluster runs, was not that:
# it happened with these ports too; NAME.serverK.txt keeps guest 0's side.)
pt_port=18515
perftest() {
	_tool=$1 _size=$2 _name=${3:-$1-$2} _peers=${4:-1}
	pt_port=$((pt_port + 10))
	barrier "$_name.go" || return 1
	if [ "$SPINDLE_NODE" = 0 ]; then
		for _k in $_peers; do
			timeout 120 "$_tool" -d rxe0 -x 1 -s "$_size" -p $((pt_port + _k)) \
				$PT_OPTS >"$OUT/$_name.server$_k.txt" 2>&1 &
		done
		wait
	elif echo " $_peers " | grep -q " $SPINDLE_NODE "; then
		pt_client "$_tool" "$_size" "$_name" $((pt_port + SPINDLE_NODE))
	fi
	barrier "$_name.done"
}

# fio_run NAME TARGET DEV QD: fio's 4 KiB random writes on DEV, O_DIRECT, QD
# deep, for SECS seconds; the result recorded as NAME
fio_run() {
	_json=$OUT/$1.node$SPINDLE_NODE.fio.json
	if ! fio --name=w --filename="$3" --rw=randwrite --bs=4k --direct=1 --ioengine=libaio \
		--iodepth="$4" --runtime="$SECS" --time_based --size=48M --randrepeat=0 \
		--output-format=json --output="$_json" >/dev/null 2>>"$OUT/errors.log"; then
		record "$1" ""
		return
	fi
	record "$1" "$(jq -c --arg t "$2" --argjson qd "$4" --argjson node "$SPINDLE_NODE" '
		.jobs[0].write | {tool: "fio", target: $t, iodepth: $qd, bs: 4096, node: $node,
		  iops: .iops, lat_mean_us: (.clat_ns.mean / 1000),
		  lat_p99_us: (.clat_ns.percentile["99.000000"] / 1000)}' "$_json")"
}

# lat_once [ARGS]: spindle-lat's JSON line, one sender, one 64 B message in
# flight, in a group of this run's number
lat_once() {
	build/bin/spindle-lat --group $((200 + run)) --port $((8000 + run)) \
		--senders one --size 64 --messages 300 --timeout 180 "$@" 2>>"$OUT/errors.log" |
		grep '^{' | tail -n 1
}

# breakdown: spindle-lat as in "latency", with the events along a message
# traced (filtered to its group, clock mono) into $OUT/trace-breakdown.txt
BREAKDOWN_EVENTS="spindle_ready spindle_send_batch spindle_post spindle_cq_event
	spindle_wake spindle_doorbell spindle_recv_batch spindle_deliver_batch spindle_consume"
breakdown_step() {
	run=$((run + 1))
	_g=$((200 + run))
	_tr=/sys/kernel/tracing
	[ -d $_tr/events ] || mount -t tracefs nodev $_tr
	echo 0 >$_tr/tracing_on
	echo mono >$_tr/trace_clock
	echo 8192 >$_tr/buffer_size_kb
	: >$_tr/trace
	for _e in $BREAKDOWN_EVENTS; do
		echo "group == $_g" >"$_tr/events/spindle/$_e/filter"
		echo 1 >"$_tr/events/spindle/$_e/enable"
	done
	echo 1 >$_tr/tracing_on
	barrier breakdown.go || return 1
	_line=$(lat_once)
	echo 0 >$_tr/tracing_on
	for _e in $BREAKDOWN_EVENTS; do
		echo 0 >"$_tr/events/spindle/$_e/enable"
		echo 0 >"$_tr/events/spindle/$_e/filter"
	done
	cp $_tr/trace "$OUT/trace-breakdown.txt"
	: >$_tr/trace
	echo local >$_tr/trace_clock
	record "breakdown-one-64" "$_line"
	barrier breakdown.done
}

# blk: /dev/spindle-blk0 on a subgroup of every guest, then fio through it
# (guest 0 alone, every guest at once) and on a RAM disk alone (guest 0)
blk_step() {
	run=$((run + 1))
	_g=$((200 + run))
	_cfg=$OUT/blk.conf
	_dev=/dev/spindle-blk0
	gen_config "$_cfg" $_g $((8000 + run)) \
		"subgroup 0 members all senders all window 64 max_msg 4160 mode ordered blk_mib 64"
	barrier blk.go || return 1
	insmod "${SPINDLE_KO%/*}/blk/spindle_blk.ko" 2>>"$OUT/errors.log"
	build/bin/spindlectl up "$_cfg" >>"$OUT/errors.log" 2>&1 && wait_active $_g &&
		echo "$_g 0" >/sys/module/spindle_blk/parameters/create
	for _i in $(seq 50); do [ -b $_dev ] && break; sleep 0.1; done
	barrier blk.up
	for _qd in 1 16; do
		[ "$SPINDLE_NODE" = 0 ] && fio_run "fio-blk-one-qd$_qd" spindle-blk $_dev $_qd
		barrier "blk.one.$_qd"
	done
	fio_run fio-blk-all-qd16 spindle-blk $_dev 16
	barrier blk.all
	echo "blk: $(cat /sys/module/spindle_blk/parameters/create)" >>"$OUT/errors.log"
	echo 0 >/sys/module/spindle_blk/parameters/remove
	rmmod spindle_blk
	build/bin/spindlectl down $_g >/dev/null 2>&1
	barrier blk.down
	if [ "$SPINDLE_NODE" = 0 ]; then
		# the store alone: a RAM disk of the same size, no group
		modprobe brd rd_nr=1 rd_size=65536 2>>"$OUT/errors.log"
		for _qd in 1 16; do
			fio_run "fio-ram-one-qd$_qd" ram /dev/ram0 $_qd
		done
		rmmod brd
	fi
	barrier blk.done
}

# of the sweep, only what messages_vs_nodes.png plots
groups_step() {
	for size in 1 10240; do
		bw "spindle-all-$size-w100" --senders all --size $size --window 100 \
			--messages "$(count $size)"
		bw "baseline-all-$size-w100" --senders all --size $size --window 100 \
			--messages "$(count $size baseline)" --baseline
	done
}

# delay_run KIND [SUFFIX]: 10 KB, all senders, window 100, the last sender
# not delayed (none), busy-waiting 100 us after each send (busy: its guest's
# one vCPU stays busy), or sleeping as long (sleep)
delay_run() {
	case $1 in
	none)	bw "spindle-all-10240-w100$2" --senders all --size 10240 --window 100 \
			--messages "$(count 10240)" ;;
	busy)	bw "delayed100us-all-10240-w100$2" --senders all --size 10240 --window 100 \
			--delay-us 100 --delayed one --messages "$(count 10240)" ;;
	sleep)	bw "slept100us-all-10240-w100$2" --senders all --size 10240 --window 100 \
			--sleep-us 100 --delayed one --messages "$(count 10240)" ;;
	esac
}

# ab_round KIND ROUND: step ab's runs under KIND (lazy: lazy_ms 10, the
# default; eager: 0), named KIND-...-rROUND
ab_round() {
	[ "$1" = eager ] && echo 0 >/sys/module/spindle/parameters/lazy_ms ||
		echo 10 >/sys/module/spindle/parameters/lazy_ms
	if ab_kind latency; then
		run=$((run + 1))
		barrier "ab.$1.$2.go"
		_line=$(lat_once)
		record "$1-latency-one-64-r$2" "$_line"
		barrier "ab.$1.$2.done"
	fi
	bw_streams "$1" "$2"
}

# bw_streams TAG ROUND: the all-senders streams of a round of ab or before
# that BENCH_AB_KINDS names: 10 KB at window 100, 1 B at window 500
bw_streams() {
	ab_kind 10240 && bw "$1-all-10240-w100-r$2" --senders all --size 10240 \
		--window 100 --messages "$(count 10240)"
	ab_kind 1 && bw "$1-all-1-w500-r$2" --senders all --size 1 --window 500 \
		--messages "$(count 1)"
}

# ab_kind KIND: does a round of ab run KIND (BENCH_AB_KINDS)?
ab_kind() {
	case " ${BENCH_AB_KINDS:-latency 10240 1} " in *" $1 "*) return 0 ;; esac
	return 1
}

# interleave FN A B: BENCH_AB_ROUNDS (4) rounds of FN A ROUND and FN B
# ROUND, B first in the even rounds
interleave() {
	for _r in $(seq "${BENCH_AB_ROUNDS:-4}"); do
		if [ $((_r % 2)) = 0 ]; then
			"$1" "$3" "$_r"
			"$1" "$2" "$_r"
		else
			"$1" "$2" "$_r"
			"$1" "$3" "$_r"
		fi
	done
}

# use_module KO [PARAM=VALUE...]: reload spindle from KO with the
# benchmark's parameters and those given
use_module() {
	rmmod spindle 2>>"$OUT/errors.log"
	insmod "$@" 2>>"$OUT/errors.log" || return 1
	echo $suspect >/sys/module/spindle/parameters/suspect_ms
	echo $SPINDLE_ACK_TIMEOUT >/sys/module/spindle/parameters/ack_timeout
}

# before_round SIDE ROUND: one side's runs of the step before
before_round() {
	_bin=build/bin
	_ko=$SPINDLE_KO
	_params=${BENCH_HEAD_PARAMS:-}
	[ "$1" = before ] && _bin=$BENCH_BEFORE/build/bin &&
		_ko=$BENCH_BEFORE/kmod/spindle.ko && _params=
	barrier "before.$1.$2.load"
	_tag=$1
	# a side whose module did not load is not that side: its runs keep
	# the barriers in step but are named so that nobody counts them
	# shellcheck disable=SC2086 # the parameters are words
	use_module "$_ko" $_params &&
		[ "$(cat /sys/module/spindle/srcversion)" = "$(modinfo -F srcversion "$_ko")" ] ||
		{ echo "bench: before: $_ko is not the module loaded" >&2; _tag=unloaded-$1; }
	BW_BIN=$_bin
	bw_streams "$_tag" "$2"
	BW_BIN=
}

for step in $STEPS; do
	case $step in
	perftest)
		PT_OPTS="-D $SECS -F"
		perftest ib_write_bw 1024
		perftest ib_write_bw 10240
		PT_OPTS="-n 2000 -F"
		perftest ib_write_lat 64
		# a round trip as Spindle's parked thread makes it: each side
		# sleeps until a completion event wakes it (ib_write_lat polls)
		PT_OPTS="-n 2000 -F -e"
		perftest ib_send_lat 64 ib_send_lat_ev-64
		# the same from guest 0 to every other guest at once
		[ "$N" -gt 2 ] && perftest ib_send_lat 64 ib_send_lat_ev_fanout-64 \
			"$(seq -s ' ' 1 $((N - 1)))"
		;;
	sweep)
		if [ "$N" -gt 4 ]; then	# hours there: what the plot needs
			groups_step
			continue
		fi
		for s in all half one; do
			for size in 1 128 1024 10240; do
				bw "spindle-$s-$size-w100" --senders $s --size $size --window 100 \
					--messages "$(count $size)"
				bw "baseline-$s-$size-w100" --senders $s --size $size --window 100 \
					--messages "$(count $size baseline)" --baseline
			done
		done ;;
	groups)
		groups_step ;;
	window)
		for w in 16 500; do
			for size in 1 10240; do
				bw "spindle-all-$size-w$w" --senders all --size $size --window $w \
					--messages "$(count $size)"
			done
			bw "baseline-all-10240-w$w" --senders all --size 10240 --window $w \
				--messages "$(count 10240 baseline)" --baseline
		done ;;
	unordered)
		for size in 1024 10240; do
			bw "unordered-all-$size-w100" --senders all --size $size --window 100 \
				--mode unordered --messages "$(count $size)"
		done ;;
	delayed)
		delay_run busy
		delay_run sleep ;;
	delayab)
		for r in $(seq "${BENCH_AB_ROUNDS:-4}"); do
			case $((r % 3)) in
			1) order="none busy sleep" ;;
			2) order="busy sleep none" ;;
			0) order="sleep none busy" ;;
			esac
			for kind in $order; do
				delay_run "$kind" "-r$r"
			done
		done ;;
	copy)
		bw "copy-all-10240-w100" --senders all --size 10240 --window 100 --copy \
			--messages "$(count 10240)" ;;
	coalesce)
		echo 0 >/sys/module/spindle/parameters/coalesce
		bw "nocoalesce-all-1-w500" --senders all --size 1 --window 500 \
			--messages "$(count 1)"
		echo 1 >/sys/module/spindle/parameters/coalesce ;;
	latency)
		run=$((run + 1))
		barrier latency.go
		_line=$(lat_once)
		record "latency-one-64" "$_line"
		barrier latency.done
		run=$((run + 1))
		barrier latency-baseline.go
		_line=$(lat_once --baseline)
		record "latency-baseline-one-64" "$_line"
		barrier latency-baseline.done ;;
	ab)
		interleave ab_round lazy eager
		echo 10 >/sys/module/spindle/parameters/lazy_ms ;;
	before)
		[ -r "${BENCH_BEFORE:-}/kmod/spindle.ko" ] || {
			echo "bench: before: BENCH_BEFORE names no tree with kmod/spindle.ko" >&2
			continue
		}
		interleave before_round head before
		barrier before.end
		use_module "$SPINDLE_KO" ;;
	breakdown)
		breakdown_step ;;
	blk)
		spindle_load >/dev/null 2>&1
		blk_step ;;
	esac
done
echo "bench: $(wc -l <"$RES") results in $RES"
