#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# View changes across real guests: each scenario runs on 4 to 7 guests of
# scripts/vmcluster (those in which the host does nothing to a guest share
# a boot of as many guests: see "One boot for several scenarios" below),
# streams in two subgroups (selftests/views-guest:
# subgroup 0 ordered over all of them, subgroup 5 unordered over guests 1
# and up, so that the leader, guest 0, is not in it) and makes members
# fail.  After a failure the survivors must install the same next view
# within BOUND_MS, their logs must be identical (ordered) or hold the same
# messages per view (unordered), and every message a failed guest
# delivered must be in the survivors' logs before the view record (nothing
# past the trim was delivered anywhere).  The scenarios:
#   kills: one guest at a time, at different moments, the leader among
#   them; two of four at once: the two left have no majority, form no view
#   and say so (spindle-bw fails with EIO, the kernel says why);
#   partitions (the switch puts some guests on a VLAN of their own:
#   vmcluster --partition): five into three and two, once with the leader
#   among the two, and seven into four and three: the side with no
#   majority stops with EIO and forms no view, the other goes on in view 2;
#   rejoins: a guest's Spindle dies (processes killed, module unloaded) and
#   starts again: the others go on in view 2 without it and take it back in
#   view 3, and it receives exactly what they delivered after its join;
#   again with the others' rows held back from it for 3 s after it
#   connects (fault_row_hold_ms), so that every connection is ready before
#   it learns the group ran on without it: it must join, not start a view
#   1 of its own;
#   faults inside a change (phase-exact faults, kmod/fault.c, armed through
#   debugfs), five guests: a guest dies to start the change (guest 4, or
#   the leader; in its module: the fault "now die" makes it fall silent,
#   then take its connections down, so the host does nothing and these
#   share a boot), and in that change the leader dies right after it
#   proposed, committed, drained or got ready, or once it wedged in the
#   change; a member goes silent right after it echoed the proposal (its
#   connections stay up: only its heartbeat tells), or dies once drained
#   or ready; the leader proposes half the trim, short of what its
#   followers delivered ("proposed short"), and they must refuse it; the
#   leader dies and the next one dies right after it proposed: in
#   each the three left install a view of just them (their logs may hold a
#   view record of the committed change in between);
#   faults around a join: the joiner dies again once its join is committed
#   ("drained die"): the others must suspect it as a member of the view
#   they move to and take it out again, or they wait for its drained and
#   ready for ever; the joiner dies as soon as it asked to join ("joining
#   die"): the others go on without it, whether or not they had begun the
#   change that takes it in; the one other member of subgroup 6 (the
#   joiner's) dies as soon as it saw the join committed, before it said
#   where subgroup 6's numbering goes on: the joiner must learn that from
#   members outside subgroup 6, or it waits for the dead one and the
#   others for it; two of five leave and come back together (only when
#   named): the group ends in a view of all five, each joiner delivering
#   what the others did after the view that took it back;
#   a false suspicion: a live guest stops (the fault "now stall") for
#   twice suspect_ms with its connections up; the others take it out in
#   view 2; when it goes on it must find itself out (its streams end with
#   an error, nothing delivered that the others did not deliver in view 1)
#   and come back as a new incarnation in view 3, checked as a rejoin;
#   hostile guests (not killed) that write garbage into their peers'
#   memory through their keys: counters back to 0, a row naming strangers,
#   lengths over the maximum, null counts over the window, headers torn
#   mid-write: the others reject it, log it once (one of them at least
#   naming what it rejected) and go on without it, checked as a kill; and
#   one that writes to a peer with the key that peer gave a third member,
#   then goes silent: the peer's NIC refuses it (every connection has its
#   own protection domain), the third member is never taken for bad, and
#   the silent guest is taken out;
#   a live guest that stalls (its QEMU stopped) for 1.5 s, well under
#   suspect_ms: nothing may change.  Only when named (VIEWS_ONLY=
#   stall_member2, VIEWS_STALL_MS=ms for another stall), as it fails: at
#   ack_timeout 17 (the test bed's, selftests/lib/spindle.sh) the NICs do
#   not give up on it (at 14 they did, after 470 ms), but its heartbeat
#   reaches nobody for 3 s (the stall, then its QPs' recovery at 537 ms a
#   try) and it is suspected in about one run of two.  Passing needs a
#   reconnect instead of a failure, and heartbeats that do not wait behind
#   a stalled stream.
# No guest's kernel may log a splat (scripts/vmcluster checks).
#
#   selftests/host/views.sh [OUTDIR]         prints KTAP
#   (VIEWS_ONLY=NAME,... runs just those scenarios; VIEWS_SEED=N replays;
#   VIEWS_BATCH=0 boots for each scenario;
#   VIEWS_EXTENDED=0 leaves out the extended ones, below; VIEWS_SHARD=I/N
#   runs shard I of N, below; VIEWS_LIST=1 names the scenarios and runs none)
set -u
cd "$(dirname "$0")/../.." || exit 1
. scripts/lib/nic-hang.sh
. scripts/lib/vmcluster-again.sh
OUT=${1:-build/views}
# SECS: how long the streams last at least; the kills, pauses,
# partitions and hostile turns (counted from when every guest's streams
# delivered: vmcluster --kill K@views_delivering+T, selftests/views-guest)
# at 2-8 s come inside them, and the streams of a failure go on until they
# saw its view change (UNTIL, below), so that they end a few seconds into
# the new view.
# RSECS: how long a rejoin's streams last: the guest leaves 7 s after the
# set-up, comes back, and must still stream for seconds in the view that
# takes it back.
# SLACK: what each run may take beyond its stream (boot, teardown, the
# final kmemleak scan; on the debug kernel the boot has a limit of its
# own, see limits below).
# The debug kernel is slower at all of it: a process start takes over a
# second, its guests boot in over a minute, and the set-up took 13 s
# and more (dmesg: module loaded at 61.0 s, group up at 67.3 s, the
# streams' own set-up at 74.6 s): its streams run longer.  The kills count
# from the first deliveries, not from the barrier where the streams start:
# a debug guest leaves that barrier long after the host saw every guest
# reach it (on 6.12-rt debug a leader's stream began 2.7 s after the kill
# it was meant to see, and its log held nothing to check).
# UNTIL: a kill's, a fault's, a partition's or a hostile guest's streams
# go on past SECS until they saw the view change (views-guest --views 1);
# each gives up WAIT s after SECS.  (Five 6.12-rt debug guests on two
# cores took 27 to 57 s to deliver their first messages: no fixed stream
# length holds the change.)
# slack N: SLACK for a run of N guests.  On the debug kernel boot and
# set-up grow with the guests (TCG on two cores): three booted in 68 s,
# seven in 336 s, and seven took till 450-460 s of uptime to start their
# streams and till 522-564 s to deliver (6.12 debug, partition_three_of_
# seven, which ran out of a flat 600 s while its majority went on in view
# 2): 150 s a guest there, 600 s for four or fewer.
SECS=12
SLACK=240
WAIT=90
if [ -n "${SPINDLE_VM_KERNEL:-}" ]; then
	SECS=42
	SLACK=600
	WAIT=240
