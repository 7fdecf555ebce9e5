cd /workspace
mkdir -p by_region
awk -F, 'NR == 1 { hdr = $0; next } { f = "by_region/" $2 ".csv"; if (!(f in seen)) { print hdr > f; seen[f] = 1 } print >> f }' sales.csv
