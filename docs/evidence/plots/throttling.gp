# docs/evidence/throttling.svg from throttling.dat (scripts/evidence.sh throttling)
set terminal svg size 960,420 font "DejaVu Sans,11" background "white"
set output "docs/evidence/throttling.svg"
set multiplot layout 1,2 title "A 60 RPM token-bucket provider, interactive traffic and two batch bursts of 150"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set grid ytics
set xtics rotate by -20 scale 0
set key top right
set ylabel "requests"
set yrange [0:*]
plot "docs/evidence/throttling.dat" using 2:xtic(1) title "upstream 429s", \
     "" using 3 title "answered", "" using 4 title "shed by the gateway"
set ylabel "interactive: answered (%)"
set y2label "interactive: median latency (s)"
set yrange [0:105]
set y2range [0:*]
set y2tics
plot "docs/evidence/throttling.dat" using 5:xtic(1) title "answered (%)", \
     "" using 6 axes x1y2 title "median latency (s)"
unset multiplot
