cd /workspace/downloads
mkdir -p quarantine
sha256sum -c SHA256SUMS 2>/dev/null | sed -n 's/: FAILED$//p' | sort > ../corrupted.txt
while IFS= read -r f; do mv -- "$f" quarantine/; done < ../corrupted.txt
