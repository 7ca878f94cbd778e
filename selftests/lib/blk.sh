# SPDX-License-Identifier: GPL-2.0
# Helpers for the replicated block device's tests (sourced after
# selftests/lib/spindle.sh and ktap.sh).  They use DEV (the device), ACKED
# (a shared folder: one file a guest, the numbers of its acknowledged
# blocks), SUMS (a shared folder for checksums), N (guests) and LOGDIR.
# Guest K's block I is at 4 KiB block K * 1024 + I.

# every test's module, knobs and (first) device
BLK_KO=${SPINDLE_KO%/*}/blk/spindle_blk.ko
P=/sys/module/spindle_blk/parameters
DEV=/dev/spindle-blk0

# blk_block K I: guest K's block I, one line of 4096 bytes
blk_block() {
	yes "guest $1 block $2 " | tr -d '\n' | head -c 4095
	echo
}

# blk_write_one I: write this guest's block I, O_DIRECT; log it in ACKED
# (made by the caller: a process start is slow on a debug guest) once
# acknowledged.  False if the write failed.
blk_write_one() {
	blk_block "${SPINDLE_NODE:-0}" "$1" |
		dd of="$DEV" bs=4096 seek=$((${SPINDLE_NODE:-0} * 1024 + $1)) iflag=fullblock \
			oflag=direct status=none || return 1
	echo "$1" >>"$ACKED/${SPINDLE_NODE:-0}"
}

# blk_acked_here: every logged block of every guest reads back whole from
# this guest's copy (one read a guest's region, however many blocks)
blk_acked_here() {
	_bad=0
	for _k in $(seq 0 $((N - 1))); do
		[ -s "$ACKED/$_k" ] || continue
		_max=$(sort -n "$ACKED/$_k" | tail -n 1)
		# a block to a line of 4096 characters, unwritten ones (zeros) too
		dd if="$DEV" bs=4096 skip=$((_k * 1024)) count=$((_max + 1)) iflag=direct \
			status=none | tr '\000\n' '.#' | fold -w 4096 >"$LOGDIR/blk.region.$_k"
		_n=$(awk -v k="$_k" -v acked="$ACKED/$_k" '
			BEGIN { while ((getline i < acked) > 0) want[i] = 1 }
			(NR - 1) in want {
				s = ""
				while (length(s) < 4095)
					s = s "guest " k " block " (NR - 1) " "
				if ($0 != substr(s, 1, 4095) "#") bad++
			}
			END { print bad + 0 }' "$LOGDIR/blk.region.$_k")
		ktap_diag "guest $_k: $(wc -l <"$ACKED/$_k") blocks acknowledged, $_n of them not here"
		[ "$_n" = 0 ] || _bad=1
	done
	[ $_bad = 0 ]
}

# blk_copies_agree GUEST...: this guest's copy's checksum, left in SUMS (a
# shared folder), is the same as each GUEST's (whose may take 120 s)
blk_copies_agree() {
	mkdir -p "$SUMS"
	# whole or not at all: another guest may be reading the folder
	dd if="$DEV" bs=1M iflag=direct status=none | sha256sum | cut -d' ' -f1 \
		>"$SUMS/.${SPINDLE_NODE:-0}"
	mv "$SUMS/.${SPINDLE_NODE:-0}" "$SUMS/${SPINDLE_NODE:-0}"
	_n=$#
	for _k in "$@"; do
		set -- "$@" "$SUMS/$_k"
	done
	shift "$_n"
	_all=0
	[ $# = 0 ] || "$WAITFOR" -t 120 "$@" || _all=1
	ktap_diag "copies: $(cat "$SUMS"/* | tr '\n' ' ')"
	[ "$_all" = 0 ] && [ "$(cat "$SUMS"/* | sort -u | grep -c .)" -eq 1 ]
}
