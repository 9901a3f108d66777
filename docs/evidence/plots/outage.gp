# docs/evidence/outage.svg from outage-timeline.csv (scripts/evidence.sh outage)
set terminal svg size 960,560 font "DejaVu Sans,11" background "white"
set output "docs/evidence/outage.svg"
set datafile separator ","
set multiplot layout 2,1 title "One hour, the primary answers 529 from minute 20 to 30 (30 s buckets)"
set grid
set key bottom left
set xrange [0:60]
set ylabel "requests answered (%)"
set yrange [0:105]
variants = "sdk-direct no-fallback fallback-no-health fallback fallback-correlated"
plot for [v in variants] "docs/evidence/outage-timeline.csv" \
     using ($3 / 60):(strcol(1) eq v ? $6 : NaN) with lines lw 2 title v
set ylabel "upstream calls per second"
set yrange [0:*]
set xlabel "minute"
set key top left
plot for [v in variants] "docs/evidence/outage-timeline.csv" \
     using ($3 / 60):(strcol(1) eq v ? $7 / 30 : NaN) with lines lw 2 title v
unset multiplot
