cd /workspace
cat > rotate.sh <<'SH'
#!/usr/bin/env bash
# Usage: rotate.sh DIR KEEP — keep the KEEP newest backup-YYYYMMDD.tar.gz files in DIR.
set -euo pipefail
dir=$1 keep=$2
find "$dir" -maxdepth 1 -type f -regextype posix-extended -regex '.*/backup-[0-9]{8}\.tar\.gz' -printf '%f\n' \
  | sort -r | tail -n +"$((keep + 1))" | while IFS= read -r name; do rm -f -- "$dir/$name"; done
SH
chmod +x rotate.sh
bash rotate.sh backups 3