fi
slack() {
	if [ -n "${SPINDLE_VM_KERNEL:-}" ] && [ "$1" -gt 4 ]; then
		echo $((150 * $1))
	else
		echo $SLACK
	fi
}
# limits N STREAM_S: vmcluster's wall limits (in $limit) for N guests whose
# streams last STREAM_S s.  On the debug kernel the boot is not the test's:
# the guests get 120 s each to boot and reach their peers (five 6.12-rt
# debug guests took 207-300 s on one machine; counted in one whole-run
# limit, leader_cascade ran out of it 8 s after the survivors' view 2), and
# the command's STREAM_S + slack count from there.  The views-guest's own
# --wait below is what bounds a change.
limits() {
	limit=(--timeout $(($2 + $(slack "$1"))))
	if [ -n "${SPINDLE_VM_KERNEL:-}" ]; then
		limit+=(--boot-timeout $((120 * $1)))
	fi
}
UNTIL=(--views 1 --wait "$WAIT")
SECS=${VIEWS_SECONDS:-$SECS}
RSECS=$((SECS + 12))
# five guests or more on the debug kernel suspect only after 20 s, not 8
# (views-guest): their streams last that much longer
SECS5=$SECS
[ -n "${SPINDLE_VM_KERNEL:-}" ] && SECS5=$((SECS + 12))
BOUND_MS=${VIEWS_BOUND_MS:-10000}
# a live member's stall (stall_member2), well under the guests' suspect_ms
STALL_MS=${VIEWS_STALL_MS:-1500}
rm -rf "$OUT"
mkdir -p "$OUT"

seed=${VIEWS_SEED:-$(( $(date +%s) % 1000 ))}
rnd=$(( 2 + seed % 7 ))		# a kill time in 2..8 s, from the seed
# name:victims:seconds[:hostile mode]: kills (and the stall) count from
# the streams' start, hostile turns and rejoins from the group's set-up
scenarios="kill_member3:3:4 kill_leader0:0:6 kill_member2_random:2:$rnd kill_two_of_four:2,3:4
hostile_counters_back:3:5:1 hostile_row:1:5:3 hostile_lengths:1:5:5
hostile_nulls:2:5:6 hostile_hdr_torn:3:5:7 hostile_foreign_key:2:5:8
rejoin_member3:3:7:rejoin rejoin_rows_late:3:7:rejoin_late
leader_dies_after_proposing:4:4:fault/0/proposed/die
leader_dies_after_commit:4:4:fault/0/committed/die
member_silent_after_echo:4:4:fault/2/echoed/silent
member_dies_drained:4:4:fault/3/drained/die
member_dies_ready:4:4:fault/1/ready/die
leader_short_trim:4:4:fault/0/proposed/short
joiner_dies_after_the_commit:3:7:rejoin_fault/drained/die
joiner_outlives_its_subgroup:3:7:rejoin_other/1/committed/die
false_suspicion_member3:3:7:suspect partition_two_of_five:3,4:4:partition/5"
# variations of the above on the protocol's side (the unit fuzz covers them
# too): every run but one with VIEWS_EXTENDED=0 or VIEWS_SHARD (CI's)
seven=partition_three_of_seven:4,5,6:4:partition/7
extended="false_suspicion_leader0:0:7:suspect
partition_leader_in_minority:0,1:4:partition/5
$seven
leader_cascade:0:4:fault/1/proposed/die
leader_dies_wedged:4:4:fault/0/wedged/die
joiner_dies_joining:3:7:rejoin_fault/joining/die
leader_dies_drained:4:4:fault/0/drained/die
leader_dies_ready:4:4:fault/0/ready/die"
# only when VIEWS_ONLY names them: the stall (above), and the two joiners,
# which pass on plain kernels but not yet on the 6.12-rt debug kernel, for
# the test's timing: the two leave 7 s after the set-up, and with five debug
# guests a survivor's reader subscribed (its first RECV) after view 2's
# record; the join took 14 s, over the bound
optional="stall_member2:2:6:stall
two_joiners_at_once:3,4:7:rejoin_two"
# On a debug kernel the partition of seven is optional too: seven KASAN +
# lockdep guests on two host cores took 456 s to come up and 2-3 min more
# to deliver, their links moving a write a second, and a live member went
# unheard for 20 s (suspect_ms) before the cut (6.12-rt, seed 528): the
# cut then split view 2's six three and three, no side had a majority,
# both stopped; safe, but not the scenario.  The partitions of five test
# the same change on the debug kernels.
if [ -n "${SPINDLE_VM_KERNEL:-}" ]; then
	extended=$(echo $extended | tr ' ' '\n' | grep -vx "$seven")
	optional="$optional $seven"
fi
# With VIEWS_SHARD=I/N (scripts/check: the I-th of N lanes that run the
# guest suites in full) each of the scenarios above, not the extended ones,
# runs on exactly one kernel: scenario J goes to shard J mod N.  The list
# is grouped by kind (kills, hostile peers, rejoins, faults inside a
# change, joiners, a false suspicion, a partition), so every shard holds
# some of each kind that has several scenarios, and every full lane's
# rdma_cm, rxe, timers and locking take part in most kinds of change.  `make check-views` and `make
# check-all` run every scenario, the extended ones too, on every kernel.
if [ -n "${VIEWS_ONLY:-}" ]; then	# VIEWS_ONLY=name,name: just those
	scenarios=$(for sc in $scenarios $extended $optional; do
		case ",$VIEWS_ONLY," in *",${sc%%:*},"*) echo "$sc" ;; esac
	done)
