# SPDX-License-Identifier: GPL-2.0
# Check one node's delivery log ("seq rank index len crc32c" per line):
#   awk -v mode=ordered|unordered -v nsenders=N -v per=M -v len=L -f checklog.awk LOG
# every sender's messages in FIFO order (index strictly increasing), exactly
# per of them, each of len bytes; in ordered mode also seq strictly
# increasing and seq == index * nsenders + rank (the round-robin rule).
# Prints what is wrong (at most 10 lines) and exits 1.
function bad(msg) {
	if (nbad++ < 10)
		print "checklog: " FILENAME ":" FNR ": " msg
}
NF != 5 { bad("malformed line: " $0); next }
{
	seq = $1 + 0; rank = $2 + 0; idx = $3 + 0
	if (rank < 0 || rank >= nsenders) { bad("rank " rank " out of range"); next }
	if (len != "" && $4 + 0 != len + 0) bad("length " $4 ", expected " len)
	if (mode == "ordered") {
		if (NR > 1 && seq <= lastseq) bad("seq " seq " after " lastseq)
		if (seq != idx * nsenders + rank) bad("seq " seq " is not index " idx " * " nsenders " + rank " rank)
		lastseq = seq
	}
	if ((rank in last) && idx <= last[rank]) bad("rank " rank ": index " idx " after " last[rank])
	last[rank] = idx
	cnt[rank]++
}
END {
	for (r = 0; r < nsenders; r++)
		if (cnt[r] + 0 != per + 0)
			bad("rank " r ": " cnt[r] + 0 " messages, expected " per)
	exit nbad ? 1 : 0
}
