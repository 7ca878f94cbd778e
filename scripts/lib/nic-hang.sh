# SPDX-License-Identifier: GPL-2.0
#
# nic_hangs CONSOLE...: one line per guest console whose virtual NIC stopped
# sending (the guest kernel's TX watchdog, "NETDEV WATCHDOG ... transmit
# queue 0 timed out 5004 ms"), a fault of the test bed, not of Spindle:
#   CONSOLE: transmit queue 0 timed out 5004 ms
# Nothing (and status 0) when none hung.  Sourced by scripts/check and
# selftests/host/views.sh.
nic_hangs() {
	grep -H -m 1 -o 'NETDEV WATCHDOG.*transmit queue .*' "$@" 2>/dev/null |
		sed 's/:NETDEV WATCHDOG.*\(transmit queue\)/: \1/'
	return 0
}