elif [ -n "${VIEWS_SHARD:-}" ]; then
	shard_i=-1
	shard_n=0
	if [[ $VIEWS_SHARD =~ ^([0-9]+)/([0-9]+)$ ]]; then
		shard_i=$((10#${BASH_REMATCH[1]}))
		shard_n=$((10#${BASH_REMATCH[2]}))
	fi
	if [ "$shard_i" -lt 0 ] || [ "$shard_i" -ge "$shard_n" ]; then
		echo "views.sh: VIEWS_SHARD=$VIEWS_SHARD: want I/N, 0 <= I < N" >&2
		exit 2
	fi
	scenarios=$(j=0; for sc in $scenarios; do
		[ $((j % shard_n)) = "$shard_i" ] && echo "$sc"
		j=$((j + 1))
	done)
elif [ "${VIEWS_EXTENDED:-1}" = 1 ]; then
	scenarios="$scenarios $extended"
fi
if [ -n "${VIEWS_LIST:-}" ]; then	# VIEWS_LIST=1: the names, nothing run
	for sc in $scenarios; do echo "${sc%%:*}"; done
	exit 0
fi

n=0
fail=0
echo "KTAP version 1"
echo "# seed $seed (VIEWS_SEED=$seed replays the kill times)"
echo "1..$(echo $scenarios | wc -w)"

result() {	# ok|fail NAME
	n=$((n + 1))
	if [ "$1" = ok ]; then echo "ok $n $2"; else echo "not ok $n $2"; fail=$((fail + 1)); fi
}

# seg FILE K: the lines of segment K (0: before the first view record)
seg() {
	awk -v k="$2" '/^view /{s++; next} s==k' "$1"
}

# exited_ok DIR K: node K's command exited 0; if not, say so and why
exited_ok() {
	[ "$(cat "$1/node$2/.rc" 2>/dev/null)" = 0 ] && return 0
	echo "# node $2: exit $(cat "$1/node$2/.rc" 2>/dev/null)"
	why "$1" "$2"
	return 1
}

check_survivors() {	# DIR VICTIMS...
	local d=$1 k v ok=1 ref5= ids= t s0 s f got last want
	shift
	local victims=" $* "
	local surv=()
	for k in $(seq 0 $((NODES - 1))); do
		case "$victims" in *" $k "*) ;; *) surv+=("$k") ;; esac
	done
	ids=$(IFS=,; echo "${surv[*]}")
	for k in "${surv[@]}"; do
		exited_ok "$d" "$k" || ok=0
		# one failure: the one record 'view 2 SURVIVORS'; a fault
		# inside a change (FINAL_VIEW=any): the last record names the
		# survivors, in the same view everywhere
		last=$(grep '^view ' "$d/node$k/sg0.log" | tail -n 1)
		want=${FINAL_VIEW:-2}
		[ "$want" = any ] && want=$(echo "$last" | cut -d' ' -f2)
		if [ "$last" != "view $want $ids" ] ||
		   { [ "${FINAL_VIEW:-2}" != any ] && [ "$(grep -c '^view ' "$d/node$k/sg0.log")" != 1 ]; }; then
			echo "# node $k: subgroup 0 log lacks the one record 'view ${FINAL_VIEW:-2} $ids' (last: ${last:-none})"
			ok=0
		fi
		t=$(sed -n "s/.*view $want installed: .* after \([0-9]*\) ms.*/\1/p" "$d/node$k/dmesg.txt" | tail -n 1)
		echo "# node $k: view $want installed ${t:-never} ms after its change began ($(grep -c '^view ' "$d/node$k/sg0.log") view records)"
		if [ -z "$t" ] || [ "$t" -gt "$BOUND_MS" ]; then
			echo "# node $k: not within the bound of $BOUND_MS ms"
			ok=0
		fi
	done
	# ordered: identical logs, view record included
	for k in "${surv[@]:1}"; do
		if ! cmp -s "$d/node${surv[0]}/sg0.log" "$d/node$k/sg0.log"; then
			echo "# subgroup 0: node $k's log differs from node ${surv[0]}'s"
			ok=0
		fi
	done
	# unordered: the same messages in each view (order may differ across senders)
	for k in "${surv[@]}"; do
		[ -f "$d/node$k/sg5.log" ] || continue
		if [ -z "$ref5" ]; then ref5=$k; continue; fi
		for s in $(seq 0 "$(grep -c '^view ' "$d/node$ref5/sg5.log")"); do
			if ! cmp -s <(seg "$d/node$ref5/sg5.log" $s | sort) \
				    <(seg "$d/node$k/sg5.log" $s | sort); then
				echo "# subgroup 5: node $k's view-$((s + 1)) messages differ from node $ref5's"
				ok=0
			fi
		done
	done
	# the killed: what they delivered, the survivors delivered before the record
	for v in $victims; do
		for f in sg0 sg5; do
			s0=
			for k in "${surv[@]}"; do
				[ -f "$d/node$k/$f.log" ] && { s0=$k; break; }
			done
			[ -f "$d/node$v/$f.log" ] && [ -n "$s0" ] || continue
			# the last line may be cut short by the kill; an empty log
			# (killed before its stream began) would check nothing
			got=$(head -n -1 "$d/node$v/$f.log" | grep -v '^view' | sort)
			if [ -z "$got" ]; then
				echo "# $f: node $v's log holds no delivery: nothing to check against the survivors"
				ok=0
			elif [ -n "$(comm -23 <(echo "$got") <(seg "$d/node$s0/$f.log" 0 | sort) | head -n 1)" ]; then
				echo "# $f: killed node $v delivered messages the survivors did not deliver in view 1"
				ok=0
			fi
			echo "# $f: node $v delivered $(wc -l <"$d/node$v/$f.log") before it left; survivors $(seg "$d/node$s0/$f.log" 0 | wc -l) in view 1, $(seg "$d/node$s0/$f.log" 1 | wc -l) in view 2"
		done
	done
	[ $ok = 1 ]
}

# check_no_change DIR NODE: node NODE stalled (its QEMU stopped) for less
# than suspect_ms: nobody lost it, no view changed, every log is whole
check_no_change() {
	local d=$1 x=$2 k ok=1 line
	for k in $(seq 0 $((NODES - 1))); do
		exited_ok "$d" "$k" || ok=0
		line=$(grep -m1 'lost\|view 1 ends' "$d/node$k/dmesg.txt")
		if [ -n "$line" ]; then
			echo "# node $k: $line"
			ok=0
		fi
		if grep -q '^view ' "$d/node$k/sg0.log"; then
			echo "# node $k: a view changed"
			ok=0
		fi
		if ! cmp -s "$d/node0/sg0.log" "$d/node$k/sg0.log"; then
			echo "# subgroup 0: node $k's log differs from node 0's"
			ok=0
		fi
		[ "$k" = 0 ] && continue
		if ! cmp -s <(sort "$d/node1/sg5.log") <(sort "$d/node$k/sg5.log"); then
			echo "# subgroup 5: node $k's messages differ from node 1's"
			ok=0
		fi
	done
	grep -h 'vmcluster: node' "$d.log" | sed 's/^/# /'
	echo "# sg0: $(wc -l <"$d/node0/sg0.log") messages delivered everywhere"
	[ $ok = 1 ]
}

check_rejoin() {	# DIR NODE
	local d=$1 x=$2 k ok=1 f r t t2 ids surv=()
	for k in 0 1 2 3; do
		[ "$k" != "$x" ] && surv+=("$k")
		exited_ok "$d" "$k" || ok=0
	done
	ids=$(IFS=,; echo "${surv[*]}")
	for k in "${surv[@]}"; do
		if ! grep -qx "view 2 $ids" "$d/node$k/sg0.log" ||
		   ! grep -qx 'view 3 0,1,2,3' "$d/node$k/sg0.log"; then
			echo "# node $k: its log lacks 'view 2 $ids' then 'view 3 0,1,2,3'"
			ok=0
		fi
		if ! cmp -s "$d/node${surv[0]}/sg0.log" "$d/node$k/sg0.log"; then
			echo "# subgroup 0: node $k's log differs from node ${surv[0]}'s"
			ok=0
		fi
		t=$(sed -n 's/.*view 3 installed: .* after \([0-9]*\) ms.*/\1/p' "$d/node$k/dmesg.txt")
		t2=$(sed -n 's/.*view 2 installed: .* after \([0-9]*\) ms.*/\1/p' "$d/node$k/dmesg.txt")
		echo "# node $k: view 2 installed ${t2:-never} ms, view 3 (the join) ${t:-never} ms after its change began"
	done
	# what the new incarnation delivered: everything the others delivered
	# from view 3 on (its record may come before its reader started);
	# subgroup 5 has every guest but 0
	r=${surv[0]}
	[ "$r" = 0 ] && r=${surv[1]}
	for f in sg0 sg5; do
		[ $f = sg5 ] && [ "$x" = 0 ] && continue
		if ! cmp -s <(seg "$d/node$r/$f.log" 2 | grep -v '^view' | sort) \
			    <(grep -v '^view' "$d/node$x/$f.rejoin.log" | sort); then
			echo "# $f: node $x's deliveries after its join differ from node $r's in view 3"
			ok=0
		fi
		if [ "$(grep -vc '^view' "$d/node$x/$f.rejoin.log" 2>/dev/null)" -eq 0 ] 2>/dev/null; then
			echo "# $f: node $x delivered nothing after joining"
			ok=0
		fi
		echo "# $f: node $x delivered $(grep -vc '^view' "$d/node$x/$f.rejoin.log") messages after joining; node $r $(seg "$d/node$r/$f.log" 2 | wc -l) in view 3"
	done
	if ! cmp -s <(seg "$d/node$r/sg0.log" 2) <(grep -v '^view' "$d/node$x/sg0.rejoin.log"); then
		echo "# sg0: node $x's ordered deliveries after its join are not in the others' order"
		ok=0
	fi
	# subgroup 6: the joiner alone, its numbering from members outside it
	f=$(grep -vc '^view' "$d/node$x/sg6.rejoin.log" 2>/dev/null)
	echo "# sg6: node $x delivered ${f:-no} messages on its own after joining"
	[ "${f:-0}" -gt 0 ] || ok=0
	[ $ok = 1 ]
}

# after_join LOG X: the deliveries in LOG (the others') after the first
# view that takes X back (one with X after one without it)
after_join() {
	awk -v x="$2" '
		/^view / { n = split($3, m, ","); has = 0
			   for (i = 1; i <= n; i++) if (m[i] == x) has = 1
			   if (!has) out = 1; else if (out) on = 1
			   next }
		on' "$1"
}

# kernel_delivered DIR K S: how many data messages node K's kernel
# delivered in subgroup S (its last incarnation's stats)
kernel_delivered() {
	sed -n "s/^  subgroup $3: .* delivered \([0-9]*\) writes.*/\1/p" "$1/node$2/stats.txt" 2>/dev/null
}

# check_two_joiners DIR X Y: X and Y left together and came back: all five
# exit 0; the three that stayed have identical logs that end in a view of
# all five, installed within the bound; each joiner's kernel delivered
# exactly as many messages as they did after the view that took it back,
# in subgroups 0 and 5, and its readers got the last of them (subgroup 0
# in their order; subgroup 5, every guest but 0, as a set: a reader
# subscribes at its first RECV, and on a slow guest that may come after
# the first deliveries), and it streamed in subgroup 6 (the two of them)
check_two_joiners() {
	local d=$1 x k ok=1 r= t last n got f kd
	shift
	for k in 0 1 2 3 4; do
		exited_ok "$d" "$k" || ok=0
		case " $* " in *" $k "*) continue ;; esac
		[ -z "$r" ] && r=$k
		last=$(grep '^view ' "$d/node$k/sg0.log" | tail -n 1)
		if [ "${last#view * }" != 0,1,2,3,4 ]; then
			echo "# node $k: its last view record is '${last:-none}', not one of all five"
			ok=0
		fi
		if ! cmp -s "$d/node$r/sg0.log" "$d/node$k/sg0.log"; then
			echo "# subgroup 0: node $k's log differs from node $r's"
			ok=0
		fi
		t=$(sed -n 's/.*view [0-9]* installed: members 0x1f, after \([0-9]*\) ms.*/\1/p' \
			"$d/node$k/dmesg.txt" | tail -n 1)
		echo "# node $k: views $(grep '^view ' "$d/node$k/sg0.log" | cut -d' ' -f2- | paste -sd';'); all five in ${t:-never} ms"
		if [ -z "$t" ] || [ "$t" -gt "$BOUND_MS" ]; then
			echo "# node $k: not within the bound of $BOUND_MS ms"
			ok=0
		fi
	done
	[ "$r" != 0 ] || r=1	# (subgroup 5 has every guest but 0)
	for x in "$@"; do
		for f in sg0 sg5; do
			after_join "$d/node$r/$f.log" "$x" | grep -v '^view' >"$d/$f.after$x"
			n=$(wc -l <"$d/$f.after$x")
			got=$(grep -vc '^view' "$d/node$x/$f.rejoin.log" 2>/dev/null)
			kd=$(kernel_delivered "$d" "$x" "${f#sg}")
			echo "# $f: node $x's kernel delivered $kd after joining, node $r $n after the view that took it back; its reader the last ${got:-0}"
			if [ "$kd" != "$n" ] || [ "${got:-0}" -eq 0 ]; then
				echo "# $f: node $x did not deliver what the others did after its join"
				ok=0
			elif [ $f = sg0 ] && ! cmp -s <(tail -n "$got" "$d/$f.after$x") \
				<(grep -v '^view' "$d/node$x/$f.rejoin.log"); then
				echo "# sg0: node $x's reader's deliveries are not the last of node $r's, in order"
				ok=0
			elif [ $f = sg5 ] && [ -n "$(comm -13 <(sort "$d/$f.after$x") \
				<(grep -v '^view' "$d/node$x/$f.rejoin.log" | sort))" ]; then
				echo "# sg5: node $x's reader delivered what node $r did not after its join"
				ok=0
			fi
		done
		got=$(grep -vc '^view' "$d/node$x/sg6.rejoin.log" 2>/dev/null)
		echo "# sg6: node $x delivered ${got:-no} messages"
		[ "${got:-0}" -gt 0 ] 2>/dev/null || ok=0
	done
	[ $ok = 1 ]
}

# check_joiner_outlives DIR NODE OTHER POINT: OTHER's fault fired at
# POINT of the change that took NODE back; NODE and the other two went on
# in one view of the three of them, within the bound (NODE's kernel says
# so: its reader may start after the record); the two old members' logs
# are identical, NODE received what they delivered from its join on, in
# their order, and streamed in subgroup 6 (its and OTHER's) alone
check_joiner_outlives() {
	local d=$1 x=$2 o=$3 k ok=1 ids last want t f r= mask=0 surv=()
	check_fault "$d" "$o" "$4" || ok=0
	for k in 0 1 2 3; do
		[ "$k" != "$o" ] && surv+=("$k") && mask=$((mask | 1 << k))
	done
	ids=$(IFS=,; echo "${surv[*]}")
	for k in "${surv[@]}"; do
		exited_ok "$d" "$k" || ok=0
		if [ "$k" = "$x" ]; then
			last=$(sed -n 's/.*view \([0-9]*\) installed: members \(0x[0-9a-f]*\),.*/view \1 \2/p' \
				"$d/node$k/dmesg.txt" | tail -n 1)
			want=$(echo "$last" | cut -d' ' -f2)
			if [ "${last#view * }" != "$(printf '%#x' $mask)" ] || [ "${want:-0}" -lt 4 ]; then
				echo "# node $k: the last view its kernel installed is '${last:-none}', not a view 4 or later of $ids"
				ok=0
			fi
		else
			last=$(grep '^view ' "$d/node$k/sg0.log" | tail -n 1)
			want=$(echo "$last" | cut -d' ' -f2)
			if [ "${last#view * }" != "$ids" ] || [ "${want:-0}" -lt 4 ]; then
				echo "# node $k: its last view record is '${last:-none}', not a view 4 or later of $ids"
				ok=0
			fi
		fi
		t=$(sed -n "s/.*view $want installed: .* after \([0-9]*\) ms.*/\1/p" "$d/node$k/dmesg.txt" | tail -n 1)
		echo "# node $k: view ${want:-?} installed ${t:-never} ms after its change began"
		if [ -z "$t" ] || [ "$t" -gt "$BOUND_MS" ]; then
			echo "# node $k: not within the bound of $BOUND_MS ms"
			ok=0
		fi
		[ "$k" = "$x" ] && continue
		if [ -z "$r" ]; then
			r=$k
		elif ! cmp -s "$d/node$r/sg0.log" "$d/node$k/sg0.log"; then
			echo "# subgroup 0: node $k's log differs from node $r's"
			ok=0
		fi
	done
	if ! cmp -s <(awk '/^view /{s++; next} s>=2' "$d/node$r/sg0.log") \
		    <(grep -v '^view' "$d/node$x/sg0.rejoin.log"); then
		echo "# sg0: node $x's deliveries after its join are not node $r's from view 3 on"
		ok=0
	fi
	echo "# sg0: node $x delivered $(grep -vc '^view' "$d/node$x/sg0.rejoin.log") messages after joining"
	f=$(grep -vc '^view' "$d/node$x/sg6.rejoin.log" 2>/dev/null)
	echo "# sg6: node $x delivered ${f:-no} messages after joining, member $o gone"
	[ "${f:-0}" -gt 0 ] || ok=0
	[ $ok = 1 ]
}

# check_false_suspicion DIR NODE: NODE stopped, alive, for longer than
# suspect_ms and was taken out: it went on afterwards, found itself out,
# its first incarnation's streams ended with an error and delivered no
# later view and nothing the others did not deliver in view 1; then it
# came back as a new incarnation (check_rejoin)
check_false_suspicion() {
	local d=$1 x=$2 ok=1 f k s0 got line rc0 rc5
	check_fault "$d" "$x" now || ok=0
	f=$(grep -h -m1 'views-guest: a second fault' "$d/node$x/command.log")
	echo "# node $x: ${f:-no second fault tried}"
	[ "$f" = "views-guest: a second fault: Device or resource busy" ] || ok=0
	for line in "goes on after" "this member stops"; do
		f=$(grep -m1 "$line" "$d/node$x/dmesg.txt" 2>/dev/null)
		echo "# node $x: ${f:-no line '$line'}"
		[ -n "$f" ] || ok=0
	done
	read -r rc0 rc5 <"$d/node$x/first.rc" 2>/dev/null
	if [ "${rc0:-0}" = 0 ] || [ "${rc5:-0}" = 0 ]; then
		echo "# node $x: its first streams ended with exit ${rc0:-?} ${rc5:-?}: it was never taken out"
		ok=0
	fi
	for f in sg0 sg5; do
		[ $f = sg5 ] && [ "$x" = 0 ] && continue	# (not in subgroup 5)
		s0=
		for k in 0 1 2 3; do
			[ "$k" != "$x" ] && [ -f "$d/node$k/$f.log" ] && { s0=$k; break; }
		done
		if grep -q '^view' "$d/node$x/$f.log"; then
			echo "# $f: node $x's first incarnation delivered a view record"
			ok=0
		fi
		got=$(grep -v '^view' "$d/node$x/$f.log" | sort)
		if [ -z "$got" ] || [ -z "$s0" ]; then
			echo "# $f: node $x's first incarnation delivered nothing to check"
			ok=0
		elif [ -n "$(comm -23 <(echo "$got") <(seg "$d/node$s0/$f.log" 0 | sort) | head -n 1)" ]; then
			echo "# $f: node $x delivered messages the others did not deliver in view 1"
			ok=0
		fi
		echo "# $f: node $x's first incarnation delivered $(echo "$got" | grep -c .); node $s0 $(seg "$d/node$s0/$f.log" 0 | wc -l) in view 1"
	done
	check_rejoin "$d" "$x" || ok=0
	[ $ok = 1 ]
}

# check_fault DIR NODE POINT [ACTION]: the fault fired where it was armed
# (and did what it was armed to).  The kernel log the guest kept, or if it
# kept none (its run was cut short), its console: a console of its own,
# not that of a boot shared with other scenarios (views-batch always
# keeps one).
check_fault() {
	local line
	line=$(grep -m1 'fault injection: member' "$1/node$2/dmesg.txt" 2>/dev/null)
	[ -z "$line" ] && [ ! -e "$1/node$2/dmesg.txt" ] &&
		line=$(grep -m1 'fault injection: member' "$1/console-$2.log")
	echo "# node $2: ${line:-the fault never fired}"
	case "$line" in *" goes ${4:-}"*" at $3 "*) return 0 ;; esac
	return 1
}

