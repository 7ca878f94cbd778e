#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The replicated block device (kmod/blk/spindle_blk.ko) on every guest: a
# subgroup of all of them with blk_mib 16 gets /dev/spindle-blk0 on each.
# Every guest writes at once: 4 KiB blocks and 32 KiB writes (eight
# messages each) at random offsets that overlap the others', O_DIRECT,
# then a buffered write and fsync (a flush through the group).  Then each
# guest writes a pattern of its own to a region of its own.  The checks:
# every copy's checksum is the same on every guest, every guest reads
# every other guest's pattern from its own copy, nothing was refused or
# failed; and the knob refuses what it must (no blk_mib, twice, while a
# file of the subgroup's /dev/spindleN is open or another kernel consumer
# is attached: the subgroup is the device's alone, and while the device is
# there that file does not open either, EBUSY).  Then ext4 made on one
# guest's device reads back on every guest.
# Last, devices made late (3 guests or more): a copy is the group's only
# if its device was there for every write delivered on its member, else
# it is stale and fails every request (EIO), where before it served
# zeros for the others' data:
#   - guest 2 removes its device and makes it again; guest 1 unloads
#     spindle_blk, loads it and makes it again: both stale;
#   - in a second group, guest 0 writes while guests 1 and 2 have no
#     device: guest 1 makes one then (the write waited for it: live, and
#     it reads the write), then leaves; the view change delivers the write
#     on guest 2 with no device there, which drops it: the device guest 2
#     makes after it is stale;
#   - guest 0's devices stay live: the second group's holds the write, and
#     it writes more than a window to the first, which goes round only if
#     the stale devices give their deliveries back.
. selftests/lib/ktap.sh
. selftests/lib/spindle.sh
. selftests/lib/bw.sh
. selftests/lib/blk.sh

N=${SPINDLE_NODES:-1}
ME=${SPINDLE_NODE:-0}
G=81
CFG=$LOGDIR/blk.conf
SUMS=$SPINDLE_SHARED/blk.sums

# pattern K: guest K's 256 KiB, the same bytes wherever it is made
pattern() {
	yes "spindle-blk guest $1 " | head -c 262144
}

# write_random COUNT BS BLOCKS: COUNT writes of BS bytes at random
# multiples of BS below BLOCKS, each from /dev/urandom, O_DIRECT
write_random() {
	for _o in $(shuf -i 0-$(($3 - 1)) -n "$1"); do
		dd if=/dev/urandom of=$DEV bs="$2" count=1 seek="$_o" oflag=direct \
			conv=notrunc status=none || return 1
	done
}

# this guest's share of the writes all make at once: 4 KiB and 32 KiB at
# random (overlapping the others'), then 256 KiB buffered and fsync'ed
writes_from_all() {
	write_random 100 4096 4096 && write_random 20 32768 512 &&
		dd if=/dev/urandom of=$DEV bs=64k count=4 seek=$((16 * ME + 100)) \
			conv=fsync status=none
}

# refused ERROR ARGS: writing ARGS to the create knob fails with ERROR
# (coreutils' echo: dash's says "I/O error" whatever the errno)
refused() {
	_err=$(/bin/echo "$2" 2>&1 >$P/create) && return 1
	case "$_err" in *"$1"*) return 0 ;; esac
	ktap_diag "create '$2': $_err"
	return 1
}

# dev_of GROUP: the device of GROUP's subgroup 5 here (the knob's list)
dev_of() {
	_l=$(grep " group $1 subgroup 5 " $P/create) && echo "/dev/${_l%% *}"
}

# made GROUP: make the device of GROUP's subgroup 5 here; wait for its node
made() {
	echo "$1 5" >$P/create || return 1
	for _i in $(seq 50); do
		[ -b "$(dev_of "$1")" ] && return 0
		sleep 0.1
	done
	return 1
}

# in_state GROUP STATE: the knob lists GROUP's device in STATE
in_state() {
	grep -q " group $1 subgroup 5 state $2 " $P/create ||
		{ ktap_diag "$(grep " group $1 " $P/create)"; return 1; }
}

# stale GROUP: GROUP's device here is stale, and a read of it fails (EIO)
stale() {
	in_state "$1" stale || return 1
	_err=$(dd if="$(dev_of "$1")" of=/dev/null bs=4096 count=1 iflag=direct status=none 2>&1) &&
		{ ktap_diag "group $1: a stale device's read succeeded"; return 1; }
	case "$_err" in *"Input/output error"*) return 0 ;; esac
	ktap_diag "group $1: read: $_err"
	return 1
}

# reads_late GROUP: GROUP's device here is live and reads guest 0's write
# (after a flush: delivered after that write, so applied after it here)
reads_late() {
	in_state "$1" live && sync "$(dev_of "$1")" &&
		[ "$(dd if="$(dev_of "$1")" bs=4096 count=1 iflag=direct status=none | sha256sum)" = \
		  "$(blk_block 0 0 | sha256sum)" ]
}

