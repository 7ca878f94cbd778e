#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Load/unload cycles with traffic between them: each cycle loads spindle.ko,
# streams through a group of all the guests (ordered, producer page), takes
# the group down and unloads the module.  On a kmemleak kernel (the debug
# lane, `make check-debug`) a scan after the last cycle must find nothing:
# every cycle's groups, rings, MRs, QPs and CM IDs were freed.
. selftests/lib/ktap.sh
. selftests/lib/spindle.sh
. selftests/lib/bw.sh

CYCLES=${CYCLES:-3}

ktap_plan $((CYCLES * 2 + 1))
spindle_unload
kml=0
kmemleak_reset && kml=1
i=0
while [ $i -lt "$CYCLES" ]; do
	i=$((i + 1))
	barrier "load$i"
	if ! spindle_load; then
		ktap_diag "cycle $i: load failed"
		ktap_result fail "cycle${i}_traffic"
		ktap_result fail "cycle${i}_unload"
		continue
	fi
	bw_run "cycle${i}_traffic" --group $((60 + i)) --port "$(bw_port $((60 + i)))" \
		--senders all --messages 500 --size 512 --window 32 --stall 60
	# every guest has delivered everything before any unloads
	barrier "unload$i"
	ktap_check "cycle${i}_unload" rmmod spindle
done

if [ $kml = 1 ]; then
	leaks=$(kmemleak_scan)
	if [ -n "$leaks" ]; then
		echo "$leaks" | head -n 60 | sed 's/^/# /'
		ktap_result fail "kmemleak_clean"
	else
		ktap_result ok "kmemleak_clean"
	fi
else
	ktap_result skip "kmemleak_clean" "this kernel has no kmemleak"
fi
ktap_finish