# check_fault_run NODE POINT ACTION VICTIMS...: NODE's fault fired at
# POINT, ACTION, and the others went on without VICTIMS (the run in $d)
check_fault_run() {
	local node=$1 point=$2 action=$3
	shift 3
	check_fault "$d" "$node" "$point" "$action" && check_survivors "$d" "$@"
}

# survivors_and RC VICTIMS...: check_survivors, and RC (the others' runs) 0
survivors_and() {
	local rc=$1
	shift
	check_survivors "$d" "$@" && [ "$rc" = 0 ]
}

# why_failed NAME OUTPUT: a failed scenario's own lines and what the guests'
# kernels said of their connections, in $OUT/why.txt (scripts/check
# prints it last, where CI's tail shows it)
why_failed() {
	{
		echo "$1:"
		echo "$2" | tail -n 8 | sed 's/^# /  /'
		# a guest whose virtual NIC stopped sending (its TX watchdog)
		nic_hangs "$d"/console-*.log | sed "s|^$d/||; s/^/  test bed: /"
		grep -H -m 3 'spindle: group .*\(lost (\|this member stops\|failed: \)' \
			"$d"/node*/dmesg.txt 2>/dev/null | sed "s|^$d/||; s|/dmesg.txt:|: |; s/^/  /" | head -n 8
	} >>"$OUT/why.txt"
}

