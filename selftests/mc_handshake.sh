#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The connection handshake refuses what is not a member of the same group
# with the same configuration.  Guest 0 is given a different window than
# the others: it must refuse them (and say why), while guests 1 and 2, who
# agree, connect to each other.  Then a connection carrying no Spindle
# private data at all (rping) is refused too.
. selftests/lib/ktap.sh
. selftests/lib/spindle.sh

# addresses_not_kernel KEYS: it names one connection at least, and each
# "addr 0x..." is below 2^47, where no x86-64 kernel address is
addresses_not_kernel() {
	n=0
	for a in $(sed -n 's/.* addr \(0x[0-9a-f]*\)$/\1/p' "$1"); do
		[ ${#a} -le 14 ] && [ $((a)) -lt $((1 << 47)) ] || return 1
		n=$((n + 1))
	done
	[ $n -gt 0 ]
}

need_guests 3
N=${SPINDLE_NODES:-1}
spindle_load || exit 1
G=51
PORT=7651
CFG=${SPINDLE_OUT:-/tmp}/handshake.conf
W=16
[ "$SPINDLE_NODE" = 0 ] && W=8
gen_config "$CFG" $G $PORT "subgroup 0 members all senders all window $W max_msg 64"
dmesg -C
ktap_plan 5
ktap_check "spindlectl_up" build/bin/spindlectl up "$CFG"
barrier handshake_up
sleep 4
state=$(build/bin/spindlectl -j show $G | jq -r '.[0].state')
ready=$(build/bin/spindlectl -j show $G | jq -r '[.[0].members[] | select(.state == "ready") | .id] | join(",")')
ktap_diag "group state $state, ready members: ${ready:-none}"
if [ "$SPINDLE_NODE" = 0 ]; then
	ktap_check "mismatched_config_refused" sh -c "[ '$state' = connecting ] && [ -z '$ready' ] &&
		dmesg | grep -q 'has a different configuration'"
	dmesg | grep 'different configuration' | head -n 2 | sed 's/^/# /'
else
	ktap_check "agreeing_members_connect" [ "$ready" = "$(( 3 - SPINDLE_NODE ))" ]
fi
# Where the hello tells a peer to write is an address of the MR's own
# (region.c), never this kernel's: on soft-RoCE the DMA address that
# ib_map_mr_sg() leaves there is a kernel virtual address, which a peer
# must not learn.  debugfs "keys": the first MR of each peer's connection.
if [ "$SPINDLE_NODE" = 0 ]; then
	ktap_result skip "peer_addresses_not_kernel" "guest 0 has no connection"
else
	mount -t debugfs none /sys/kernel/debug 2>/dev/null
	keys=/sys/kernel/debug/spindle/group$G/keys
	ktap_diag "keys: $(tr '\n' ';' <$keys)"
	ktap_check "peer_addresses_not_kernel" addresses_not_kernel $keys
fi
barrier handshake_checked
if [ "$SPINDLE_NODE" = 1 ]; then
	a0=$(echo "$SPINDLE_ADDRS" | cut -d' ' -f1)
	timeout 15 rping -c -a "$a0" -p $PORT -C 1 >/dev/null 2>&1
	ktap_check "rping_refused" test $? != 0
else
	ktap_result skip "rping_refused" "rping runs on guest 1"
fi
barrier handshake_rping
if [ "$SPINDLE_NODE" = 0 ]; then
	sleep 1
	ktap_check "foreign_connection_logged" sh -c "dmesg | grep -q 'rejected: not Spindle protocol'"
	dmesg | grep 'rejected: not Spindle' | head -n 1 | sed 's/^/# /'
else
	ktap_result skip "foreign_connection_logged" "checked on guest 0"
fi
barrier handshake_done
build/bin/spindlectl down $G >/dev/null
spindle_unload
ktap_finish
