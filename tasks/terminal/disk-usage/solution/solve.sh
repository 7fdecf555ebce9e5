cd /workspace/projects
for d in */; do
  d=${d%/}
  printf '%s\t%s\n' "$(find "$d" -type f -printf '%s\n' | awk '{s += $1} END {print s + 0}')" "$d"
done | sort -t$'\t' -k1,1nr -k2,2 > ../usage.tsv