# without GROUP K: until GROUP is active here in a view without guest K
# (30 s at most)
without() {
	for _i in $(seq 150); do
		_l=$(build/bin/spindlectl group show "$1" 2>/dev/null | head -n 1)
		_m=${_l##* view_members }
		case "$_l" in
		*"state active"*" view_members "*)
			case ",${_m%% *}," in *",$2,"*) ;; *) return 0 ;; esac ;;
		esac
		sleep 0.2
	done
	ktap_diag "$_l"
	return 1
}

# the late devices' cases (below)
remade_stale() {
	echo 0 >$P/remove && made $G && stale $G
}
reloaded_stale() {
	rmmod spindle_blk && insmod "$BLK_KO" && made $G && stale $G
}
made_and_reads() {
	made "$1" && reads_late "$1"
}
made_after_view_stale() {
	marked blk_late_left 1 && without "$1" 1 && made "$1" && stale "$1"
}

# guest 0 writes more than a window (32 messages) to group 81, one write
# each: the stale devices on guests 1 and 2 must give their deliveries
# back for its ring to go round; its device stays live
past_a_window_live() {
	dd if=/dev/urandom of=$DEV bs=4096 count=40 seek=2048 oflag=direct status=none &&
		in_state $G live
}

# sub_dev GROUP: /dev/spindleN of GROUP's subgroup 5
sub_dev() {
	build/bin/spindlectl subgroup show "$1" 5 | awk '$1 == "group" && $5 == "dev" { print $6 }'
}

# refused_while_open GROUP: the device is not made while a file of the
# subgroup is open (EBUSY); the file is closed after (device_created, next,
# makes it)
refused_while_open() {
	_sd=$(sub_dev "$1")
	[ -c "$_sd" ] || { ktap_diag "no /dev/spindleN for group $1 subgroup 5: '$_sd'"; return 1; }
	command exec 3<"$_sd" || { ktap_diag "cannot open $_sd"; return 1; }
	refused "Device or resource busy" "$1 5"
	_rc=$?
	exec 3<&-
	return $_rc
}

# refused_beside_a_consumer GROUP: the device is not made while another
# kernel consumer (kmod/sample) is attached to the subgroup (EBUSY)
refused_beside_a_consumer() {
	insmod "$SPINDLE_SAMPLE_KO" group="$1" subgroup=5 count=0 ||
		{ ktap_diag "spindle_sample did not load"; return 1; }
	refused "Device or resource busy" "$1 5"
	_rc=$?
	rmmod spindle_sample
	return $_rc
}

# open_busy GROUP: the subgroup's /dev/spindleN does not open (EBUSY)
open_busy() {
	_err=$(dd if="$(sub_dev "$1")" of=/dev/null count=0 status=none 2>&1) &&
		{ ktap_diag "$(sub_dev "$1") opened"; return 1; }
	case "$_err" in *"Device or resource busy"*) return 0 ;; esac
	ktap_diag "open: $_err"
	return 1
}

# the device's checksum, read past the page cache (another guest's writes
# change the copy under it)
copy_sum() {
	dd if=$DEV bs=1M iflag=direct status=none | sha256sum | cut -d' ' -f1
}

spindle_load || exit 1
ktap_plan 25
gen_config "$CFG" $G "$(bw_port $G)" \
	"subgroup 5 members all senders all window 32 max_msg 4160 mode ordered blk_mib 16" \
	"subgroup 6 members all senders all window 4 max_msg 4160 mode ordered"
ktap_check "blk_module_loads" insmod "$BLK_KO"
ktap_check "spindlectl_up" build/bin/spindlectl up "$CFG"
ktap_check "group_active" wait_active $G
# refused: EINVAL without blk_mib, EEXIST a second time
ktap_check "no_blk_mib_is_refused" refused "Invalid argument" "$G 6"
ktap_check "refused_while_the_subgroup_is_open" refused_while_open $G
ktap_check "refused_beside_another_consumer" refused_beside_a_consumer $G
ktap_check "device_created" sh -c "echo '$G 5' >$P/create"
ktap_check "subgroup_does_not_open_while_held" open_busy $G
ktap_check "created_twice_is_refused" refused "File exists" "$G 5"
for _i in $(seq 50); do [ -b $DEV ] && break; sleep 0.1; done
ktap_check "device_is_16_mib" [ "$(blockdev --getsize64 $DEV)" -eq 16777216 ]
barrier blk_up

ktap_check "random_and_buffered_writes_complete" writes_from_all
barrier blk_random_done

pattern "$ME" | dd of=$DEV bs=64k seek=$((4 * ME)) iflag=fullblock oflag=direct status=none
barrier blk_patterns_done
# a flush (fsync on the device, a message with no data) completes when
# delivered here, after every write acknowledged anywhere before it: the
# copy read below has the others' last writes
sync "$DEV" || ktap_diag "the flush failed"
bad=0
for k in $(seq 0 $((N - 1))); do
	want=$(pattern "$k" | sha256sum | cut -d' ' -f1)
	got=$(dd if=$DEV bs=64k skip=$((4 * k)) count=4 iflag=direct status=none | sha256sum |
		cut -d' ' -f1)
	[ "$want" = "$got" ] || { ktap_diag "guest $k's pattern: read $got, want $want"; bad=1; }
