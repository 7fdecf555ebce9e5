cd /workspace
awk '$3 == "ERROR"' logs/app.log | wc -l > error_count.txt
