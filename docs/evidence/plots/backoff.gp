# docs/evidence/backoff.svg from backoff.csv (scripts/evidence.sh backoff)
set terminal svg size 960,420 font "DejaVu Sans,11" background "white"
set output "docs/evidence/backoff.svg"
set datafile separator ","
set multiplot layout 1,2 title "N clients, one optimistic-concurrency write each (mean of 100 runs)"
set key top left
set grid
set xlabel "clients"
set ylabel "write attempts (all clients)"
plot for [s in "none exponential full equal decorrelated"] "docs/evidence/backoff.csv" \
     using 2:(strcol(1) eq s ? $3 : NaN) with linespoints title s
set ylabel "time until all are done (s)"
set logscale y
plot for [s in "none exponential full equal decorrelated"] "docs/evidence/backoff.csv" \
     using 2:(strcol(1) eq s ? $5 / 1000 : NaN) with linespoints title s
unset multiplot