# judge NAME CHECK...: a kernel splat in the run in $d fails NAME;
# otherwise CHECK (a command) says
judge() {
	local name=$1 out
	shift
	if grep -q 'kernel splat' "$d.log"; then
		out=$(grep 'kernel splat\|console-.*:' "$d.log" | head -n 6 | sed 's/^/# /')
		echo "$out"
		why_failed "$name" "$out"
		result fail "$name"
	elif out=$("$@"); then
		echo "$out"
		result ok "$name"
	else
		echo "$out"
		why_failed "$name" "$out"
		result fail "$name"
	fi
	# its wall time, boots included (in the shared boot, its own), for
	# scripts/check's slowest tests
	echo "# $name took ${sc_took:-$(($(date +%s) - sc_start))} s"
}

# rejected MODE: what a victim of hostile mode MODE (enum spindle_hostile)
# says it rejected
rejected() {
	case "$1" in
	1) echo "wrote an invalid published header count" ;;
	3) echo "wrote an invalid row" ;;
	5) echo "wrote an invalid message header" ;;
	6) echo "wrote an invalid null header" ;;
	7) echo "wrote an invalid header kind" ;;
	*) echo "wrote an invalid" ;;
	esac
}

# why DIR K: what node K's runs said on their way out (for a failure)
why() {
	local f

	for f in "$1/node$2"/*.err "$1/node$2/command.log"; do
		[ -s "$f" ] || continue
		tail -n 3 "$f" | sed "s|^|# node $2 ${f##*/}: |"
	done
}

