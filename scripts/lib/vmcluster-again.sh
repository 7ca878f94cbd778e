# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# vmcluster_again LOG ARGS...: scripts/vmcluster ARGS (which name --out DIR),
# its output in LOG.  When the test bed failed before any command ran
# (vmcluster's exit 3: the cluster never came up, a guest never reached its
# peers, and spindle.ko was not loaded yet), the run tells nothing of
# Spindle: it is booted once more, the first attempt's folder and log kept
# as DIR.bootfail and LOG.bootfail, and a "# " line on stdout says so (a
# 6.1 guest's NIC has sent not one packet in 120 s of a clean run).
# Returns vmcluster's last exit status.  Sourced by scripts/check and
# selftests/host/views.sh.
vmcluster_again() {
	local log=$1 out='' prev='' a rc
	shift
	for a in "$@"; do
		[ "$prev" = --out ] && out=$a
		prev=$a
	done
	scripts/vmcluster "$@" >"$log" 2>&1
	rc=$?
	[ $rc = 3 ] && [ -n "$out" ] || return $rc
	echo "# test bed: the cluster of $out never came up ($(grep -m1 'FAILED' "$log")); booted once more"
	rm -rf "$out.bootfail"
	mv "$out" "$out.bootfail"
	mv "$log" "$log.bootfail"
	scripts/vmcluster "$@" >"$log" 2>&1
}
