#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Two overlapping subgroups of one group, streaming at the same time:
# subgroup 0 holds every guest (all send, ordered, window 32), subgroup 1
# the first two (both send, ordered, window 4, 2 KB messages).  The group is
# brought up by spindlectl from a configuration file; two spindle-bw
# processes use it; it goes down only when every guest is done with both.
# Then a group of 32 subgroups (the most there may be), all sending in
# each, streams in the last.
. selftests/lib/ktap.sh
. selftests/lib/spindle.sh
. selftests/lib/bw.sh

spindle_load || exit 1
N=${SPINDLE_NODES:-1}
G=31
CFG=$LOGDIR/two_subgroups.conf
if [ "$N" -ge 2 ]; then SG1="0,1"; else SG1="0"; fi
gen_config "$CFG" $G "$(bw_port 31)" \
	"subgroup 0 members all senders all window 32 max_msg 512 mode ordered" \
	"subgroup 7 members $SG1 senders $SG1 window 4 max_msg 2048 mode ordered"

ktap_plan 7
ktap_check "spindlectl_up" build/bin/spindlectl up "$CFG"
in_sg1=0
case ",$SG1," in *",${SPINDLE_NODE:-0},"*) in_sg1=1 ;; esac
if [ $in_sg1 = 1 ]; then
	( bw_run two_subgroups_sg7 --config "$CFG" --subgroup 7 --messages "$(bw_messages 600)" --size 2048 --stall 60 >"$LOGDIR/sg7.ktap" ) &
	pid=$!
fi
bw_run two_subgroups_sg0 --config "$CFG" --subgroup 0 --messages "$(bw_messages 1000)" --size 512 --stall 60
if [ $in_sg1 = 1 ]; then
	wait $pid
	cat "$LOGDIR/sg7.ktap" | grep -v '^ok\|^not ok' 
	if grep -q '^ok' "$LOGDIR/sg7.ktap"; then
		ktap_result ok two_subgroups_sg7
	else
		ktap_result fail two_subgroups_sg7
	fi
else
	ktap_result skip two_subgroups_sg7 "not a member of subgroup 7"
fi
barrier subgroups_done
ktap_check "spindlectl_down" build/bin/spindlectl down $G

# As many subgroups as a group may have, every member sending in each:
# each connection's key exchange covers a region per subgroup both ways.
G32=32
CFG32=$LOGDIR/max_subgroups.conf
set --
for s in $(seq 0 31); do
	set -- "$@" "subgroup $s members all senders all window 2 max_msg 64 mode ordered"
done
gen_config "$CFG32" $G32 "$(bw_port 32)" "$@"
ktap_check "max_subgroups_up" build/bin/spindlectl up "$CFG32"
bw_run max_subgroups_sg31 --config "$CFG32" --subgroup 31 --messages 50 --size 64 --stall 60
barrier max_subgroups_done
ktap_check "max_subgroups_down" build/bin/spindlectl down $G32
spindle_unload
ktap_finish