# check_minority DIR NODE...: the NODEs, with no majority, stopped with
# EIO, said why, and formed no view
check_minority() {
	local d=$1 k ok=1
	shift
	for k in "$@"; do
		if [ "$(cat "$d/node$k/.rc" 2>/dev/null)" = 0 ]; then
			echo "# node $k: spindle-bw succeeded without a majority"
			ok=0
		fi
		if ! grep -q 'Input/output error' "$d/node$k/sg0.err"; then
			echo "# node $k: spindle-bw did not report EIO: $(tail -n 2 "$d/node$k/sg0.err")"
			ok=0
		fi
		if ! grep -q 'no majority' "$d/node$k/dmesg.txt"; then
			echo "# node $k: the kernel did not say why it stopped"
			ok=0
		fi
		if grep -q '^view ' "$d/node$k/sg0.log"; then
			echo "# node $k: a minority formed a view"
			ok=0
		fi
	done
	grep 'this member stops' "$d/node$1/dmesg.txt" | sed "s/^/# node $1: /"
	[ $ok = 1 ]
}

# cut_first DIR CUT...: the scenario's premise, that the first change on
# every guest is the partition's: each suspects only members of the other
# side.  (7 debug guests on 2 cores took 2-3 min to deliver their first
# messages, and one of them fell silent for 20 s before the cut: the
# majority then lost its majority of the smaller view 2 when cut, as it
# must.  Without this, the checks below would blame the minority for view 2.)
cut_first() {
	local d=$1 n k m cut=0 side line bad=0
	shift
	for k in "$@"; do cut=$((cut | 1 << k)); done
	for n in "$d"/node*; do
		k=${n##*node}
		line=$(grep -m1 'view 1 ends (suspects 0x' "$n/dmesg.txt") || continue
		m=$(sed 's/.*suspects 0x\([0-9a-f]*\).*/\1/' <<<"$line")
		m=$((16#$m))
		# the members on node k's own side
		side=$cut
		(((cut >> k) & 1)) || side=$((~cut))
		if ((m & side)); then
			echo "# node $k: the first change was not the cut's: ${line#*spindle: }"
			bad=1
		fi
	done
	[ $bad = 0 ] && return 0
	for n in "$d"/node*; do
		grep -m1 'silent for' "$n/dmesg.txt" | sed "s/^/# ${n##*/}: /"
	done
	return 1
}
# check_partition DIR NODE...: the NODEs were cut off from the others, a
# majority: they stopped (check_minority) and the others went on without
# them (check_survivors: what they delivered, the others did in view 1)
check_partition() {
	local d=$1 line
	shift
	line=$(grep -m1 'cut off from the others' "$d.log")
	echo "# ${line:-nobody was cut off}"
	[ -n "$line" ] || return 1
	cut_first "$d" "$@" && check_minority "$d" "$@" && check_survivors "$d" "$@"
}

# check_foreign_key DIR H: hostile mode 8 wrote to member T with the key T
# gave to C: T's NIC refused it (H's write failed with a remote access
# error, or T's side of the connection broke on it) and nobody took C for
# bad (it wrote nothing wrong)
check_foreign_key() {
	local d=$1 h=$2 line t c k ok=1

	line=$(grep -h -m1 'views-guest: writing to member' "$d/node$h/command.log")
	echo "# node $h: ${line:-never aimed}"
	[ -n "$line" ] || return 1
	t=$(sed 's/.*to member \([0-9]*\) .*/\1/' <<<"$line")
	c=$(sed 's/.*key for member \([0-9]*\):.*/\1/' <<<"$line")
	# refused: the writer's write failed, or (when the target tore the
	# connection down first and the writer's error completion came for a
	# connection already gone) the target's QP broke on it at once
	if grep -q "to member $t failed: remote access error" "$d/node$h/dmesg.txt"; then
		echo "# node $h: its write to member $t failed: remote access error"
	elif grep -q "member $h lost (WR flushed)" "$d/node$t/dmesg.txt"; then
		echo "# node $t: its connection from member $h broke on the write (WR flushed)"
	else
		echo "# node $h: its write to member $t was not refused: $(grep -m1 "member $t" "$d/node$h/dmesg.txt")"
		ok=0
	fi
	for k in 0 1 2 3; do
		[ "$k" = "$h" ] && continue
		line=$(grep -m1 "member $c wrote an invalid\|member $c lost" "$d/node$k/dmesg.txt")
		[ -z "$line" ] && continue
		echo "# node $k: took member $c for bad: $line"
		ok=0
	done
	[ $ok = 1 ]
}

# plan SCENARIO: what a scenario runs, in globals: name victims at hmode;
# kind (fault, partition, rejoin_two, rejoin_fault, rejoin_other, or
# other: kills, hostile guests, rejoins, a suspicion, the stall); NODES
# and FINAL_VIEW; d, its results folder; hopts, what the host does to the
# guests (vmcluster options: kills, a partition, a pause); gargs,
# views-guest's arguments; secs, how long its streams last; desc, its
# first line; check, the check (judge's command) of all but kind other,
# whose checks follow the run (check_other)
plan() {
	local v fnode fpoint faction
	IFS=: read -r name victims at hmode <<<"$1"
	d=$OUT/$name
	NODES=4
	FINAL_VIEW=2
	hopts=()
	gargs=()
	secs=$SECS
	kind=${hmode%%/*}
	case "$kind" in
	fault)
		# fault/NODE/POINT/ACTION: VICTIMS die at AT s; NODE, armed
		# at POINT of the change that follows, goes ACTION there
		IFS=/ read -r _ fnode fpoint faction <<<"$hmode"
		NODES=5
		FINAL_VIEW=any
		secs=$SECS5
		gargs=("${UNTIL[@]}" "$secs" fault "$fnode" "$fpoint" "$faction" "$victims" "$at")
		check=(check_fault_run "$fnode" "$fpoint" "$faction" ${victims//,/ } "$fnode")
		desc="node $victims dies in its module $at s after every stream delivered; node $fnode goes $faction once $fpoint in the change" ;;
	partition)
		# partition/N: N guests, VICTIMS cut off from the others AT s
		# after every stream delivered
		NODES=${hmode#*/}
		hopts=(--partition "$victims@views_delivering+$at")
		secs=$SECS5
		gargs=("${UNTIL[@]}" "$secs")
		check=(check_partition "$d" ${victims//,/ })
		desc="nodes $victims cut off from the others $at s after every stream delivered" ;;
	rejoin_two)
		# five guests; VICTIMS (two) leave at AT s together and start
		# again together
		NODES=5
		secs=$((RSECS + SECS5 - SECS))
		gargs=("$secs" rejoin "$victims" "$at")
		check=(check_two_joiners "$d" ${victims//,/ })
		desc="nodes $victims leave at $at s and start again, both at once" ;;
	rejoin_fault)
		# rejoin_fault/POINT/ACTION: the new incarnation fails at POINT
		IFS=/ read -r _ fpoint faction <<<"$hmode"
		FINAL_VIEW=any
		secs=$RSECS
		gargs=("$secs" rejoin "$victims" "$at" 0 "$fpoint" "$faction")
		check=(check_fault_run "$victims" "$fpoint" "$faction" "$victims")
		desc="node $victims leaves at $at s, starts again, and goes $faction once $fpoint as a joiner" ;;
	rejoin_other)
		# rejoin_other/OTHER/POINT/ACTION: VICTIMS leaves at AT s and
		# starts again; OTHER fails at POINT of the change that takes it
		# back
		IFS=/ read -r _ fnode fpoint faction <<<"$hmode"
		secs=$RSECS
		gargs=("$secs" rejoin "$victims" "$at" 0 "$fpoint" "$faction" "$fnode")
		check=(check_joiner_outlives "$d" "$victims" "$fnode" "$fpoint")
		desc="node $victims leaves at $at s and starts again; node $fnode goes $faction once $fpoint in the join" ;;
	*)
		kind=other
		plan_other ;;
	esac
}

# plan_other: plan's part for kills, hostile guests, rejoins, a false
# suspicion and the stall (their checks follow the run: check_other)
plan_other() {
	local v hostile=() streams_until=()
	case "$hmode" in
	rejoin)
		hostile=(rejoin "$victims" "$at")
		secs=$RSECS
		desc="node $victims leaves at $at s and starts again" ;;
	rejoin_late)
		# the others' rows reach it 3 s after its connections are ready
		hostile=(rejoin "$victims" "$at" 3000)
		secs=$RSECS
		desc="node $victims leaves at $at s and starts again; rows reach it 3 s late" ;;
	suspect)
		hostile=(suspect "$victims" "$at")
		# the stall (twice suspect_ms) comes before its restart
		secs=$((RSECS + 4))
		desc="node $victims stops at $at s for twice suspect_ms, alive; taken out, it must come back" ;;
	stall)
		hopts=(--pause "$victims@views_delivering+$at:$STALL_MS")
		desc="node $victims stalls for $STALL_MS ms $at s after every stream delivered (suspect_ms is longer)" ;;
	"")
		for v in ${victims//,/ }; do hopts+=(--kill "$v@views_delivering+$at"); done
		streams_until=("${UNTIL[@]}")
		desc="kill ${victims} $at s after every stream delivered" ;;
	*)
		hostile=("$victims" "$hmode" "$at")
		streams_until=("${UNTIL[@]}")
		desc="node $victims turns hostile (mode $hmode) at $at s" ;;
	esac
	gargs=("${streams_until[@]}" "$secs" "${hostile[@]}")
}

