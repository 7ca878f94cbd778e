#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The smoke suite's stream (scripts/check runs it on the lanes that do not
# run the whole guest suite): one ordered stream from every guest, 1 KB
# messages through the producer page, and one unordered stream with SEND
# system calls.  Every payload is checked against its sender's pattern,
# each log obeys FIFO per sender and (ordered) the round-robin rule, and
# scripts/check compares the logs of all guests.  mc_stream.sh is the
# full version of this, run by the cluster suite.
. selftests/lib/ktap.sh
. selftests/lib/spindle.sh
. selftests/lib/bw.sh

spindle_load || exit 1
ktap_plan 2
bw_run smoke_ordered_all_1k_w100 --group 91 --port "$(bw_port 91)" --senders all \
	--messages "$(bw_messages 1500)" --size 1024 --window 100 --stall 60
bw_run smoke_unordered_all_1k_w16 --group 92 --port "$(bw_port 92)" --mode unordered \
	--senders all --messages "$(bw_messages 1000)" --size 1024 --window 16 \
	--no-producer --stall 60
spindle_unload
ktap_finish
