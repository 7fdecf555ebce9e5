cd /workspace/data
find . -type f -size +51200c -printf '%P\n' | LC_ALL=C sort > ../large_files.txt
