cd /workspace
mkdir -p backup
tar --exclude='*.tmp' -czf backup/site.tar.gz site
