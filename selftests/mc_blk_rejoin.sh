#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The replicated block device and a member that leaves and comes back.
# Three guests make /dev/spindle-blk0 and write; guest 2 (the leaver)
# takes its device away and its group down; the others go on in a view
# without it and write more (its copy will lack those).  Then the others
# hold their rows back from it for a while (fault_row_hold_ms), so that
# it stays connecting, not yet knowing it is a joiner, and it brings the
# group up again:
#   - while connecting it cannot make its device (EAGAIN): its copy may
#     be behind the group's, and nothing yet says so;
#   - once taken back in, it can, and the device is stale: reads and
#     writes fail (EIO);
#   - the others write more than a window of messages in the view with it:
#     they complete (the stale device still gives its deliveries back),
#     their copies are identical and hold every acknowledged block.
. selftests/lib/ktap.sh
. selftests/lib/spindle.sh
. selftests/lib/bw.sh
. selftests/lib/blk.sh

N=${SPINDLE_NODES:-1}
ME=${SPINDLE_NODE:-0}
LEAVER=2
G=83
CFG=$LOGDIR/blk_rejoin.conf
ACKED=$SPINDLE_SHARED/blk_rejoin.acked
SUMS=$SPINDLE_SHARED/blk_rejoin.sums
SUSPECT_MS=3000
on_debug_kernel && SUSPECT_MS=8000
# how long the others hide their rows from the leaver once it connects:
# its whole window of being connecting, not a view's member yet
HOLD_MS=6000

# write_blocks FROM TO: this guest's blocks FROM..TO-1 (logged once
# acknowledged); false at the first that failed
write_blocks() {
	mkdir -p "$ACKED"
	for _i in $(seq "$1" $(($2 - 1))); do
		blk_write_one "$_i" || return 1
	done
}

# view_is with|without: the installed view is active, with (without) the
# leaver; waits 60 s at most
view_is() {
	for _t in $(seq 300); do
		_l=$(build/bin/spindlectl group show $G 2>/dev/null | head -n 1)
		_m=${_l##* view_members }
		_has=without
		case ",${_m%% *}," in *",$LEAVER,"*) _has=with ;; esac
		case "$_l" in
		*"state active"*" view_members "*)
			[ $_has = "$1" ] && { ktap_diag "$_l"; return 0; } ;;
		esac
		sleep 0.2
	done
	ktap_diag "no view $1 guest $LEAVER: $_l"
	return 1
}

# create_fails ERROR: writing the create knob fails with ERROR (coreutils'
# echo: dash's says "I/O error" whatever the errno)
create_fails() {
	_err=$(/bin/echo "$G 5" 2>&1 >$P/create) && { ktap_diag "created"; return 1; }
	case "$_err" in *"$1"*) return 0 ;; esac
	ktap_diag "create: $_err"
	return 1
}

# create_once_in: retry the create knob while it says EAGAIN (60 s)
create_once_in() {
	for _t in $(seq 300); do
		_err=$(/bin/echo "$G 5" 2>&1 >$P/create) && return 0
		case "$_err" in *"temporarily unavailable"*) ;; *) break ;; esac
		sleep 0.2
	done
	ktap_diag "create: $_err"
	return 1
}

need_guests 3
spindle_load || exit 1
echo $SUSPECT_MS >/sys/module/spindle/parameters/suspect_ms || exit 1
gen_config "$CFG" $G "$(bw_port $G)" \
	"subgroup 5 members all senders all window 32 max_msg 4160 mode ordered blk_mib 16"
insmod "$BLK_KO" || exit 1
others=$(seq 0 $((N - 1)) | grep -vx $LEAVER | tr '\n' ' ')
if [ "$ME" = $LEAVER ]; then
	ktap_plan 10
else
	ktap_plan 11
fi
ktap_check "spindlectl_up" build/bin/spindlectl up "$CFG"
ktap_check "group_active" wait_active $G
ktap_check "device_created" sh -c "echo '$G 5' >$P/create"
for _i in $(seq 50); do [ -b $DEV ] && break; sleep 0.1; done
barrier blk_rejoin_up
ktap_check "first_writes_complete" write_blocks 0 10
barrier blk_rejoin_wrote

if [ "$ME" = $LEAVER ]; then
	echo 0 >$P/remove
	build/bin/spindlectl down $G
	mark blk_rejoin_left
	# shellcheck disable=SC2086
	marked blk_rejoin_moved_on $others || exit 1
	build/bin/spindlectl up "$CFG" || exit 1
	ktap_diag "$(build/bin/spindlectl group show $G | head -n 1)"
	ktap_check "no_device_while_connecting" create_fails "temporarily unavailable"
	ktap_check "device_once_taken_back" create_once_in
	for _i in $(seq 50); do [ -b $DEV ] && break; sleep 0.1; done
	ktap_diag "$(cat $P/create)"
	ktap_check "device_is_stale" grep -q "state stale" $P/create
	ktap_check "stale_read_fails" sh -c "! dd if=$DEV of=/dev/null bs=4096 count=1 \
		iflag=direct status=none 2>/dev/null"
	ktap_check "stale_write_fails" sh -c "! dd if=/dev/zero of=$DEV bs=4096 count=1 \
		oflag=direct status=none 2>/dev/null"
	mark blk_rejoin_stale
	# shellcheck disable=SC2086
	marked blk_rejoin_checked $others
else
	ktap_check "view_without_the_leaver" view_is without
	echo $HOLD_MS >/sys/module/spindle/parameters/fault_row_hold_ms
	write_blocks 10 20 || ktap_diag "writes in the view without the leaver failed"
	mark blk_rejoin_moved_on
	ktap_check "view_with_the_leaver_again" view_is with
	marked blk_rejoin_stale $LEAVER
	# more than the window (32): the leaver's stale device must give its
	# deliveries back for the ring to go round
	ktap_check "writes_past_a_window_complete" write_blocks 20 60
	# every survivor done writing; then a flush of this guest's (fsync on
	# the device: a message with no data): it completes when delivered
	# here, after every write acknowledged elsewhere before it (delivered
	# there first, so ordered before it), and the checks below read a copy
	# that has them all, the other survivor's last writes too
	mark blk_rejoin_written
	# shellcheck disable=SC2086
	marked blk_rejoin_written $others
	sync "$DEV" || ktap_diag "the flush failed"
	ktap_check "acknowledged_blocks_are_here" blk_acked_here
	# shellcheck disable=SC2086
	ktap_check "copies_identical" blk_copies_agree $others
	ktap_diag "$(cat $P/create)"
	ktap_check "nothing_refused_or_failed" grep -q "state live applied [1-9][0-9]* refused 0 failed 0" \
		$P/create
	mark blk_rejoin_checked
	echo 0 >/sys/module/spindle/parameters/fault_row_hold_ms
fi
barrier blk_rejoin_done
echo 0 >$P/remove
rmmod spindle_blk
build/bin/spindlectl down $G
ktap_check "kernel_log_clean" dmesg_clean
spindle_unload
ktap_finish
