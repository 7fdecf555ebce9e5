cd /workspace
awk '{print $1}' access.log | sort | uniq -c | awk '{print $1, $2}' | sort -k1,1nr -k2,2 | head -5 > top_ips.txt
