#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The replicated block device across a member's death (run by
# selftests/host/blk_kill.sh, which kills guest BLK_VICTIM while the
# guests write).  Every guest writes 4 KiB blocks into a region of its own,
# O_DIRECT, one at a time, and logs each block once its write returned
# (acknowledged); the survivors go on until 30 blocks past the view change.  Then, on every survivor: the view without the victim is
# installed and the device is still live; every block any guest logged,
# the victim's too, reads back from this copy as it was written (an
# acknowledged write was delivered at its issuer, so every member had it);
# the survivors' copies are identical; nothing was refused.
. selftests/lib/ktap.sh
. selftests/lib/spindle.sh
. selftests/lib/bw.sh
. selftests/lib/blk.sh

N=${SPINDLE_NODES:-1}
ME=${SPINDLE_NODE:-0}
VICTIM=${BLK_VICTIM:-2}
G=82
CFG=$LOGDIR/blk_kill.conf
ACKED=$SPINDLE_SHARED/blk_kill.acked
SUMS=$SPINDLE_SHARED/blk_kill.sums
SUSPECT_MS=3000
on_debug_kernel && SUSPECT_MS=8000

# victim_gone: the installed view is active and without the victim
victim_gone() {
	_l=$(build/bin/spindlectl group show $G 2>/dev/null | head -n 1)
	_m=${_l##* view_members }
	case "$_l" in
	*"state active"*" view_members "*)
		case ",${_m%% *}," in
		*",$VICTIM,"*) return 1 ;;
		*) return 0 ;;
		esac ;;
	esac
	return 1
}

# write_blocks: this guest's blocks, each logged once acknowledged, on
# until BLK_AFTER blocks after the view without the victim (at most
# 1000); the host's kill counts from the mark after the tenth
write_blocks() {
	_fail=0 _i=0 _end=1000
	mkdir -p "$ACKED"
	while [ $_i -lt $_end ]; do
		blk_write_one "$_i" 2>>"$LOGDIR/blk_kill.dd.err" || _fail=$((_fail + 1))
		[ $_i = 10 ] && mark blk_kill_writing
		if [ $_end = 1000 ] && [ $((_i % 10)) = 0 ] && victim_gone; then
			_end=$((_i + ${BLK_AFTER:-30}))
			ktap_diag "guest $ME: the view without guest $VICTIM at block $_i"
		fi
		_i=$((_i + 1))
	done
	ktap_diag "guest $ME: $_i writes, $_fail failed"
}

# view_without_victim: wait (60 s at most) for that view
view_without_victim() {
	for _t in $(seq 300); do
		victim_gone && { ktap_diag "$_l"; return 0; }
		sleep 0.2
	done
	ktap_diag "no view without guest $VICTIM: $_l"
	return 1
}

# survivors_at NAME: mark NAME and wait (up to 120 s) for the other
# survivors to get there too
survivors_at() {
	_b=$SPINDLE_SHARED/barrier.$1
	mark "$1"
	"$WAITFOR" -t 120 -n $((N - 1)) "$_b" && return 0
	ktap_diag "the survivors never all got to ${_b##*.}"
	return 1
}

need_guests 3
spindle_load || exit 1
echo $SUSPECT_MS >/sys/module/spindle/parameters/suspect_ms || exit 1
ktap_plan 9
gen_config "$CFG" $G "$(bw_port $G)" \
	"subgroup 5 members all senders all window 32 max_msg 4160 mode ordered blk_mib 16"
insmod "$BLK_KO" || exit 1
ktap_check "spindlectl_up" build/bin/spindlectl up "$CFG"
ktap_check "group_active" wait_active $G
ktap_check "device_created" sh -c "echo '$G 5' >$P/create"
for _i in $(seq 50); do [ -b $DEV ] && break; sleep 0.1; done
barrier blk_kill_up
write_blocks
ktap_check "view_without_the_victim" view_without_victim
ktap_check "device_still_live" grep -q "state live" $P/create
# every survivor done writing; then a flush here (fsync on the device, a
# message with no data), delivered after every write acknowledged
# anywhere before it: the checks read a copy with the other's last writes
survivors_at blk_kill_written
sync "$DEV" || ktap_diag "the flush failed"
ktap_check "acknowledged_blocks_are_here" blk_acked_here
# shellcheck disable=SC2046
ktap_check "survivors_copies_identical" blk_copies_agree $(seq 0 $((N - 1)) | grep -vx "$VICTIM")
ktap_diag "$(cat $P/create)"
ktap_check "nothing_refused" grep -q "refused 0 " $P/create
# the group goes down only once every survivor has read its copy
survivors_at blk_kill_checked
echo 0 >$P/remove
rmmod spindle_blk
build/bin/spindlectl down $G
ktap_check "kernel_log_clean" dmesg_clean
ktap_finish
