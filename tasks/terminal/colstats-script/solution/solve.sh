cd /workspace
cat > colstats.sh <<'SH'
#!/usr/bin/env bash
# Usage: colstats.sh FILE COLUMN — min, max and mean of a CSV column.
set -euo pipefail
file=$1 col=$2
awk -F, -v col="$col" '
NR == 1 { for (i = 1; i <= NF; i++) if ($i == col) c = i; if (!c) { print "no column " col > "/dev/stderr"; bad = 1; exit 2 } next }
/^[[:space:]]*$/ { next }
{ v = $c + 0; if (n == 0 || v < mn) mn = v; if (n == 0 || v > mx) mx = v; s += v; n++ }
END { if (bad) exit 2; printf "min=%.2f max=%.2f mean=%.2f\n", mn, mx, s / n }' "$file"
SH
chmod +x colstats.sh
bash colstats.sh sample.csv temp_c
