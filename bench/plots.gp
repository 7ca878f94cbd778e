# SPDX-License-Identifier: GPL-2.0
# Plots of a benchmark run; scripts/bench runs this in build/bench after
# bench/summarize wrote the .dat files.  See bench/README.md.
set terminal pngcairo size 900,560 font ",11" noenhanced
set datafile missing "NaN"
set key outside right
set grid
# points(F): how many numbers F has past its first column; a run of a few
# steps (scripts/bench --steps) leaves some files all NaN, and a plot of
# those would end the script before the plots that have data
points(f) = system(sprintf("awk '!/^#/ { for (i = 2; i <= NF; i++) if ($i != \"NaN\") n++ } END { print n + 0 }' %s", f)) + 0

set xlabel "guests"
set xtics 1
if (points("bw_nodes.dat") > 0) {
	set output "bandwidth_vs_nodes.png"
	set title "Delivered bandwidth per guest, 10 KB messages, window 100 (ordered)"
	set ylabel "MB/s"
	plot "bw_nodes.dat" u 1:2 w lp lw 2 t "spindle, all send", \
	     "" u 1:3 w lp lw 2 t "spindle, half send", \
	     "" u 1:4 w lp lw 2 t "spindle, one sends", \
	     "" u 1:5 w lp dt 2 t "baseline, all send", \
	     "" u 1:6 w lp dt 2 t "baseline, half send", \
	     "" u 1:7 w lp dt 2 t "baseline, one sends", \
	     "" u 1:8 w lp lw 3 lc rgb "black" t "ib_write_bw 10 KB (one pair)"
}

if (points("msgs_nodes.dat") > 0) {
	set output "messages_vs_nodes.png"
	set title "Messages delivered per second per guest, all senders, window 100 (ordered)"
	set ylabel "messages/s"
	set logscale y
	plot "msgs_nodes.dat" u 1:2 w lp lw 2 t "spindle, 1 B", \
	     "" u 1:3 w lp dt 2 t "baseline, 1 B", \
	     "" u 1:4 w lp lw 2 t "spindle, 10 KB", \
	     "" u 1:5 w lp dt 2 t "baseline, 10 KB"
}
unset logscale y

if (points("ratio.dat") > 0) {
	set output "spindle_vs_baseline.png"
	set title "Spindle / baseline throughput, all senders, window 100"
	set ylabel "ratio (messages/s)"
	plot "ratio.dat" u 1:2 w lp lw 2 t "1 B", "" u 1:3 w lp lw 2 t "128 B", \
	     "" u 1:4 w lp lw 2 t "1 KB", "" u 1:5 w lp lw 2 t "10 KB", \
	     10 w l dt 3 lc rgb "black" t "target 10x"
}

if (points("lat.dat") > 0) {
	set output "latency.png"
	set title "Latency, one sender, one 64 B message in flight"
	set ylabel "µs"
	set logscale y
	plot "lat.dat" u 1:2 w lp lw 2 t "spindle median (send to own delivery)", \
	     "" u 1:3 w lp dt 2 t "spindle p90", \
	     "" u 1:5 w lp lw 2 t "baseline median", \
	     "" u 1:4 w lp lw 3 lc rgb "black" t "ib_write_lat typical (one way, polled)", \
	     "" u 1:($4*3) w l dt 3 lc rgb "black" t "target: 3x ib_write_lat", \
	     "" u 1:($6*2) w lp dt 4 lw 2 lc rgb "gray40" t "2x ib_send_lat -e, guest 0 to all at once"
	unset logscale y
}

if (points("window.dat") > 0) {
	set output "window.png"
	set title "Window size (all senders)"
	set xlabel "window (slots per sender)"
	set logscale x
	set xtics (16, 100, 500)
	set ylabel "MB/s (10 KB)"
	set y2label "messages/s (1 B)"
	set y2tics
	plot "window.dat" u 1:3 w lp lw 2 t "spindle 10 KB (MB/s)", \
	     "" u 1:4 w lp dt 2 t "baseline 10 KB (MB/s)", \
	     "" u 1:2 axes x1y2 w lp lw 2 t "spindle 1 B (messages/s)"
}
unset logscale x
unset y2tics
unset y2label

if (points("hist.dat") == 0) exit
set output "batch_sizes.png"
set title "Batch sizes, 10 KB, all senders, window 100 (guest 0)"
set xlabel "batch size (power-of-two bucket)"
set ylabel "batches"
set logscale x 2
set xtics auto
set style fill solid 0.6
set boxwidth 0.25 relative
plot "hist.dat" u ($1*0.85):2 w boxes t "send", \
     "" u 1:3 w boxes t "receive", \
     "" u ($1*1.17):4 w boxes t "delivery"
