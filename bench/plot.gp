# Plots for docs/PERFORMANCE.md; run by bench/run.sh:
#   gnuplot -e "resdir='bench/results'; imgdir='docs/img'" bench/plot.gp
if (!exists("resdir")) resdir = 'bench/results'
if (!exists("imgdir")) imgdir = 'docs/img'
set terminal pngcairo size 900,540 noenhanced font ",10"
set grid
set key outside right

# read scaling: rows with readers < 1000 are idle, >= 1000 with an updater
set output imgdir.'/read.png'
set title 'read side: reader CPU ns per read-side section (idle: solid, with updater: dashed)'
set xlabel 'readers'
set ylabel 'ns per section'
set logscale y
set xtics 1
names = 'orcu-memb orcu-qsbr urcu-memb urcu-qsbr ck_epoch rwlock unsync'
plot for [i=2:8] resdir.'/read.dat' using ($1 < 1000 ? $1 : 1/0):i with linespoints lw 2 lc i-1 title word(names, i-1), \
     for [i=2:8] resdir.'/read.dat' using ($1 >= 1000 ? $1 - 1000 : 1/0):i with linespoints dt 2 lc i-1 notitle
unset logscale y

# latency distributions (CDF)
set output imgdir.'/latency.png'
set title 'post-to-invoke latency at one post per 100 us (CDF)'
set xlabel 'latency (us, log scale)'
set ylabel 'fraction of callbacks'
set logscale x
set xtics auto
plot resdir.'/latency_orcu.dat' using 1:2 with lines lw 2 title 'orcu', \
     resdir.'/latency_urcu.dat' using 1:2 with lines lw 2 title 'liburcu call_rcu'
unset logscale x

# wake-ups vs slots
set output imgdir.'/scale.png'
set title 'GP-thread wake-ups per grace period and GP-thread CPU vs slots'
set xlabel 'slots (possible = online, all offloaded)'
set ylabel 'wake-ups per GP'
set y2label 'GP-thread CPU (% of one CPU)'
set logscale x 2
set ytics nomirror
set y2tics
plot resdir.'/scale.dat' using 1:2 with linespoints lw 2 title 'wake-ups/GP, default stride', \
     resdir.'/scale.dat' using 1:3 with linespoints lw 2 title 'wake-ups/GP, stride 1', \
     resdir.'/scale.dat' using 1:4 with linespoints dt 2 title 'groups with work (default)', \
     resdir.'/scale.dat' using 1:5 axes x1y2 with linespoints lw 2 title 'GP CPU %, default', \
     resdir.'/scale.dat' using 1:6 axes x1y2 with linespoints lw 2 title 'GP CPU %, stride 1'