# check_other RC: the checks of plan_other's scenarios, RC the run's exit
# status (vmcluster's)
check_other() {
	local rc=$1 named k line
	case "$hmode" in
	stall) judge "$name" check_no_change "$d" "$victims"; return ;;
	rejoin | rejoin_late) judge "$name" check_rejoin "$d" "$victims"; return ;;
	suspect) judge "$name" check_false_suspicion "$d" "$victims"; return ;;
	esac
	if [ -n "$hmode" ]; then
		# the hostile guest is taken out: its own run fails, the others' not
		rc=0
		named=0
		grep -h 'views-guest: hostile' "$d/node$victims/command.log" | sed "s/^/# node $victims: /"
		grep -h 'hostile' "$d/node$victims/dmesg.txt" 2>/dev/null | head -n 2 | sed "s/^/# node $victims: /"
		for k in 0 1 2 3; do
			[ "$k" = "$victims" ] && continue
			# (check_survivors says why a node failed)
			[ "$(cat "$d/node$k/.rc" 2>/dev/null)" = 0 ] || rc=1
			line=$(grep -m1 "member $victims wrote an invalid\|member $victims lost" "$d/node$k/dmesg.txt")
			echo "# node $k: ${line:-no line about the hostile member}"
			[ -n "$line" ] || rc=1
			grep -q "member $victims $(rejected "$hmode")" "$d/node$k/dmesg.txt" && named=1
		done
		if [ "$hmode" = 8 ]; then
			check_foreign_key "$d" "$victims" || rc=1
		elif [ $named = 0 ]; then
			echo "# no survivor logged '$(rejected "$hmode")' about member $victims"
			rc=1
		fi
	fi
	if [ "$victims" = "2,3" ]; then
		judge "$name" check_minority "$d" 0 1
	else
		[ "$rc" = 0 ] || tail -n 8 "$d.log" | sed 's/^/# /'
		judge "$name" survivors_and "$rc" $victims
	fi
}

