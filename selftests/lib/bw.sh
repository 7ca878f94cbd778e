# SPDX-License-Identifier: GPL-2.0
# Run spindle-bw as a test step (sourced, after ktap.sh and spindle.sh).
#
#   bw_run NAME SPINDLE-BW-ARGS...
# writes $LOGDIR/NAME.log (deliveries), NAME.json (its JSON line) and
# NAME.err, checks the run locally (exit 0, all delivered, no bad payload,
# log obeys FIFO / round-robin) and records one KTAP result NAME.
# scripts/check compares the logs across guests afterwards.
LOGDIR=${SPINDLE_OUT:-/tmp}/logs
mkdir -p "$LOGDIR"

# json_val KEY: KEY's value (quotes dropped) in $_json, spindle-bw's flat
# JSON line, into $_v; false if KEY is not there.  No process started:
# jq's start alone takes a TCG guest 0.4 s of its vCPU.
json_val() {
	_v=${_json#*\""$1"\":}
	if [ "$_v" = "$_json" ]; then
		_v=
		return 1
	fi
	_v=${_v%%,*}
	_v=${_v%%\}*}
	_v=${_v#\"}
	_v=${_v%\"}
}

bw_run() {
	_name=$1
	shift
	build/bin/spindle-bw --log "$LOGDIR/$_name.log" "$@" \
		>"$LOGDIR/$_name.json" 2>"$LOGDIR/$_name.err"
	_rc=$?
	_json=$(grep '^{' "$LOGDIR/$_name.json" | tail -n 1)
	ktap_diag "$_name: $_json"
	if [ $_rc != 0 ] || [ -z "$_json" ]; then
		ktap_diag "$_name: spindle-bw exit $_rc: $(tail -n 3 "$LOGDIR/$_name.err")"
		ktap_result fail "$_name"
		return 1
	fi
	json_val mode; _mode=$_v
	json_val senders; _ns=$_v
	json_val messages_per_sender; _per=$_v
	json_val size; _size=$_v
	if ! awk -v mode="$_mode" -v nsenders="$_ns" -v per="$_per" -v len="$_size" \
		-f selftests/lib/checklog.awk "$LOGDIR/$_name.log" >"$LOGDIR/$_name.check"; then
		sed 's/^/# /' "$LOGDIR/$_name.check"
		ktap_result fail "$_name"
		return 1
	fi
	ktap_result ok "$_name"
}

# bw_messages N: how many messages a stream of N carries here: N, or half
# of it on a debug kernel.  That lane is for KASAN, lockdep and kmemleak,
# which see the same paths either way (the rings wrap the same per
# window), and the 6.12-rt debug guests streamed 2.5-3.9 times slower
# than the 6.1 debug guests
bw_messages() {
	if on_debug_kernel; then
		echo $(($1 / 2))
	else
		echo "$1"
	fi
}

# A port per test, so that a guest still tearing down the last test's group
# never meets the next one's connection attempts.
bw_port() {
	echo $((7500 + $1))
}
