# docs/evidence/slow.svg from slow.dat (scripts/evidence.sh slow)
set terminal svg size 1380,420 font "DejaVu Sans,11" background "white"
set output "docs/evidence/slow.svg"
set multiplot layout 1,3 title "A primary that hangs or stalls its first token, a 10 % tail of 4 s, every provider 15 s slower (10 of 20 min, 5 requests/s)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set grid ytics
set xtics rotate by -30 scale 0
set key bottom right
set ylabel "requests answered (%)"
set yrange [0:105]
plot "docs/evidence/slow.dat" using 2:xtic(1) title "hang", \
     "" using 5 title "stall", \
     "" using 8 title "tail", \
     "" using 11 title "slowdown"
set key top right
set ylabel "upstream calls per client request"
set yrange [0:*]
plot "docs/evidence/slow.dat" using 3:xtic(1) title "hang", \
     "" using 6 title "stall", \
     "" using 9 title "tail", \
     "" using 12 title "slowdown"
set ylabel "p99 of the answered requests (s, log scale)"
set logscale y
set yrange [1:1000]
plot "docs/evidence/slow.dat" using 4:xtic(1) title "hang", \
     "" using 7 title "stall", \
     "" using 10 title "tail", \
     "" using 13 title "slowdown"
unset multiplot