done
ktap_check "every_guests_pattern_is_here" [ $bad = 0 ]

mkdir -p "$SUMS"
copy_sum >"$SUMS/$ME"
barrier blk_summed
ktap_diag "copy on guest $ME: $(cat "$SUMS/$ME"); $(cat $P/create)"
ktap_check "copies_identical" [ "$(cat "$SUMS"/* | sort -u | wc -l)" -eq 1 ]
ktap_check "nothing_refused_or_failed" grep -q "state live applied [1-9][0-9]* refused 0 failed 0" $P/create

# A file system, as a human would check it: guest 0 makes ext4 on its
# device, mounts it, writes a file and unmounts (which syncs: writes and
# flushes through the group); then every guest drops the blocks it has
# cached, checks the file system (fsck -n) and mounts it read-only to read
# the file back.  (Skipped on a kernel without ext4.)
if modprobe ext4 2>/dev/null; grep -qw ext4 /proc/filesystems; then
	if [ "$ME" = 0 ]; then
		ktap_check "ext4_made_here" sh -c "mkfs.ext4 -q -F $DEV && mount $DEV /mnt &&
			echo 'written on guest 0' >/mnt/hello && umount /mnt"
	else
		ktap_result skip "ext4_made_here" "guest 0 makes it"
	fi
	barrier blk_fs_made
	ktap_check "ext4_checks_clean" sh -c "blockdev --flushbufs $DEV && fsck.ext4 -n -f $DEV >/dev/null"
	ktap_check "ext4_read_only_mount_reads_the_file" sh -c "mount -o ro $DEV /mnt &&
		grep -qx 'written on guest 0' /mnt/hello; _rc=\$?; umount /mnt; exit \$_rc"
else
	for _t in ext4_made_here ext4_checks_clean ext4_read_only_mount_reads_the_file; do
		ktap_result skip "$_t" "no ext4 in this kernel"
	done
fi
barrier blk_checked

G2=86
LATE="remade_device_is_stale reloaded_module_device_is_stale"
LATE="$LATE device_made_while_writes_wait_is_live device_made_after_a_drop_is_stale"
LATE="$LATE first_device_keeps_the_write first_device_stays_live"
if [ "$N" -lt 3 ]; then
	for _t in $LATE; do
		ktap_result skip "$_t" "needs 3 guests"
	done
else
	case "$ME" in
	1) ktap_check "reloaded_module_device_is_stale" reloaded_stale ;;
	2) ktap_check "remade_device_is_stale" remade_stale ;;
	esac
	for _t in remade_device_is_stale reloaded_module_device_is_stale; do
		case "$ME:$_t" in
		2:remade* | 1:reloaded*) ;;
		*) ktap_result skip "$_t" "another guest's case" ;;
		esac
	done

	CFG2=$LOGDIR/blk_late.conf
	gen_config "$CFG2" $G2 "$(bw_port $G2)" \
		"subgroup 5 members all senders all window 32 max_msg 4160 mode ordered blk_mib 16"
	build/bin/spindlectl up "$CFG2" >/dev/null && wait_active $G2 ||
		ktap_diag "group $G2 not active"
	[ "$ME" = 0 ] && { made $G2 || ktap_diag "no device of group $G2"; }
	barrier blk_late_made
	if [ "$ME" = 0 ]; then
		blk_block 0 0 | dd of="$(dev_of $G2)" bs=4096 iflag=fullblock oflag=direct \
			status=none || ktap_diag "guest 0's write to group $G2 failed"
	fi
	barrier blk_late_written
	if [ "$ME" = 1 ]; then
		ktap_check "device_made_while_writes_wait_is_live" made_and_reads $G2
		_d=$(dev_of $G2)
		echo "${_d##*blk}" >$P/remove
		build/bin/spindlectl down $G2 >/dev/null
		mark blk_late_left
	else
		ktap_result skip "device_made_while_writes_wait_is_live" "guest 1's case"
	fi
	if [ "$ME" = 2 ]; then
		ktap_check "device_made_after_a_drop_is_stale" made_after_view_stale $G2
	else
		ktap_result skip "device_made_after_a_drop_is_stale" "guest 2's case"
	fi
	barrier blk_late_checked
	if [ "$ME" = 0 ]; then
		ktap_check "first_device_keeps_the_write" reads_late $G2
		ktap_check "first_device_stays_live" past_a_window_live
	else
		ktap_result skip "first_device_keeps_the_write" "guest 0's case"
		ktap_result skip "first_device_stays_live" "guest 0's case"
	fi
fi
barrier blk_late_done
rmmod spindle_blk
build/bin/spindlectl down $G2 >/dev/null 2>&1
ktap_check "spindlectl_down" build/bin/spindlectl down $G
ktap_check "kernel_log_clean" dmesg_clean
spindle_unload
ktap_finish
