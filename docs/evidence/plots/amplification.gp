# docs/evidence/amplification.svg from amplification.dat (scripts/evidence.sh amplification)
set terminal svg size 960,420 font "DejaVu Sans,11" background "white"
set output "docs/evidence/amplification.svg"
set multiplot layout 1,2 title "10 requests/s for 5 min against one deployment answering 529"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set grid ytics
set xtics rotate by -30 scale 0
set key top right
set ylabel "upstream calls per client request"
set logscale y
set yrange [0.001:1000]
plot "docs/evidence/amplification.dat" using 2:xtic(1) title "full outage", \
     "" using 3 title "50 % brown-out"
unset logscale y
set yrange [0:105]
set ylabel "requests answered (%)"
plot "docs/evidence/amplification.dat" using 4:xtic(1) title "full outage", \
     "" using 5 title "50 % brown-out"
unset multiplot
