cd /workspace
cat > wordfreq.sh <<'SH'
#!/usr/bin/env bash
# Usage: wordfreq.sh N < text — the N most frequent words.
set -eu
tr -cs 'A-Za-z' '\n' | tr 'A-Z' 'a-z' | grep -v '^$' | LC_ALL=C sort | uniq -c \
  | awk '{print $1, $2}' | LC_ALL=C sort -k1,1nr -k2,2 | head -n "$1"
SH
chmod +x wordfreq.sh
bash wordfreq.sh 3 < sample.txt