# One boot for several scenarios: those in which the host does nothing to
# a guest (hostile peers, rejoins, the false suspicion, the faults inside
# a change and around a join) run one after the other in one scripts/
# vmcluster run per guest count (selftests/views-batch: each starts on a
# freshly loaded module and a clean kernel log, in folders of its own),
# and last in each, at most one of as many guests in which the host does
# something (a kill, a partition, a pause, counted from one of its
# barriers: it ends as a run of its own).  Their
# results are then checked as if each had run alone.  A kernel splat
# anywhere in such a run fails every scenario of it.  Two or more share a
# boot, unless VIEWS_BATCH=0.
declare -A in_batch	# NAME: the guest count of the boot it ran in

# run_batch N: the scenarios of N guests above, in one boot (batchN,
# batchN.log)
run_batch() {
	local n=$1 sc list=() all=0 last= last_opts=() o t0
	for sc in $scenarios; do
		plan "$sc"
		[ "$NODES" = "$n" ] || continue
		if [ ${#hopts[@]} != 0 ]; then
			# (counted from a barrier of its own, not the boot's start)
			[ -z "$last" ] && [[ "${hopts[*]}" == *@views_* ]] &&
				[[ "${hopts[*]}" != *@[0-9]* ]] && last=$sc
			continue
		fi
		list+=("$name $((secs + $(slack "$n"))) ${gargs[*]}")
		all=$((all + secs + $(slack "$n")))
	done
	[ ${#list[@]} = 0 ] && return 0
	if [ -n "$last" ]; then
		plan "$last"
		list+=("$name $((secs + $(slack "$n"))) ${gargs[*]}")
		all=$((all + secs + $(slack "$n")))
		# its barriers are in a folder of its own
		for o in "${hopts[@]}"; do last_opts+=("${o/@views_/@$name/views_}"); done
	fi
	[ ${#list[@]} -ge 2 ] || return 0
	for sc in "${list[@]}"; do in_batch[${sc%% *}]=$n; done
	echo "# ${#list[@]} scenarios in one boot of $n guests: ${list[*]%% *}"
	t0=$(date +%s)
	limits "$n" "$all"
	vmcluster_again "$OUT/batch$n.log" -n "$n" "${limit[@]}" --out "$OUT/batch$n" \
		"${last_opts[@]}" -- selftests/views-batch "${list[@]}"
	echo "# the shared boot of $n guests: vmcluster exit $? after $(($(date +%s) - t0)) s"
}
if [ "${VIEWS_BATCH:-1}" = 1 ]; then
	for bn in $(for sc in $scenarios; do plan "$sc"; echo "$NODES"; done | sort -nu); do
		run_batch "$bn"
	done
fi

# link_batched: the scenario's results in $d, as if it had run alone:
# its guests' folders and consoles are the shared boot's
link_batched() {
	local k b=batch${in_batch[$name]}
	mkdir -p "$d"
	for k in $(seq 0 $((NODES - 1))); do
		ln -sfn "../$b/node$k/$name" "$d/node$k"
		ln -sfn "../$b/console-$k.log" "$d/console-$k.log"
	done
	{ echo "vmcluster: $name ran in a shared boot ($OUT/$b)"; cat "$OUT/$b.log"; } >"$d.log"
	# its own time, the boot aside (a guest the host killed kept none)
	sc_took=$(cat "$d"/node*/.took 2>/dev/null | sort -n | tail -n 1)
}

for sc in $scenarios; do
	plan "$sc"
	sc_start=$(date +%s)
	sc_took=
	echo "# $name: $desc"
	if [ -n "${in_batch[$name]:-}" ]; then
		link_batched
		rc=0
	else
		limits "$NODES" "$secs"
		vmcluster_again "$d.log" -n "$NODES" "${limit[@]}" --out "$d" "${hopts[@]}" \
			-- selftests/views-guest "${gargs[@]}"
		rc=$?
	fi
	if [ "$kind" = other ]; then
		check_other "$rc"
	else
		judge "$name" "${check[@]}"
	fi
done
echo "# Totals: pass:$((n - fail)) fail:$fail"
[ $fail = 0 ]
